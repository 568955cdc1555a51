package netsim

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// sees returns, for each host, the sorted hosts it can talk to (itself
// included) under groups, as Network.Partition applies them.
func sees(t *testing.T, hosts int, groups [][]int) [][]int {
	t.Helper()
	w := newWorld(t)
	for range hosts {
		w.n.AddHost("h")
	}
	w.n.Partition(groups)
	out := make([][]int, hosts)
	for a := range hosts {
		for b := range hosts {
			if w.n.Reachable(a, b) {
				out[a] = append(out[a], b)
			}
			if w.n.Reachable(a, b) != w.n.Reachable(b, a) {
				t.Fatalf("partition %v is not symmetric between %d and %d", groups, a, b)
			}
		}
	}
	return out
}

func TestTopologies(t *testing.T) {
	tests := []struct {
		topo  Topology
		check func(n int, groups, seen [][]int) string // "" if fine
	}{
		{TopoHalf, func(n int, groups, seen [][]int) string {
			if len(groups) != 2 || len(groups[0])+len(groups[1]) != n || min(len(groups[0]), len(groups[1])) != n/2 {
				return "want two sides of n/2 and n-n/2"
			}
			return ""
		}},
		{TopoOne, func(n int, groups, seen [][]int) string {
			alone := 0
			for _, s := range seen {
				if len(s) == 1 {
					alone++
				} else if len(s) != n-1 {
					return "a host sees neither itself alone nor all the others"
				}
			}
			if alone != 1 && !(n == 2 && alone == 2) {
				return "want exactly one host alone"
			}
			return ""
		}},
		{TopoMajority, func(n int, groups, seen [][]int) string {
			if len(groups) != 2 || len(groups[0])+len(groups[1]) != n || max(len(groups[0]), len(groups[1])) != n/2+1 {
				return "want a majority of n/2+1 and the rest"
			}
			return ""
		}},
		{TopoMajoritiesRing, func(n int, groups, seen [][]int) string {
			for i, s := range seen {
				if len(s) < n/2+1 || len(s) == n {
					return "a host sees no majority, or everyone"
				}
				for j := range i {
					if slices.Equal(s, seen[j]) {
						return "two hosts see the same majority"
					}
				}
			}
			return ""
		}},
		{TopoRandomGroups, func(n int, groups, seen [][]int) string {
			var all []int
			for _, g := range groups {
				if len(g) == 0 {
					return "an empty group"
				}
				all = append(all, g...)
			}
			slices.Sort(all)
			if len(groups) < 2 || len(all) != n || len(slices.Compact(all)) != n {
				return "want two or more disjoint groups covering every host"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.topo), func(t *testing.T) {
			min, _ := MinHosts(tt.topo)
			shapes := map[string]bool{}
			for n := min; n <= 7; n++ {
				r := rand.New(rand.NewPCG(uint64(n), 1))
				hosts := make([]int, n)
				for i := range hosts {
					hosts[i] = i
				}
				for range 50 {
					groups, err := Groups(tt.topo, hosts, r.IntN)
					if err != nil {
						t.Fatal(err)
					}
					seen := sees(t, n, groups)
					if msg := tt.check(n, groups, seen); msg != "" {
						t.Fatalf("%d hosts: groups %v: %s", n, groups, msg)
					}
					if n == 5 {
						shapes[fmtGroups(groups)] = true
					}
				}
			}
			if len(shapes) < 2 {
				t.Errorf("50 draws over 5 hosts gave one shape: the draws do not reach the topology")
			}
		})
	}
}

func fmtGroups(g [][]int) string {
	var b strings.Builder
	for _, x := range g {
		for _, h := range x {
			b.WriteByte(byte('0' + h))
		}
		b.WriteByte('|')
	}
	return b.String()
}

func TestTopologyMinimumSizes(t *testing.T) {
	tests := []struct {
		topo  Topology
		hosts int
		want  string // "" for no error
	}{
		{TopoMajority, 2, `partition topology "majority" needs at least 3 nodes, workload included, and the world has 2`},
		{TopoMajority, 3, ""},
		{TopoMajoritiesRing, 3, `"majorities_ring" needs at least 4 nodes`},
		{TopoMajoritiesRing, 4, ""},
		{TopoHalf, 1, `"half" needs at least 2 nodes`},
		{"star", 5, `unknown partition topology "star"`},
	}
	for _, tt := range tests {
		err := CheckTopology(tt.topo, tt.hosts)
		_, gerr := Groups(tt.topo, make([]int, tt.hosts), func(int) int { return 0 })
		switch {
		case tt.want == "" && (err != nil || gerr != nil):
			t.Errorf("%s with %d hosts: %v / %v", tt.topo, tt.hosts, err, gerr)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || gerr == nil):
			t.Errorf("%s with %d hosts: error %v, want %q", tt.topo, tt.hosts, err, tt.want)
		}
	}
}

// The spec's example: a ring of four, each seeing its two neighbours.
func TestMajoritiesRingOfFour(t *testing.T) {
	groups, err := Groups(TopoMajoritiesRing, []int{0, 1, 2, 3}, func(int) int { return 0 })
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 4 {
		t.Fatalf("groups %v, want four pairs", groups)
	}
	for _, g := range groups {
		if len(g) != 2 {
			t.Fatalf("groups %v, want four pairs", groups)
		}
	}
	for h, s := range sees(t, 4, groups) {
		if len(s) != 3 || !slices.Contains(s, h) {
			t.Errorf("host %d sees %v, want itself and its two neighbours", h, s)
		}
	}
}
