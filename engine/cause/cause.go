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
//
// A fork starts from the latest checkpoint at or before its moment: the
// run is run once more with a checkpoint at every moment of the scan
// (engine.RunOptions.Checkpoints), and each fork plays the past back
// through the host rather than running it again (engine.RunOptions.From),
// then runs its guests from the checkpoint on. A fork's trace is the one
// it would have from t=0 (Options.Scratch runs them so, for comparison).
// Even so the search runs no fork whose outcome cannot change the answer: it tries the moments from the last
// back and stops at the first that does not fail (earlier ones cannot
// move the interval), and it stops a moment's forks at the one that
// settles its verdict. Options.Exhaustive tries every fork of every
// moment instead, for the whole table at several times the cost; both
// reach the same interval, faults and events.
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
	Moments   int     // moments across the run to scan before refining (default 16)
	Branches  int     // forks per moment (default 8)
	Threshold float64 // share of a moment's Branches forks that must fail for it to fail (default 0.9)
	Refine    int     // halvings of the interval found (default 6)
	Parallel  int     // runs at once (default 1)
	// Exhaustive runs all Branches forks of every moment, the Moments
	// of the scan from the first on and each halving's: the same
	// answer, with every moment's full count of failing forks.
	Exhaustive bool
	// Progress, if set, hears how many runs are done, and the most the
	// search can take (all of them, when Exhaustive).
	Progress func(done, most int)
	// Scratch runs every fork from t=0 instead of from a checkpoint:
	// the same forks, the same answer, for comparison.
	Scratch bool
}

// Verdict is what a moment's forks establish.
type Verdict int8

const (
	// Undecided: the search was interrupted before the moment's forks
	// settled it.
	Undecided Verdict = iota
	// Fails: at least Threshold of the moment's Branches forks fail, or
	// enough have failed that the others cannot change that.
	Fails
	// Passes: enough forks have passed that the moment cannot fail.
	Passes
)

func (v Verdict) String() string {
	switch v {
	case Fails:
		return "fails"
	case Passes:
		return "passes"
	}
	return "undecided"
}

// Moment is one moment tried and how its forks ended.
type Moment struct {
	At time.Duration
	// Failed of Runs forks failed the same way as the run. Runs are the
	// forks, in branch order, up to the one that decided the moment:
	// fewer than Options.Branches when the rest could not change its
	// verdict (all of them with Exhaustive). A fork a parallel batch ran
	// past that one counts only in Result.Runs.
	Failed, Runs int
	Verdict      Verdict
}

// Result is what Find learned.
type Result struct {
	Failure *engine.Result // the run being explained
	// Moments are the moments tried, in time order: from the last of
	// the scan back to the first that did not fail, then each halving
	// (with Options.Exhaustive, every moment of the scan).
	Moments []Moment
	// Inevitable is the earliest moment from which every later moment
	// of the scan and every later halving fails; After is the latest
	// moment before it that did not: the failure became inevitable in
	// (After, Inevitable].
	After, Inevitable time.Duration
	// Faults and Events are what happened in (After, Inevitable]: the
	// likely cause.
	Faults []faults.Fault
	Events []trace.Line
	// Runs are the forks run, each a run of the seed from t=0: the sum
	// of the Moments' Runs, and with Parallel > 1 the forks that a batch
	// ran past a moment's deciding fork, which count for nothing.
	Runs int
	// Steps are the scheduler steps of those runs: Steps over
	// Failure.Steps is what the search cost in runs of the seed.
	Steps uint64
	// Interrupted is true when the context ended (Ctrl-C) before the
	// search did. The forks it cut short count for nothing: a moment's
	// Runs is the forks that finished, and a moment none finished is
	// left out; a moment is decided only if the finished forks settle
	// it. After and Inevitable are what the decided moments establish:
	// Inevitable the failure's own time, and After 0, when no moment of
	// the scan was decided.
	Interrupted bool
	// Checkpoints are the checkpoints the forks started from (none with
	// Options.Scratch), and CheckpointBytes the memory their copies of
	// the guests held.
	Checkpoints, CheckpointBytes int
}

