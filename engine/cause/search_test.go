package cause

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// A constructed case: a failing run, and how each of its forks ends.
type constructed struct {
	name string
	kind string
	fail *engine.Result
	opt  Options
	// share is the chance that a fork at a moment fails the same way.
	share func(at time.Duration) float64
	salt  uint64
}

// outcome is how fork key of the moment at ends: a pure function of the
// case, as a real fork is of its seed and schedule.
func (c *constructed) outcome(at time.Duration, key uint64) *engine.Result {
	h := fnv.New64a()
	fmt.Fprint(h, c.salt, at, key)
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	res := &engine.Result{Passed: true, Steps: 1 + r.Uint64N(100)}
	switch u := r.Float64(); {
	case u < c.share(at):
		res.Passed, res.Class = false, c.fail.Class
	case u < c.share(at)+0.1:
		res.Passed, res.Class = false, "other" // fails another way: counts as passing
	}
	return res
}

func (c *constructed) fork(ctx context.Context, at time.Duration, key uint64) (*engine.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.outcome(at, key), nil
}

// reference is the exhaustive search written out plainly: every fork of
// every moment of the scan, the earliest moment from which every later
// one fails, then the interval narrowed at the faults' edges and halved,
// every fork of each moment tried. It returns the interval.
func (c *constructed) reference() (lo, hi time.Duration) {
	o := c.opt
	fails := func(at time.Duration) bool { return c.fullVerdict(at) == Fails }
	end := time.Duration(c.fail.SimNs)
	var verdicts []bool
	for i := 0; i < o.Moments; i++ {
		verdicts = append(verdicts, fails(end*time.Duration(i)/time.Duration(o.Moments)))
	}
	lo, hi = -1, end
	i := o.Moments - 1
	for ; i >= 0 && verdicts[i]; i-- {
		hi = end * time.Duration(i) / time.Duration(o.Moments)
	}
	if i < 0 {
		return lo, hi
	}
	lo = end * time.Duration(i) / time.Duration(o.Moments)
	for {
		var inside []time.Duration
		for _, f := range c.fail.Schedule.Faults {
			for _, at := range []time.Duration{f.At, f.At + 1} {
				if at > lo && at < hi && !slices.Contains(inside, at) {
					inside = append(inside, at)
				}
			}
		}
		if len(inside) == 0 {
			break
		}
		slices.Sort(inside)
		if at := inside[len(inside)/2]; fails(at) {
			hi = at
		} else {
			lo = at
		}
	}
	for r := 0; r < 2*o.Refine+2 && hi-lo > c.halve(); r++ {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi
}

// halve is the width to which the search halves an interval: the scan's
// step over 2^Refine.
func (c *constructed) halve() time.Duration {
	return max(1, time.Duration(c.fail.SimNs)/time.Duration(c.opt.Moments)>>c.opt.Refine)
}

// pureStep reports whether every fork before some moment passes and every
// one from it fails, so that every search must find that moment.
func (c *constructed) pureStep() bool {
	return strings.HasPrefix(c.kind, "step") && c.share(0) == 0 && c.share(time.Duration(c.fail.SimNs)) == 1
}

// fullVerdict is the moment's verdict from all its forks.
func (c *constructed) fullVerdict(at time.Duration) Verdict {
	n := 0
	for b := 0; b < c.opt.Branches; b++ {
		if r := c.outcome(at, uint64(b+1)); !r.Passed && r.Class == c.fail.Class {
			n++
		}
	}
	if float64(n) >= c.opt.Threshold*float64(c.opt.Branches) {
		return Fails
	}
	return Passes
}

// constructedCases are failing runs with faults and events spread over
// them, and forks whose failing share steps up at some moment, stays
// high from the start, never rises, or varies from moment to moment.
func constructedCases() []*constructed {
	r := rand.New(rand.NewPCG(15, 15))
	var cs []*constructed
	for i := 0; i < 400; i++ {
		end := time.Duration(1000 + r.Int64N(int64(5*time.Second)))
		fail := &engine.Result{Class: "workload", SimNs: int64(end), Steps: 50, Schedule: &faults.Schedule{}}
		for k := r.IntN(6); k > 0; k-- {
			at := time.Duration(r.Int64N(int64(end)))
			fail.Schedule.Faults = append(fail.Schedule.Faults, faults.Fault{At: at, Kind: faults.Crash, Node: "server"})
		}
		for k := r.IntN(12); k > 0; k-- {
			kind := trace.Event
			if r.IntN(3) == 0 {
				kind = trace.Stdout
			}
			fail.Lines = append(fail.Lines, trace.Line{At: r.Int64N(int64(end) + 1), Node: "server", Inc: 1, Kind: kind, Text: "x"})
		}
		c := &constructed{fail: fail, salt: r.Uint64(), opt: Options{
			Moments:   []int{2, 3, 5, 8, 16}[r.IntN(5)],
			Branches:  []int{1, 2, 3, 4, 8}[r.IntN(5)],
			Threshold: []float64{0.5, 0.75, 0.9, 1}[r.IntN(4)],
			Refine:    1 + r.IntN(6),
			Parallel:  1 + r.IntN(3),
		}}
		lowShare, highShare := []float64{0, 0.1, 0.5}[r.IntN(3)], []float64{1, 0.95, 0.8}[r.IntN(3)]
		switch kind := r.IntN(4); kind {
		case 0, 1:
			step := time.Duration(r.Int64N(int64(end) + 1))
			c.kind = fmt.Sprintf("step at %v", step)
			c.share = func(at time.Duration) float64 {
				if at >= step {
					return highShare
				}
				return lowShare
			}
		case 2:
			c.kind = "from the start"
			c.share = func(time.Duration) float64 { return highShare }
			if r.IntN(2) == 0 {
				c.kind = "never"
				c.share = func(time.Duration) float64 { return lowShare }
			}
		default:
			c.kind = "varies"
			salt := r.Uint64()
			c.share = func(at time.Duration) float64 {
				return float64((uint64(at)^salt)%5) / 4
			}
		}
		c.name = fmt.Sprintf("%d: %s, %+v", i, c.kind, c.opt)
		cs = append(cs, c)
	}
	return cs
}

// The exhaustive search gives the reference's interval, faults and
// events. The bisecting search gives an interval whose ends all their
// forks decide (the earlier passes, the later fails, or is the failure
// itself), with no moment of the scan or edge of a fault between them,
// narrowed as far as halving goes; where a fork's outcome steps from
// passing to failing at one moment, it is the reference's. Both are the
// same whatever the parallelism.
func TestSearchBisects(t *testing.T) {
	var earlyPass, probes, turned, fromStart, refined, edge, fewer, steps int
	for _, c := range constructedCases() {
		lo, hi := c.reference()
		opt := c.opt
		res, err := explain(context.Background(), c.fail, c.fork, opt)
		if err != nil {
			t.Fatal(err)
		}
		opt.Exhaustive = true
		all, err := explain(context.Background(), c.fail, c.fork, opt)
		if err != nil {
			t.Fatal(err)
		}
		answer := func(lo, hi time.Duration) (fs []faults.Fault, ls []trace.Line) {
			for _, f := range c.fail.Schedule.Faults {
				if f.At >= lo && f.At < hi {
					fs = append(fs, f)
				}
			}
			for _, l := range c.fail.Lines {
				if l.At >= int64(lo) && l.At <= int64(hi) && l.Kind == trace.Event {
					ls = append(ls, l)
				}
			}
			return fs, ls
		}
		wantFaults, wantEvents := answer(lo, hi)
		if all.After != max(lo, 0) || all.Inevitable != hi || !reflect.DeepEqual(all.Faults, wantFaults) || !reflect.DeepEqual(all.Events, wantEvents) {
			t.Fatalf("%s: exhaustive: (%v, %v] with faults %v and events %v; want (%v, %v] with %v and %v",
				c.name, all.After, all.Inevitable, all.Faults, all.Events, max(lo, 0), hi, wantFaults, wantEvents)
		}
		for _, m := range all.Moments {
			if m.Runs != opt.Branches || m.Verdict != c.fullVerdict(m.At) {
				t.Fatalf("%s: exhaustive moment %+v", c.name, m)
			}
		}
		if c.pureStep() && (res.After != all.After || res.Inevitable != all.Inevitable) {
			t.Fatalf("%s: a pure step; bisecting finds (%v, %v], the reference (%v, %v]", c.name, res.After, res.Inevitable, all.After, all.Inevitable)
		}
		if c.pureStep() {
			steps++
		}

		// The bisecting search's ends, and what lies between them.
		end := time.Duration(c.fail.SimNs)
		tried := map[time.Duration]Moment{}
		n := 0
		for _, m := range res.Moments {
			tried[m.At] = m
			failed := 0
			for b := 0; b < m.Runs; b++ {
				if r := c.outcome(m.At, uint64(b+1)); !r.Passed && r.Class == c.fail.Class {
					failed++
				}
			}
			switch {
			case m.Runs < 1 || m.Runs > opt.Branches || failed != m.Failed:
				t.Fatalf("%s: moment %+v; its first %d forks have %d failing", c.name, m, m.Runs, failed)
			case m.Verdict == Undecided && m.Runs != 1:
				t.Fatalf("%s: moment %+v: undecided after more than its first fork", c.name, m)
			case m.Verdict != Undecided && m.Verdict != c.fullVerdict(m.At):
				t.Fatalf("%s: moment %+v; all its forks make it %v", c.name, m, c.fullVerdict(m.At))
			}
			switch {
			case m.Verdict == Undecided:
				probes++
			case m.Runs < opt.Branches && m.Verdict == Passes:
				earlyPass++
			}
			if r := c.outcome(m.At, 1); m.Verdict == Passes && !r.Passed && r.Class == c.fail.Class {
				turned++
			}
			n += m.Runs
		}
		if m, ok := tried[res.Inevitable]; res.Inevitable != end && (!ok || m.Verdict != Fails) {
			t.Fatalf("%s: inevitable at %v, a moment it did not decide fails (%+v)", c.name, res.Inevitable, m)
		}
		m, ok := tried[res.After]
		switch {
		case ok && m.Verdict == Passes:
			for _, at := range scan(c.fail, c.opt) {
				if at > res.After && at < res.Inevitable {
					t.Fatalf("%s: (%v, %v] holds the moment %v of the scan", c.name, res.After, res.Inevitable, at)
				}
			}
			for _, f := range c.fail.Schedule.Faults {
				for _, at := range []time.Duration{f.At, f.At + 1} {
					if at > res.After && at < res.Inevitable {
						t.Fatalf("%s: (%v, %v] holds the edge %v of a fault", c.name, res.After, res.Inevitable, at)
					}
				}
			}
			halvings := 0
			for at := range tried {
				if !slices.Contains(scan(c.fail, c.opt), at) && !slices.ContainsFunc(c.fail.Schedule.Faults, func(f faults.Fault) bool { return at == f.At || at == f.At+1 }) {
					halvings++
				}
			}
			if res.Inevitable-res.After > c.halve() && halvings < 2*opt.Refine+2 {
				t.Fatalf("%s: (%v, %v] is wider than %v after %d halvings", c.name, res.After, res.Inevitable, c.halve(), halvings)
			}
			if res.Inevitable-res.After == 1 && len(res.Faults) > 0 {
				edge++
			}
			if res.Inevitable-res.After < time.Duration(c.fail.SimNs)/time.Duration(c.opt.Moments) {
				refined++
			}
		case res.After == 0 && res.Inevitable == 0 && tried[0].Verdict == Fails:
			fromStart++ // nothing passes before the interval: moment 0 of the scan fails
		default:
			t.Fatalf("%s: (%v, %v]: its start is not a moment that passes (%+v, tried %v)", c.name, res.After, res.Inevitable, m, ok)
		}
		if wf, we := answer(res.After, res.Inevitable); !reflect.DeepEqual(res.Faults, wf) || !reflect.DeepEqual(res.Events, we) {
			t.Fatalf("%s: faults %v and events %v; the interval holds %v and %v", c.name, res.Faults, res.Events, wf, we)
		}
		if res.Runs < n || res.Runs > n+2*(opt.Parallel-1)*len(res.Moments) {
			t.Fatalf("%s: %d runs, %d of them counted by its moments", c.name, res.Runs, n)
		}
		if res.Interrupted || all.Interrupted {
			t.Fatalf("%s: interrupted", c.name)
		}
		// Parallelism changes only how many forks a batch ran past the
		// deciding one; the same search again is the same.
		opt.Exhaustive, opt.Parallel = false, 1
		one, err := explain(context.Background(), c.fail, c.fork, opt)
		if err != nil {
			t.Fatal(err)
		}
		if one.Runs != n {
			t.Fatalf("%s: one at a time, %d runs; its moments count %d", c.name, one.Runs, n)
		}
		one.Runs, one.Steps = res.Runs, res.Steps
		if !reflect.DeepEqual(one, res) {
			t.Fatalf("%s: parallel 1 and %d differ:\n%+v\n%+v", c.name, c.opt.Parallel, one, res)
		}
		again, _ := explain(context.Background(), c.fail, c.fork, c.opt)
		if !reflect.DeepEqual(again, res) {
			t.Fatalf("%s: twice, two results:\n%+v\n%+v", c.name, res, again)
		}
		if res.Runs < all.Runs {
			fewer++
		}
	}
	// The cases reach every way the search can go.
	t.Logf("early passes %d, probes %d, turned %d, from the start %d, refined %d, at an edge %d, fewer runs %d, pure steps %d",
		earlyPass, probes, turned, fromStart, refined, edge, fewer, steps)
	if earlyPass == 0 || probes == 0 || turned == 0 || fromStart == 0 || refined == 0 || edge == 0 || fewer == 0 || steps == 0 {
		t.Errorf("the constructed cases miss a way")
	}
}

// Interrupted at any run, the search's interval holds the whole search's.
func TestSearchInterrupted(t *testing.T) {
	for _, c := range constructedCases()[:60] {
		for _, exhaustive := range []bool{false, true} {
			opt := c.opt
			opt.Exhaustive = exhaustive
			whole, err := explain(context.Background(), c.fail, c.fork, opt)
			if err != nil {
				t.Fatal(err)
			}
			for after := 1; after < whole.Runs; after++ {
				ctx, cancel := context.WithCancel(context.Background())
				o := opt
				o.Progress = func(done, most int) {
					if done == after {
						cancel()
					}
					if done > most {
						t.Errorf("%s: %d runs done of at most %d", c.name, done, most)
					}
				}
				res, err := explain(ctx, c.fail, c.fork, o)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if !res.Interrupted || res.Runs < after || res.Runs > after+opt.Parallel-1 {
					t.Fatalf("%s, exhaustive %v, cut after %d runs: interrupted %v, %d runs", c.name, exhaustive, after, res.Interrupted, res.Runs)
				}
				if !(res.After <= whole.After && whole.Inevitable <= res.Inevitable) {
					t.Fatalf("%s, exhaustive %v, cut after %d runs: (%v, %v] does not hold (%v, %v]", c.name, exhaustive, after, res.After, res.Inevitable, whole.After, whole.Inevitable)
				}
				for _, m := range res.Moments {
					if m.Verdict != Undecided && m.Verdict != c.fullVerdict(m.At) {
						t.Fatalf("%s, exhaustive %v, cut after %d runs: moment %+v; all its forks make it %v", c.name, exhaustive, after, m, c.fullVerdict(m.At))
					}
				}
			}
		}
	}
}
