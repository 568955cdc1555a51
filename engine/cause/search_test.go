package cause

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// A constructed case: a failing run, and how each of its forks ends.
type constructed struct {
	name string
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

// reference is the search as it was before it decided moments early and
// scanned from the end, written out plainly: every fork of every moment
// of the scan, then halvings of every fork. It returns the interval.
func (c *constructed) reference() (lo, hi time.Duration) {
	o := c.opt
	fails := func(at time.Duration) bool {
		n := 0
		for b := 0; b < o.Branches; b++ {
			if r := c.outcome(at, uint64(b+1)); !r.Passed && r.Class == c.fail.Class {
				n++
			}
		}
		return float64(n) >= o.Threshold*float64(o.Branches)
	}
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
	if i >= 0 {
		lo = end * time.Duration(i) / time.Duration(o.Moments)
	}
	for r := 0; r < o.Refine && lo >= 0 && hi-lo > 1; r++ {
		mid := lo + (hi-lo)/2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, hi
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
			c.name = fmt.Sprintf("step at %v", step)
			c.share = func(at time.Duration) float64 {
				if at >= step {
					return highShare
				}
				return lowShare
			}
		case 2:
			c.name = "from the start"
			c.share = func(time.Duration) float64 { return highShare }
			if r.IntN(2) == 0 {
				c.name = "never"
				c.share = func(time.Duration) float64 { return lowShare }
			}
		default:
			c.name = "varies"
			salt := r.Uint64()
			c.share = func(at time.Duration) float64 {
				return float64((uint64(at)^salt)%5) / 4
			}
		}
		c.name = fmt.Sprintf("%d: %s, %+v", i, c.name, c.opt)
		cs = append(cs, c)
	}
	return cs
}

// The search gives the interval, faults and events that running every
// fork gives, on constructed outcomes, whatever the parallelism.
func TestSearchSameAsExhaustive(t *testing.T) {
	var earlyPass, short, fromStart, refined, fewer int
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
		var wantFaults []faults.Fault
		for _, f := range c.fail.Schedule.Faults {
			if f.At >= lo && f.At < hi {
				wantFaults = append(wantFaults, f)
			}
		}
		var wantEvents []trace.Line
		for _, l := range c.fail.Lines {
			if l.At >= int64(lo) && l.At <= int64(hi) && l.Kind == trace.Event {
				wantEvents = append(wantEvents, l)
			}
		}
		for _, r := range []*Result{res, all} {
			if r.After != max(lo, 0) || r.Inevitable != hi || !reflect.DeepEqual(r.Faults, wantFaults) || !reflect.DeepEqual(r.Events, wantEvents) {
				t.Fatalf("%s: exhaustive %v: (%v, %v] with faults %v and events %v; want (%v, %v] with %v and %v",
					c.name, r == all, r.After, r.Inevitable, r.Faults, r.Events, max(lo, 0), hi, wantFaults, wantEvents)
			}
			if r.Interrupted {
				t.Fatalf("%s: interrupted", c.name)
			}
		}
		// Every moment it tried is decided as all its forks decide it,
		// counts its forks in branch order, and is one the exhaustive
		// search tried too.
		tried := map[time.Duration]Moment{}
		for _, m := range all.Moments {
			if m.Runs != opt.Branches || m.Verdict != c.fullVerdict(m.At) {
				t.Fatalf("%s: exhaustive moment %+v", c.name, m)
			}
			tried[m.At] = m
		}
		n := 0
		for _, m := range res.Moments {
			if m.Verdict != c.fullVerdict(m.At) || m.Runs < 1 || m.Runs > opt.Branches {
				t.Fatalf("%s: moment %+v; all its forks make it %v", c.name, m, c.fullVerdict(m.At))
			}
			failed := 0
			for b := 0; b < m.Runs; b++ {
				if r := c.outcome(m.At, uint64(b+1)); !r.Passed && r.Class == c.fail.Class {
					failed++
				}
			}
			if failed != m.Failed {
				t.Fatalf("%s: moment %+v; its first %d forks have %d failing", c.name, m, m.Runs, failed)
			}
			if _, ok := tried[m.At]; !ok {
				t.Fatalf("%s: moment %+v was not tried by the exhaustive search", c.name, m)
			}
			if m.Runs < opt.Branches && m.Verdict == Passes {
				earlyPass++
			}
			n += m.Runs
		}
		if res.Runs < n || res.Runs > all.Runs || res.Runs > n+(opt.Parallel-1)*len(res.Moments) {
			t.Fatalf("%s: %d runs, %d of them counted by its moments; the exhaustive search took %d", c.name, res.Runs, n, all.Runs)
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
		if len(res.Moments) < len(all.Moments) {
			short++
		}
		if lo < 0 {
			fromStart++
		}
		if hi-lo < time.Duration(c.fail.SimNs)/time.Duration(c.opt.Moments) && lo >= 0 {
			refined++
		}
		if res.Runs < all.Runs {
			fewer++
		}
	}
	// The cases reach every way the search can go.
	t.Logf("early passes %d, fewer moments %d, from the start %d, refined %d, fewer runs %d", earlyPass, short, fromStart, refined, fewer)
	if earlyPass == 0 || short == 0 || fromStart == 0 || refined == 0 || fewer == 0 {
		t.Errorf("the constructed cases miss a way: early passes %d, fewer moments %d, from the start %d, refined %d, fewer runs %d",
			earlyPass, short, fromStart, refined, fewer)
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