// Find explains the failure of seed under sch (nil: the faults the seed
// draws). It returns an error if the run passes.
func Find(ctx context.Context, p *engine.Prepared, seed uint64, sch *faults.Schedule, opt Options) (*Result, error) {
	fail, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		return nil, err
	}
	if fail.Passed {
		return nil, fmt.Errorf("seed %d passes (%s): there is no failure to explain", seed, fail.Reason)
	}
	opt = opt.withDefaults()
	base := fail.Schedule // the faults that happened, with the run's branches
	var cps []*engine.Checkpoint
	if !opt.Scratch {
		// The run once more, under the schedule the forks keep the
		// past of, with a checkpoint at every moment of the scan.
		b, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: base, Checkpoints: scan(fail, opt)[1:]})
		if err != nil {
			return nil, err
		}
		cps = b.Checkpoints
	}
	res, err := explain(ctx, fail, func(ctx context.Context, at time.Duration, key uint64) (*engine.Result, error) {
		var from *engine.Checkpoint
		for _, c := range cps {
			if c.At <= at && c.Reason == "" {
				from = c
			}
		}
		return p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: base.ForkAt(at, key), From: from})
	}, opt)
	if res != nil {
		for _, c := range cps {
			if c.Reason == "" {
				res.Checkpoints++
				res.CheckpointBytes += c.Bytes()
			}
		}
	}
	return res, err
}

// scan is the moments the search scans: Moments of them, evenly from 0 to
// the failure.
func scan(fail *engine.Result, opt Options) []time.Duration {
	end := time.Duration(fail.SimNs)
	ats := make([]time.Duration, opt.Moments)
	for i := range ats {
		ats[i] = end * time.Duration(i) / time.Duration(opt.Moments)
	}
	return ats
}

// withDefaults fills in the zero options.
func (opt Options) withDefaults() Options {
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
	return opt
}

// runFork runs the fork of the failing run at at with branch key key.
type runFork func(ctx context.Context, at time.Duration, key uint64) (*engine.Result, error)

// outcome is how one fork ended.
type outcome int8

const (
	pending outcome = iota // not run, or cut short
	passed                 // passed, or failed another way
	failed                 // failed the same way as the run
)

// search holds what one Find has run so far.
type search struct {
	opt  Options
	fail *engine.Result
	run  runFork
	need int // failing forks for a moment to fail
	most int // the most runs the search can take

	mu    sync.Mutex
	runs  int
	steps uint64
}

