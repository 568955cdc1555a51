package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Node fault kinds, in the spec's schedule form.
const (
	KindPause     = "pause"      // node until: the node does not run
	KindSlow      = "slow"       // node factor until: its waits and messages take factor times as long
	KindClockSkew = "clock_skew" // node delay (signed), at 0: its wall clock is offset by delay
	KindClockJump = "clock_jump" // node delay (signed): its wall clock moves by delay
)

// nodeFields are the world fields this family honours.
var nodeFields = []string{
	"pause_per_sec", "pause_for",
	"slow_per_sec", "slow_for", "slow_factor",
	"clock_skew", "clock_jump_per_sec", "clock_jump_max",
}

func init() {
	register(familyDef{name: "node", open: openNode})
	faults.Register(faults.KindInfo{Name: KindPause, Lasts: true})
	faults.Register(faults.KindInfo{Name: KindSlow, Lasts: true, Factor: true})
	faults.Register(faults.KindInfo{Name: KindClockSkew})
	faults.Register(faults.KindInfo{Name: KindClockJump})
	for _, f := range nodeFields {
		Implemented["faults."+f] = true
	}
}

// nodeFamily is the node family's state for one run, by host index. It
// outlives incarnations: a node that restarts keeps its clock and its
// slowdown, as a machine does when only its process restarts.
type nodeFamily struct {
	*env
	slow      []float64       // slowdown factor in force, 1 when none
	slowUntil []time.Duration // end of the slowdown in force
	wall      []int64         // wall-clock offset in ns (skew plus jumps)
}

// stretch scales a delay on host h by its slowdown factor.
func (nr *nodeFamily) stretch(h int, d int64) int64 {
	if f := nr.slow[h]; f > 1 {
		return int64(float64(d) * f)
	}
	return d
}

// clock is host h's slowdown factor and wall clock offset (State).
func (nr *nodeFamily) clock(h int) (slow float64, wall int64) { return nr.slow[h], nr.wall[h] }

func openNode(e *env) (family, error) {
	n := e.hosts
	nr := &nodeFamily{env: e, slow: make([]float64, n), slowUntil: make([]time.Duration, n), wall: make([]int64, n)}
	for i := range nr.slow {
		nr.slow[i] = 1
	}
	return family{process: nr.process, plan: nr.plan, apply: nr.apply, heal: nr.heal, clocks: nr}, nil
}

// process gives each incarnation its node's wall clock and slowdown;
// a slow node's fsyncs (disk_latency) take longer too.
func (nr *nodeFamily) process(n *node, p *wasi.Process) {
	h := n.host
	p.WallOffset = func() int64 { return nr.wall[h] }
	p.Slow = func() float64 { return nr.slow[h] }
	if sync := p.SyncDelay; sync != nil {
		p.SyncDelay = func() int64 { return nr.stretch(h, sync()) }
	}
}

// plan draws each eligible program's pauses, slowdowns, clock skew and
// clock jumps, each from a stream of its own keyed by the program's name,
// so adding a node or another fault kind moves none of them.
func (nr *nodeFamily) plan() []faults.Fault {
	f := &nr.w.Faults
	var out []faults.Fault
	for _, n := range nr.nodeList() {
		if !nr.w.NodeFaults(n.prog.Program) {
			continue
		}
		name := n.prog.Name
		if f.ClockSkew > 0 {
			s := rng.ForName(nr.seed, KindClockSkew, name)
			// Whole milliseconds read well in a schedule; truncation keeps
			// the offset inside [-skew, +skew].
			off := (s.Between(0, 2*f.ClockSkew) - f.ClockSkew).Truncate(time.Millisecond)
			if off != 0 {
				out = append(out, faults.Fault{At: 0, Kind: KindClockSkew, Node: name, Delay: off})
			}
		}
		s := rng.ForName(nr.seed, KindPause, name)
		spells(&s, f.PausePerSec, f.PauseFor.Min, f.PauseFor.Max, nr.w.Duration, func(at, until time.Duration) {
			out = append(out, faults.Fault{At: at, Kind: KindPause, Node: name, Until: until})
		})
		s = rng.ForName(nr.seed, KindSlow, name)
		spells(&s, f.SlowPerSec, f.SlowFor.Min, f.SlowFor.Max, nr.w.Duration, func(at, until time.Duration) {
			factor := 1 + s.Float64()*(max(f.SlowFactor, 1)-1)
			factor = math.Round(factor*100) / 100 // reads well in a schedule, replays exactly
			out = append(out, faults.Fault{At: at, Kind: KindSlow, Node: name, Factor: factor, Until: until})
		})
		s = rng.ForName(nr.seed, KindClockJump, name)
		poisson(&s, f.ClockJumpPerSec, nr.w.Duration, func(t time.Duration) {
			d := s.Between(0, f.ClockJumpMax).Truncate(time.Millisecond)
			if s.Intn(2) == 0 {
				d = -d
			}
			if d != 0 {
				out = append(out, faults.Fault{At: t, Kind: KindClockJump, Node: name, Delay: d})
			}
		})
	}
	return out
}

