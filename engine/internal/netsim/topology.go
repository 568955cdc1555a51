package netsim

import (
	"fmt"
	"slices"
)

// Topology is a shape a partition can take (Jepsen's nemeses).
type Topology string

const (
	TopoHalf           Topology = "half"            // two random sides, as equal as can be
	TopoOne            Topology = "one"             // one random host alone
	TopoMajority       Topology = "majority"        // a random majority against the rest
	TopoMajoritiesRing Topology = "majorities_ring" // every host sees a majority, no two the same
	TopoRandomGroups   Topology = "random_groups"   // two or more random groups
)

// Topologies lists every topology, in the spec's order.
var Topologies = []Topology{TopoHalf, TopoOne, TopoMajority, TopoMajoritiesRing, TopoRandomGroups}

// MinHosts returns how many hosts a topology needs to cut anything, and
// false for an unknown topology.
func MinHosts(t Topology) (int, bool) {
	switch t {
	case TopoHalf, TopoOne, TopoRandomGroups:
		return 2, true
	case TopoMajority:
		return 3, true
	case TopoMajoritiesRing:
		return 4, true
	}
	return 0, false
}

// CheckTopology reports whether a world of hosts hosts (workload included)
// can take partitions of shape t, in words for the user.
func CheckTopology(t Topology, hosts int) error {
	min, ok := MinHosts(t)
	if !ok {
		return fmt.Errorf("unknown partition topology %q: use one of half, one, majority, majorities_ring, random_groups", t)
	}
	if hosts < min {
		return fmt.Errorf("partition topology %q needs at least %d nodes, workload included, and the world has %d: add nodes or remove %q from partition_topologies", t, min, hosts, t)
	}
	return nil
}

// Groups builds one partition of shape t over hosts, drawing with draw,
// which returns a uniform integer in [0, n). The result is in canonical form
// (each group sorted, groups sorted by their first host) and is meant for
// Network.Partition. It fails like CheckTopology.
//
// majorities_ring lays the hosts on a random ring; each host sees the k
// hosts on either side, with k the least that makes 2k+1 a majority, and the
// groups are the windows of k+1 neighbours: two hosts share a group exactly
// when they are at most k apart on the ring.
func Groups(t Topology, hosts []int, draw func(n int) int) ([][]int, error) {
	if err := CheckTopology(t, len(hosts)); err != nil {
		return nil, err
	}
	h := slices.Clone(hosts)
	shuffle(h, draw)
	n := len(h)
	var groups [][]int
	switch t {
	case TopoHalf:
		groups = [][]int{h[:n/2], h[n/2:]}
	case TopoOne:
		groups = [][]int{h[:1], h[1:]}
	case TopoMajority:
		groups = [][]int{h[:n/2+1], h[n/2+1:]}
	case TopoMajoritiesRing:
		m := n/2 + 1
		k := m / 2 // 2k+1 >= m
		for i := range n {
			g := make([]int, 0, k+1)
			for j := range k + 1 {
				g = append(g, h[(i+j)%n])
			}
			groups = append(groups, g)
		}
	case TopoRandomGroups:
		g := 2 + draw(n-1) // 2..n groups
		groups = make([][]int, g)
		for i, x := range h {
			j := i
			if i >= g {
				j = draw(g)
			}
			groups[j] = append(groups[j], x)
		}
	}
	return canonical(groups), nil
}

func shuffle(h []int, draw func(n int) int) {
	for i := len(h) - 1; i > 0; i-- {
		j := draw(i + 1)
		h[i], h[j] = h[j], h[i]
	}
}

func canonical(groups [][]int) [][]int {
	out := make([][]int, len(groups))
	for i, g := range groups {
		out[i] = slices.Sorted(slices.Values(g))
	}
	slices.SortFunc(out, func(a, b []int) int { return slices.Compare(a, b) })
	return out
}