// explain searches fail's forks, run by run, for when the failure became
// inevitable.
func explain(ctx context.Context, fail *engine.Result, run runFork, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	s := &search{opt: opt, fail: fail, run: run, most: (opt.Moments + opt.Refine) * opt.Branches}
	// The least count that meets the threshold, in the float arithmetic
	// the threshold is stated in; more than Branches when none does.
	for s.need = 0; s.need <= opt.Branches && float64(s.need) < opt.Threshold*float64(opt.Branches); s.need++ {
	}
	end := time.Duration(fail.SimNs)
	ats := scan(fail, opt)
	res := &Result{Failure: fail}
	keep := func(m Moment) {
		if m.Runs > 0 {
			res.Moments = append(res.Moments, m)
		}
	}

	// The earliest moment from which every later one fails; the failing
	// run itself counts as failing at its end. Interrupted, an undecided
	// moment is not known to fail: with Exhaustive, the latest decided
	// moment before it that passes still bounds the interval below.
	lo, hi := time.Duration(-1), end
	if opt.Exhaustive {
		ms, err := s.moments(ctx, ats)
		if err != nil {
			return nil, err
		}
		i := len(ms) - 1
		for ; i >= 0 && ms[i].Verdict == Fails; i-- {
			hi = ms[i].At
		}
		for ; i >= 0; i-- {
			if ms[i].Verdict == Passes {
				lo = ms[i].At
				break
			}
		}
		for _, m := range ms {
			keep(m)
		}
	} else {
		for i := len(ats) - 1; i >= 0; i-- {
			m, err := s.moment(ctx, ats[i])
			if err != nil {
				return nil, err
			}
			keep(m)
			if m.Verdict != Fails {
				if m.Verdict == Passes {
					lo = m.At
				}
				break
			}
			hi = m.At
		}
	}
	// Halve (lo, hi] while it is wider than a nanosecond.
	for i := 0; i < opt.Refine && lo >= 0 && hi-lo > 1 && ctx.Err() == nil; i++ {
		mid := lo + (hi-lo)/2
		m, err := s.moment(ctx, mid)
		if err != nil {
			return nil, err
		}
		keep(m)
		switch m.Verdict {
		case Fails:
			hi = mid
		case Passes:
			lo = mid
		}
	}
	res.Interrupted = ctx.Err() != nil
	res.Runs, res.Steps = s.runs, s.steps
	slices.SortStableFunc(res.Moments, func(a, b Moment) int { return int(a.At - b.At) })
	res.After, res.Inevitable = max(lo, 0), hi
	for _, f := range fail.Schedule.Faults {
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

// moment tries the moment at: with Exhaustive, all its forks; otherwise
// its forks in branch order, Parallel at a time, until they decide it.
func (s *search) moment(ctx context.Context, at time.Duration) (Moment, error) {
	if s.opt.Exhaustive {
		ms, err := s.moments(ctx, []time.Duration{at})
		return ms[0], err
	}
	outs := make([]outcome, s.opt.Branches)
	var jobs []job
	for b := 0; b < s.opt.Branches && ctx.Err() == nil; b += s.opt.Parallel {
		jobs = jobs[:0]
		for k := b; k < min(b+s.opt.Parallel, s.opt.Branches); k++ {
			jobs = append(jobs, job{0, k})
		}
		if err := s.forks(ctx, []time.Duration{at}, jobs, [][]outcome{outs}); err != nil {
			return Moment{}, err
		}
		if m := s.decide(at, outs); m.Verdict != Undecided {
			return m, nil
		}
	}
	return s.decide(at, outs), nil
}

// moments runs every fork of every moment at ats, all Parallel at a
// time, and counts them all.
func (s *search) moments(ctx context.Context, ats []time.Duration) ([]Moment, error) {
	outs := make([][]outcome, len(ats))
	var jobs []job
	for m := range ats {
		outs[m] = make([]outcome, s.opt.Branches)
		for b := 0; b < s.opt.Branches; b++ {
			jobs = append(jobs, job{m, b})
		}
	}
	err := s.forks(ctx, ats, jobs, outs)
	ms := make([]Moment, len(ats))
	for m := range ats {
		ms[m] = s.count(ats[m], outs[m], len(outs[m]))
	}
	return ms, err
}

type job struct{ m, b int } // fork b of moment m

// forks runs jobs in order, Parallel at a time, and records each fork's
// outcome in outs. Once the context ends it starts no more, and a fork it
// cut short stays pending.
func (s *search) forks(ctx context.Context, ats []time.Duration, jobs []job, outs [][]outcome) error {
	ch := make(chan job)
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < min(s.opt.Parallel, len(jobs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				r, err := s.run(ctx, ats[j.m], uint64(j.b+1))
				s.mu.Lock()
				switch {
				case err != nil && ctx.Err() != nil:
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				default:
					outs[j.m][j.b] = passed
					if !r.Passed && r.Class == s.fail.Class {
						outs[j.m][j.b] = failed
					}
					s.runs++
					s.steps += r.Steps
					if s.opt.Progress != nil {
						s.opt.Progress(s.runs, s.most)
					}
				}
				s.mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	return firstErr
}

// decide is the moment at as its forks' outcomes establish it: counting
// forks in branch order up to the first by which it is decided, so that
// the answer depends on the outcomes alone and never on which fork
// finished first. Forks an interruption left pending break that order:
// then every finished fork counts.
func (s *search) decide(at time.Duration, outs []outcome) Moment {
	for n := 1; n <= len(outs) && outs[n-1] != pending; n++ {
		if m := s.count(at, outs, n); m.Verdict != Undecided {
			return m
		}
	}
	return s.count(at, outs, len(outs))
}

// count is the moment at as the finished forks among the first n
// establish it, the forks after them still to run.
func (s *search) count(at time.Duration, outs []outcome, n int) Moment {
	m := Moment{At: at}
	for _, o := range outs[:n] {
		if o != pending {
			m.Runs++
		}
		if o == failed {
			m.Failed++
		}
	}
	switch open := len(outs) - m.Runs; {
	case m.Failed >= s.need:
		m.Verdict = Fails
	case m.Failed+open < s.need:
		m.Verdict = Passes
	}
	return m
}
