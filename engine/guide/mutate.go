package guide

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// The mutations of a schedule at a moment.
const (
	Rekey  = "rekey"  // re-key every random stream at the moment; the faults stay
	Add    = "add"    // add a fault, taken from a donor run, just after the moment
	Shift  = "shift"  // move the first fault after the moment a little
	Remove = "remove" // remove the first fault after the moment
)

// Ops are the mutations, in the order a search tries them.
var Ops = []string{Rekey, Add, Shift, Remove}

// Window is how far after its moment a mutation puts a fault, and how far
// a shift moves one, at most; MinStep the least. The distance is drawn
// log-uniformly between them, so that a window of tens of microseconds
// (the moment a compaction renames its file) is hit about as often as one
// of tens of milliseconds.
const (
	Window  = 50 * time.Millisecond
	MinStep = 10 * time.Microsecond
)

// step draws a distance between MinStep and Window, log-uniformly.
func step(r *rand.Rand) time.Duration {
	return time.Duration(float64(MinStep) * math.Pow(float64(Window)/float64(MinStep), r.Float64()))
}

// Mutate returns a schedule that is parent's before at and changed from
// there by op, drawing its choices from key: a run under it is parent's
// run until at (faults.Schedule.Keeps), so it can fork from a checkpoint
// of parent's run at or before at. Every mutation also re-keys the random
// streams at at, so that two mutations of one moment differ even when the
// fault they change is the same. Faults that fire at an operation are kept
// as they are: their moment is only where they happened to fire. Add takes
// a fault from donors (the faults other runs of the world had, so every
// fault type the world allows can come), and falls back to a rekey when
// there is none; shift and remove fall back to a rekey when no fault comes
// after at.
func Mutate(parent *faults.Schedule, op string, at time.Duration, key uint64, donors []faults.Fault) (*faults.Schedule, error) {
	if at < 0 || parent.Duration > 0 && at >= parent.Duration {
		return nil, fmt.Errorf("mutate at %v: the moment must be within the run's %v", at, parent.Duration)
	}
	if !slices.Contains(Ops, op) {
		return nil, fmt.Errorf("mutate: no mutation %q; use one of %v", op, Ops)
	}
	r := rand.New(rand.NewPCG(key, uint64(at)))
	s := &faults.Schedule{Seed: parent.Seed, Duration: parent.Duration}
	var after []faults.Fault // timed faults at or after at
	for _, f := range parent.Faults {
		if k, _ := faults.Lookup(f.Kind); f.At < at || k.AtOp {
			s.Faults = append(s.Faults, f)
		} else {
			after = append(after, f)
		}
	}
	for _, b := range parent.Branches {
		if b.At < at {
			s.Branches = append(s.Branches, b)
		}
	}
	s.Branches = append(s.Branches, faults.Branch{At: at, Key: key})
	// The donors' timed faults, by kind and node, in the order first
	// given: a kind and node is drawn first, then one of its faults, so a
	// rare kind (a crash of the primary among partitions) comes as often
	// as a frequent one.
	var groups [][]faults.Fault
	index := map[[2]string]int{}
	for _, f := range donors {
		if k, ok := faults.Lookup(f.Kind); !ok || k.AtOp {
			continue
		}
		g, ok := index[[2]string{f.Kind, f.Node}]
		if !ok {
			g = len(groups)
			index[[2]string{f.Kind, f.Node}] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], f)
	}
	end := parent.Duration
	if end <= 0 {
		end = 1 << 62
	}
	move := func(f faults.Fault, to time.Duration) faults.Fault {
		to = min(max(to, at), end-1)
		if f.Until > 0 {
			f.Until += to - f.At
		}
		f.At = to
		return f
	}
	switch {
	case op == Add && len(groups) > 0:
		g := groups[r.IntN(len(groups))]
		after = append(after, move(g[r.IntN(len(g))], at+step(r)))
	case op == Shift && len(after) > 0:
		d := step(r)
		if r.IntN(2) == 0 {
			d = -d
		}
		after[0] = move(after[0], after[0].At+d)
	case op == Remove && len(after) > 0:
		after = after[1:]
	}
	s.Faults = append(s.Faults, after...)
	slices.SortStableFunc(s.Faults, func(a, b faults.Fault) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
	return s, nil
}
