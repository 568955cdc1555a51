package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
)

// Network fault kinds, in the spec's schedule form.
const (
	KindPartition = "partition" // groups (or side) until
	KindClog      = "clog"      // from/to or node+dir, mode, delay, until
	KindNetReset  = "net_reset" // node; until == at
	KindUDPDrop   = "udp_drop"  // node (sender), to, op (datagram number)
	KindUDPDup    = "udp_dup"   // node (sender), to, op
)

// netFields are the world fields this family honours.
var netFields = []string{
	"partition_per_sec", "partition_for", "partition_topologies",
	"clog_per_sec", "clog_for", "clog_modes", "clog_delay",
	"swizzle_per_sec", "reset_per_sec", "udp_loss", "udp_dup",
}

func init() {
	register(familyDef{name: "net", open: openNet})
	faults.Register(faults.KindInfo{Name: KindPartition, Lasts: true, NoNode: true})
	faults.Register(faults.KindInfo{Name: KindClog, Lasts: true, NoNode: true})
	faults.Register(faults.KindInfo{Name: KindNetReset})
	faults.Register(faults.KindInfo{Name: KindUDPDrop, AtOp: true})
	faults.Register(faults.KindInfo{Name: KindUDPDup, AtOp: true})
	for _, f := range netFields {
		Implemented["faults."+f] = true
	}
}

// netFamily is the network family's state for one run.
type netFamily struct {
	*env
	partition int // number of the partition in force, 0 for none
	// udp holds a replay's datagram faults by sender and datagram number.
	udp map[udpKey]string
}

type udpKey struct {
	node string
	op   uint64
}

// openNet refuses network faults without the simulated network, keeps the
// network faults off the hosts that must not take them, and installs the
// datagram hook.
func openNet(e *env) (family, error) {
	nf := &netFamily{env: e}
	fam := family{process: nf.process, plan: nf.plan, apply: nf.apply}
	f := &e.w.Faults
	if e.net == nil {
		for _, set := range []struct {
			name string
			on   bool
		}{
			{"partition_per_sec", f.PartitionPerSec > 0}, {"clog_per_sec", f.ClogPerSec > 0},
			{"swizzle_per_sec", f.SwizzlePerSec > 0}, {"reset_per_sec", f.ResetPerSec > 0},
			{"udp_loss", f.UDPLoss > 0}, {"udp_dup", f.UDPDup > 0},
		} {
			if set.on {
				return fam, e.w.Errorf("faults."+set.name, "network faults act on the simulated network: set \"net_overlay\": true, or remove %s", set.name)
			}
		}
		return fam, nil
	}
	switch {
	case f.PartitionPerSec > 0 && len(f.PartitionTopologies) == 0:
		return fam, e.w.Errorf("faults.partition_topologies", "is empty: name at least one shape, such as [\"half\"], or remove partition_per_sec")
	case f.ClogPerSec > 0 && len(f.ClogModes) == 0:
		return fam, e.w.Errorf("faults.clog_modes", "is empty: name at least one mode, such as [\"stop\"], or remove clog_per_sec")
	}
	fam.heal = nf.heal
	if e.given != nil {
		nf.udp = map[udpKey]string{}
		for _, g := range e.given.Faults {
			if g.Kind == KindUDPDrop || g.Kind == KindUDPDup {
				nf.udp[udpKey{g.Node, g.Op}] = g.Kind
			}
		}
	} else if f.UDPLoss <= 0 && f.UDPDup <= 0 {
		return fam, nil
	}
	fam.datagram = nf.udpFate
	return fam, nil
}

// process keeps partitions and clogs off the links of a program that
// must not take them, from its first start on (the hosts exist by then).
func (nf *netFamily) process(n *node, _ *wasi.Process) {
	if nf.net != nil && n.inc == 1 && !nf.w.NetFaults(n.prog.Program) {
		nf.net.SetFaultFree(n.host, true)
	}
}

// udpFate decides whether datagram number seq of host from is lost or
// duplicated: from the schedule in a replay, else from the "udp" stream
// keyed by the kind, the sender and seq, so no other draw moves it.
func (nf *netFamily) udpFate(from, to int, seq uint64) (drop, dup bool) {
	nodes := nf.nodeList()
	sender := nodes[from].prog
	toName := ""
	if to >= 0 {
		toName = nodes[to].prog.Name
	}
	kind := ""
	if nf.given != nil {
		kind = nf.udp[udpKey{sender.Name, seq}]
	} else if nf.faultsActive() && to != from && nf.w.NetFaults(sender.Program) && (to < 0 || nf.w.NetFaults(nodes[to].prog.Program)) {
		// Loopback never loses a datagram, as on Linux.
		loss := rng.ForName(nf.seed, "udp", sender.Name, 1, seq)
		dupS := rng.ForName(nf.seed, "udp", sender.Name, 2, seq)
		switch {
		case nf.w.Faults.UDPLoss > 0 && loss.Float64() < nf.w.Faults.UDPLoss:
			kind = KindUDPDrop
		case nf.w.Faults.UDPDup > 0 && dupS.Float64() < nf.w.Faults.UDPDup:
			kind = KindUDPDup
		}
	}
	if kind == "" {
		return false, false
	}
	nf.record(faults.Fault{At: time.Duration(nf.now()), Kind: kind, Node: sender.Name, To: toName, Op: seq})
	n := nodes[from]
	nf.event(n, fmt.Sprintf("%s datagram #%d to %s", map[string]string{KindUDPDrop: "lose", KindUDPDup: "duplicate"}[kind], seq, cmp.Or(toName, "nowhere")))
	return kind == KindUDPDrop, kind == KindUDPDup
}

