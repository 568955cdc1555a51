// Package cause finds when a failing run's failure became inevitable: it
// forks the run at many moments, each fork keeping the faults that happened
// before the moment and re-keying every random stream from it on (a branch,
// so nothing else that happened later is kept), and reports the earliest
// moment after which (nearly) every fork still fails, with the faults and
// events just before it.
//
// A fork keeps no fault from after its moment and draws none: it asks
// "with what had happened by then, and any scheduling, latencies and
// randomness from then on, does the run still fail?" A failure that needs
// a later fault becomes inevitable only once that fault has happened.
package cause

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// Options tune the search. Zero values take the defaults.
type Options struct {
	Moments   int     // moments tried across the run before refining (default 16)
	Branches  int     // forks per moment (default 8)
	Threshold float64 // share of forks that must fail for a moment to count (default 0.9)
	Refine    int     // halvings of the interval found (default 6)
	Parallel  int     // runs at once (default 1)
	// Progress, if set, hears how many runs are done of how many planned.
	Progress func(done, total int)
}

// Moment is one moment tried and how its forks ended.
type Moment struct {
	At     time.Duration
	Failed int // forks that failed the same way as the run
	Runs   int
}

// Result is what Find learned.
type Result struct {
	Failure *engine.Result // the run being explained
	Moments []Moment       // every moment tried, in time order
	// Inevitable is the earliest moment from which every later moment
	// tried still fails; After is the latest moment before it that did
	// not: the failure became inevitable in (After, Inevitable].
	After, Inevitable time.Duration
	// Faults and Events are what happened in (After, Inevitable]: the
	// likely cause.
	Faults []faults.Fault
	Events []trace.Line
	Runs   int
	// Interrupted is true when the context ended (Ctrl-C) before the
	// search did. The forks it cut short count for nothing: a moment's
	// Runs is the forks that finished, and a moment none finished is
	// left out. After and Inevitable are what the moments whose forks
	// all finished establish: the failure's own time, when the first
	// sweep of moments did not finish.
	Interrupted bool
}

// Find explains the failure of seed under sch (nil: the faults the seed
// draws). It returns an error if the run passes.
func Find(ctx context.Context, p *engine.Prepared, seed uint64, sch *faults.Schedule, opt Options) (*Result, error) {
	if opt.Moments <= 0 {
		opt.Moments = 16
	}
	if opt.Branches <= 0 {
		opt.Branches = 8
	}
	if opt.Threshold <= 0 {
		opt.Threshold = 0.9
	}
	if opt.Refine <= 0 {
		opt.Refine = 6
	}
	if opt.Parallel <= 0 {
		opt.Parallel = 1
	}
	fail, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		return nil, err
	}
	if fail.Passed {
		return nil, fmt.Errorf("seed %d passes (%s): there is no failure to explain", seed, fail.Reason)
	}
	res := &Result{Failure: fail}
	base := fail.Schedule // the faults that happened, with the run's branches
	end := time.Duration(fail.SimNs)
	total := opt.Moments*opt.Branches + opt.Refine*opt.Branches
	same := func(r *engine.Result) bool { return !r.Passed && r.Class == fail.Class }

	// try forks the run at each moment, Branches ways each. When the
	// context ends (Ctrl-C) the forks cut short count for nothing: a
	// moment's Runs is the forks that finished, and complete says which
	// moments ran every fork.
	try := func(ats []time.Duration) (ms []Moment, complete []bool, err error) {
		ms = make([]Moment, len(ats))
		type job struct{ m, b int }
		jobs := make(chan job)
		var mu sync.Mutex
		var firstErr error
		var wg sync.WaitGroup
		for w := 0; w < opt.Parallel; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range jobs {
					r, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: fork(base, ats[j.m], uint64(j.b+1))})
					mu.Lock()
					switch {
					case err != nil && ctx.Err() != nil:
					case err != nil:
						if firstErr == nil {
							firstErr = err
						}
					default:
						if same(r) {
							ms[j.m].Failed++
						}
						ms[j.m].Runs++
						res.Runs++
						if opt.Progress != nil {
							opt.Progress(res.Runs, total)
						}
					}
					mu.Unlock()
				}
			}()
		}
	feed:
		for m := range ats {
			ms[m].At = ats[m]
			for b := 0; b < opt.Branches; b++ {
				if ctx.Err() != nil {
					break feed
				}
				jobs <- job{m, b}
			}
		}
		close(jobs)
		wg.Wait()
		complete = make([]bool, len(ms))
		for m := range ms {
			complete[m] = ms[m].Runs == opt.Branches
		}
		return ms, complete, firstErr
	}
	var ats []time.Duration
	for i := 0; i < opt.Moments; i++ {
		ats = append(ats, end*time.Duration(i)/time.Duration(opt.Moments))
	}
	ms, complete, err := try(ats)
	if err != nil {
		return nil, err
	}
	fails := func(m Moment) bool { return float64(m.Failed) >= opt.Threshold*float64(m.Runs) }
	// The earliest moment from which every later one fails; the failing
	// run itself counts as failing at its end. Interrupted, a moment not
	// every fork of which finished is not known to fail: the latest
	// moment whose forks all finished and did not fail still bounds the
	// interval below.
	lo, hi := time.Duration(-1), end
	i := len(ms) - 1
	for ; i >= 0 && complete[i] && fails(ms[i]); i-- {
		hi = ms[i].At
	}
	for ; i >= 0; i-- {
		if complete[i] && !fails(ms[i]) {
			lo = ms[i].At
			break
		}
	}
	for m := range ms {
		if ms[m].Runs > 0 {
			res.Moments = append(res.Moments, ms[m])
		}
	}
	// Halve (lo, hi] while it is wider than a nanosecond.
	for i := 0; i < opt.Refine && lo >= 0 && hi-lo > 1 && ctx.Err() == nil; i++ {
		mid := lo + (hi-lo)/2
		m, complete, err := try([]time.Duration{mid})
		if err != nil {
			return nil, err
		}
		if m[0].Runs > 0 {
			res.Moments = append(res.Moments, m[0])
		}
		switch {
		case !complete[0]:
		case fails(m[0]):
			hi = mid
		default:
			lo = mid
		}
	}
	res.Interrupted = ctx.Err() != nil
	slices.SortStableFunc(res.Moments, func(a, b Moment) int { return int(a.At - b.At) })
	res.After, res.Inevitable = max(lo, 0), hi
	for _, f := range base.Faults {
		if f.At >= lo && f.At < hi {
			res.Faults = append(res.Faults, f)
		}
	}
	for _, l := range fail.Lines {
		if l.At >= int64(lo) && l.At <= int64(hi) && l.Kind == trace.Event {
			res.Events = append(res.Events, l)
		}
	}
	return res, nil
}

// fork is the schedule of a fork at at: the faults that happened before it,
// the run's own branches before it, and a branch of every stream at it.
func fork(base *faults.Schedule, at time.Duration, key uint64) *faults.Schedule {
	s := &faults.Schedule{Seed: base.Seed, Duration: base.Duration}
	for _, f := range base.Faults {
		if f.At < at {
			s.Faults = append(s.Faults, f)
		}
	}
	for _, b := range base.Branches {
		if b.At < at {
			s.Branches = append(s.Branches, b)
		}
	}
	s.Branches = append(s.Branches, faults.Branch{At: at, Key: key})
	return s
}