// spells draws non-overlapping spells of a Poisson process: each starts an
// exponential wait after the previous one ended and lasts [lo, hi].
func spells(s *rng.Stream, perSec float64, lo, hi, horizon time.Duration, at func(at, until time.Duration)) {
	if perSec <= 0 {
		return
	}
	for t := s.Exp(perSec); t < horizon; t += s.Exp(perSec) {
		d := s.Between(lo, hi)
		at(t, t+d)
		t += d
	}
}

// apply starts a pause, a slowdown or a clock change on a node.
func (nr *nodeFamily) apply(f faults.Fault) bool {
	switch f.Kind {
	case KindPause, KindSlow, KindClockSkew, KindClockJump:
	default:
		return false
	}
	n := nr.byName(f.Node)
	if n == nil {
		return true
	}
	h := n.host
	switch f.Kind {
	case KindPause:
		if !n.up {
			return true // nothing runs to pause
		}
		nr.record(f)
		n.proc.Hold(int64(f.Until))
		nr.event(n, fmt.Sprintf("pause until %v", f.Until))
		proc, gen := n.proc, nr.heals()
		nr.at(int64(f.Until), func() {
			if n.proc == proc && n.up && !nr.over() && nr.heals() == gen {
				nr.event(n, "resume")
			}
		})
	case KindSlow:
		factor := max(f.Factor, 1)
		nr.record(f)
		nr.slow[h], nr.slowUntil[h] = factor, f.Until
		nr.event(n, fmt.Sprintf("slow x%v until %v", factor, f.Until))
		nr.at(int64(f.Until), func() {
			if nr.slowUntil[h] == f.Until && nr.slow[h] != 1 {
				nr.slow[h] = 1
				nr.event(n, "slowdown ends")
			}
		})
	case KindClockSkew:
		nr.record(f)
		nr.wall[h] = int64(f.Delay)
		nr.event(n, fmt.Sprintf("wall clock skewed by %v", f.Delay))
	case KindClockJump:
		nr.record(f)
		nr.wall[h] = addSat(nr.wall[h], int64(f.Delay))
		nr.event(n, fmt.Sprintf("wall clock jumps by %v (offset now %v)", f.Delay, time.Duration(nr.wall[h])))
	}
	return true
}

// addSat adds b to a, saturating at the int64 bounds: a node's wall clock
// offset can grow past 292 years only by jumps given in a schedule, and
// must not wrap round to the other side of the epoch when it does.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// heal ends every pause and slowdown at once. Wall clocks keep their
// offsets, as a machine's clock does once it has jumped; no new jump comes
// while faults are stopped.
func (nr *nodeFamily) heal(why string) {
	for _, n := range nr.nodeList() {
		h := n.host
		if n.up && n.proc != nil && n.proc.Held() {
			n.proc.Hold(0)
			nr.event(n, "pause ends "+why)
		}
		if nr.slow[h] != 1 {
			nr.slow[h] = 1
			nr.event(n, "slowdown ends "+why)
		}
	}
}