// netTargets lists the programs partitions and clogs may cut (world order).
func (nf *netFamily) netTargets() []string {
	var names []string
	for _, n := range nf.nodeList() {
		if nf.w.NetFaults(n.prog.Program) {
			names = append(names, n.prog.Name)
		}
	}
	return names
}

// partitioned lists the programs a partition splits: every node and
// workload, fault-free ones included (the network keeps them whole).
func (nf *netFamily) partitioned() []string {
	var names []string
	for _, n := range nf.nodeList() {
		if n.prog.Role != world.RoleFinally {
			names = append(names, n.prog.Name)
		}
	}
	return names
}

// plan draws every timed network fault from its own stream.
func (nf *netFamily) plan() []faults.Fault {
	if nf.net == nil {
		return nil
	}
	f := &nf.w.Faults
	var out []faults.Fault
	targets := nf.netTargets()

	s := rng.New(nf.seed, "partition", -1)
	hosts := nf.partitioned()
	poisson(&s, f.PartitionPerSec, nf.w.Duration, func(t time.Duration) {
		topo := f.PartitionTopologies[s.Intn(len(f.PartitionTopologies))]
		idx := make([]int, len(hosts))
		for i := range idx {
			idx[i] = i
		}
		groups, err := netsim.Groups(netsim.Topology(topo), idx, s.Intn)
		d := s.Between(f.PartitionFor.Min, f.PartitionFor.Max)
		if err != nil {
			return // the world check refuses such topologies
		}
		out = append(out, partitionFault(t, t+d, hosts, groups))
	})

	s = rng.New(nf.seed, "clog", -1)
	poisson(&s, f.ClogPerSec, nf.w.Duration, func(t time.Duration) {
		c := faults.Fault{At: t, Kind: KindClog}
		c.Until = t + s.Between(f.ClogFor.Min, f.ClogFor.Max)
		c.Mode = string(f.ClogModes[s.Intn(len(f.ClogModes))])
		delay := s.Between(f.ClogDelay.Min, f.ClogDelay.Max) // drawn for every clog: the stream stays aligned
		if c.Mode == string(world.ClogSlow) {
			c.Delay = delay
		}
		shape := s.Intn(4)
		a, b := s.Intn(max(len(targets), 1)), s.Intn(max(len(targets)-1, 1))
		switch {
		case len(targets) == 0, shape == 0 && len(targets) < 2:
			return
		case shape == 0:
			if b >= a {
				b++
			}
			c.From, c.To = targets[a], targets[b]
		default:
			c.Node, c.Dir = targets[a], []string{"in", "out", "both"}[shape-1]
		}
		out = append(out, c)
	})

	s = rng.New(nf.seed, "swizzle", -1)
	poisson(&s, f.SwizzlePerSec, nf.w.Duration, func(t time.Duration) {
		out = append(out, swizzle(&s, t, s.Between(f.ClogFor.Min, f.ClogFor.Max), targets)...)
	})

	for _, n := range nf.nodeList() {
		if !nf.w.NodeFaults(n.prog.Program) {
			continue
		}
		s := rng.ForName(nf.seed, "net_reset", n.prog.Name)
		poisson(&s, f.ResetPerSec, nf.w.Duration, func(t time.Duration) {
			out = append(out, faults.Fault{At: t, Kind: KindNetReset, Node: n.prog.Name, Until: t})
		})
	}
	return out
}

// partitionFault writes a partition in the spec's form: a side when it cuts
// the hosts in two, groups otherwise.
func partitionFault(at, until time.Duration, hosts []string, groups [][]int) faults.Fault {
	f := faults.Fault{At: at, Kind: KindPartition, Until: until}
	named := make([][]string, len(groups))
	covered := 0
	for i, g := range groups {
		for _, h := range g {
			named[i] = append(named[i], hosts[h])
		}
		covered += len(g)
	}
	if len(groups) == 2 && covered == len(hosts) {
		f.Side = named[0]
	} else {
		f.Groups = named
	}
	return f
}

// swizzle is FoundationDB's swizzle-clogging: a random subset of the targets
// is clogged both ways, one node at a time over the first half of length,
// then unclogged one at a time in another random order over the second half.
// Each node's clog is one `both` stop clog of the schedule.
func swizzle(s *rng.Stream, at, length time.Duration, targets []string) []faults.Fault {
	if len(targets) == 0 {
		return nil
	}
	order := slices.Clone(targets)
	for i := len(order) - 1; i > 0; i-- {
		j := s.Intn(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	order = order[:1+s.Intn(len(order))]
	k := len(order)
	step := length / time.Duration(2*k)
	unclog := make([]int, k) // unclog[i]: position of order[i] in the unclogging
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	for i := k - 1; i > 0; i-- {
		j := s.Intn(i + 1)
		perm[i], perm[j] = perm[j], perm[i]
	}
	for pos, i := range perm {
		unclog[i] = pos
	}
	out := make([]faults.Fault, k)
	for i, name := range order {
		out[i] = faults.Fault{At: at + time.Duration(i)*step, Kind: KindClog, Node: name, Dir: "both", Mode: "stop",
			Until: at + length/2 + time.Duration(unclog[i]+1)*step}
	}
	return out
}

// apply puts a planned network fault in force and schedules its end.
func (nf *netFamily) apply(f faults.Fault) bool {
	switch f.Kind {
	case KindPartition, KindClog, KindNetReset:
	default:
		return false
	}
	if nf.net == nil {
		return true
	}
	host := func(name string) int {
		if n := nf.byName(name); n != nil {
			return n.host
		}
		return -1
	}
	switch f.Kind {
	case KindPartition:
		groups := f.Groups
		if len(f.Side) > 0 {
			var rest []string
			for _, h := range nf.partitioned() {
				if !slices.Contains(f.Side, h) {
					rest = append(rest, h)
				}
			}
			groups = [][]string{f.Side, rest}
		}
		var idx [][]int
		for _, g := range groups {
			var hs []int
			for _, name := range g {
				if h := host(name); h >= 0 {
					hs = append(hs, h)
				}
			}
			if len(hs) > 0 {
				idx = append(idx, hs)
			}
		}
		if len(idx) == 0 {
			return true
		}
		nf.record(f)
		nf.partition++
		id := nf.partition
		nf.net.Partition(idx)
		nf.netEvent(fmt.Sprintf("partition %s until %v", groupsText(groups), f.Until))
		nf.at(int64(f.Until), func() {
			if nf.partition == id && !nf.over() {
				nf.partition = 0
				nf.net.HealPartition()
				nf.netEvent("partition heals")
			}
		})
	case KindClog:
		mode, ok := map[string]netsim.ClogMode{"stop": netsim.ClogStop, "jam": netsim.ClogJam, "slow": netsim.ClogSlow}[f.Mode]
		if !ok {
			return true
		}
		var id netsim.ClogID
		var what string
		if f.Node != "" {
			dir, ok := map[string]netsim.Dir{"in": netsim.DirIn, "out": netsim.DirOut, "both": netsim.DirBoth}[f.Dir]
			h := host(f.Node)
			if !ok || h < 0 {
				return true
			}
			id = nf.net.ClogHost(h, dir, mode, int64(f.Delay))
			what = fmt.Sprintf("%s %s", f.Node, f.Dir)
		} else {
			a, b := host(f.From), host(f.To)
			if a < 0 || b < 0 {
				return true
			}
			id = nf.net.ClogLink(a, b, mode, int64(f.Delay))
			what = f.From + " -> " + f.To
		}
		nf.record(f)
		desc := "clog " + what + " " + f.Mode
		if mode == netsim.ClogSlow {
			desc += fmt.Sprintf(" +%v", f.Delay)
		}
		nf.netEvent(fmt.Sprintf("%s until %v", desc, f.Until))
		gen := nf.heals()
		nf.at(int64(f.Until), func() {
			if !nf.over() && nf.heals() == gen {
				nf.net.Unclog(id)
				nf.netEvent("unclog " + desc)
			}
		})
	case KindNetReset:
		n := nf.byName(f.Node)
		if n == nil || !n.up {
			return true
		}
		nf.record(f)
		nf.event(n, "connections reset")
		nf.net.ResetHost(n.host)
	}
	return true
}

// netEvent writes a network-wide event to the trace.
func (nf *netFamily) netEvent(text string) {
	nf.note("net", text)
}

// heal ends every partition and clog at once (sim.QuietFor, liveness's
// recovery phase, the finally check).
func (nf *netFamily) heal(why string) {
	if nf.partition != 0 || nf.net.Clogged() {
		nf.netEvent("network heals " + why)
	}
	nf.partition = 0
	nf.net.HealAll()
}

func groupsText(groups [][]string) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = "[" + strings.Join(g, " ") + "]"
	}
	return strings.Join(parts, " ")
}
