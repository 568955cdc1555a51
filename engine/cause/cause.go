// Package cause finds when a failing run's failure became inevitable: it
// forks the run at moments, each fork keeping the faults that happened
// before the moment and re-keying every random stream from it on (a branch,
// so nothing else that happened later is kept), and reports a moment from
// which (nearly) every fork still fails, just after one from which not,
// with the faults and events between them.
//
// A fork keeps no fault from after its moment and draws none: it asks
// "with what had happened by then, and any scheduling, latencies and
// randomness from then on, does the run still fail?" A failure that needs
// a later fault becomes inevitable only once that fault has happened.
//
// The search bisects. It tries a moment with its first fork alone and goes
// the way that fork went: through the edges of the faults (the moment of
// each, and the nanosecond after, when the fork keeps it), then an even
// scan of the interval left, then halvings. Then it runs the interval's
// two ends' other forks until they are decided; an end that turns out the
// other way moves the search on. A failure whose forks go from passing to
// failing at a fault costs two first forks for each halving of the faults
// and the other forks of the moment just after that fault, and the
// interval is that fault's nanosecond. Options.Exhaustive runs every fork
// of every moment of the scan instead, and takes the earliest moment from
// which every later one fails; the two agree when the forks' failing share
// does not come and go.
//
// A moment's first fork runs from t=0; where the failing run took
// engine.MinForkSaving of real time to reach the moment, it takes a
// checkpoint there on its way (engine.RunOptions.Checkpoints), and the
// moment's other forks play the past back through the host up to it
// (engine.RunOptions.From). With Options.Checkpoints, the run is run once
// more with a checkpoint at every moment of the scan instead, and each
// fork starts from the latest one at or before its moment; with
// Options.NoForks, every fork runs from t=0. A fork's trace is the same
// every way.
package cause

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/sweep"
	"github.com/seedfall/seedfall/engine/trace"
)

// Options tune the search. Zero values take the defaults.
type Options struct {
	Moments   int     // moments across the run to scan before refining (default 16)
	Branches  int     // forks per moment (default 8)
	Threshold float64 // share of a moment's Branches forks that must fail for it to fail (default 0.9)
	Refine    int     // halve the interval down to the scan's step over 2^Refine, in at most 2*Refine+2 halvings (default 6)
	Parallel  int     // runs at once (default 1)
	// Exhaustive runs all Branches forks of every moment of the scan,
	// takes the earliest from which every later one fails, and narrows
	// the interval from there with all the forks of each moment tried.
	Exhaustive bool
	// Progress, if set, hears how many runs are done, and the most the
	// search can take.
	Progress func(done, most int)
	// Checkpoints starts every fork from the latest checkpoint at or
	// before its moment instead of from t=0: the same forks, the same
	// answer. The checkpointed run costs more than its forks save
	// unless they are many and late (docs/how-it-works.md).
	Checkpoints bool
	// NoForks runs every fork from t=0. Otherwise (and without
	// Checkpoints), a moment's first fork takes a checkpoint at its
	// moment on its way, where the failing run took at least
	// engine.MinForkSaving of real time to get there, and the moment's
	// other forks start from it: the same forks, the same answer.
	NoForks bool
	// minSaved is engine.MinForkSaving, for the tests; below 0, any.
	minSaved time.Duration
}

// Verdict is what a moment's forks establish.
type Verdict int8

const (
	// Undecided: the moment's forks so far do not settle it: the search
	// followed its first fork and went past it, or was interrupted.
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
	// verdict (all of them with Exhaustive), and 1, the first, for a
	// moment the search went past undecided. A fork a parallel batch
	// ran past that one counts only in Result.Runs.
	Failed, Runs int
	Verdict      Verdict
}

// Result is what Find learned.
type Result struct {
	Failure *engine.Result // the run being explained
	// Moments are the moments tried, in time order.
	Moments []Moment
	// Inevitable is a moment that fails, or the failure itself, and
	// After the latest moment before it that passes, with no moment
	// left to try between them; After is 0 when moment 0 of the scan
	// fails. Every moment decided to fail lies at or after Inevitable,
	// and every one decided to pass at or before After. With
	// Options.Exhaustive, Inevitable is the earliest moment from which
	// every later moment tried fails. The failure became inevitable in
	// (After, Inevitable].
	After, Inevitable time.Duration
	// Faults and Events are what happened in (After, Inevitable]: the
	// likely cause.
	Faults []faults.Fault
	Events []trace.Line
	// Need is how many of a moment's Branches forks must fail for it to
	// fail (Threshold of them, rounded up).
	Need int
	// Runs are the forks run: the sum of the Moments' Runs, and with
	// Parallel > 1 the forks that a batch ran past a moment's deciding
	// fork and those run ahead that the search never took, which count
	// for nothing.
	Runs int
	// Steps are the scheduler steps of those runs: Steps over
	// Failure.Steps is what the search cost in runs of the seed.
	Steps uint64
	// Interrupted is true when the context ended (Ctrl-C) before the
	// search did. The forks it cut short count for nothing: a moment's
	// Runs is the forks that finished, and a moment none finished is
	// left out; a moment is decided only if the finished forks settle
	// it. After and Inevitable are what the decided moments establish,
	// and hold the whole search's interval: Inevitable the failure's own
	// time, and After 0, when no moment was decided.
	Interrupted bool
	// Checkpoints are the checkpoints the forks started from (none
	// without Options.Checkpoints), and CheckpointBytes the memory their
	// copies of the guests held.
	Checkpoints, CheckpointBytes int
	// Forked is the forks that started from their moment's first fork's
	// checkpoint (Options.NoForks). Unlike the rest of the result it
	// depends on real time: how long the failing run took.
	Forked int
}

// Find explains the failure of seed under sch (nil: the faults the seed
// draws). It returns an error if the run passes.
func Find(ctx context.Context, p *engine.Prepared, seed uint64, sch *faults.Schedule, opt Options) (*Result, error) {
	if err := opt.check(); err != nil {
		return nil, err
	}
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
	if opt.Checkpoints {
		// The run once more, under the schedule the forks keep the
		// past of, with a checkpoint at every moment of the scan.
		b, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: base, Checkpoints: scan(fail, opt)[1:]})
		if err != nil {
			return nil, err
		}
		cps = b.Checkpoints
	}
	firsts := &firstForks{min: opt.minSaved, rate: float64(fail.WallNs) / float64(max(fail.SimNs, 1))}
	res, err := explain(ctx, fail, func(ctx context.Context, at time.Duration, key uint64) (*engine.Result, error) {
		o := engine.RunOptions{Seed: seed, Schedule: base.ForkAt(at, key)}
		switch {
		case opt.Checkpoints:
			for _, c := range cps {
				if c.At <= at && c.Reason == "" {
					o.From = c
				}
			}
		case !opt.NoForks:
			o.From = firsts.from(at)
			if o.From == nil && key == 1 && firsts.worth(at) {
				o.Checkpoints = []time.Duration{at}
			}
		}
		r, err := p.Run(ctx, o)
		if err == nil && !opt.NoForks && !opt.Checkpoints {
			firsts.ran(at, o.From, r.Checkpoints)
		}
		return r, err
	}, opt)
	if res != nil {
		for _, c := range cps {
			if c.Reason == "" {
				res.Checkpoints++
				res.CheckpointBytes += c.Bytes()
			}
		}
		res.Forked = firsts.forked
	}
	return res, err
}

// firstForks keeps the checkpoint each moment's first fork took at its
// moment, on its way: until then it is the failing run, so the moment's
// other forks, which differ from it only from then on (a branch at the
// moment re-keys the streams at the first step at or after it), start
// there. A first fork takes one only where the failing run's past took
// min of real time: a fork costs 1 to 3 ms of its own.
type firstForks struct {
	min    time.Duration // engine.ForkSaves's
	rate   float64       // real ns per virtual ns of the failing run
	mu     sync.Mutex
	at     map[time.Duration]*engine.Checkpoint
	bytes  int // their copies of the guests
	forked int // forks that started from one
}

// Bounds on what firstForks keeps: past them, forks run from t=0.
const (
	maxFirstForks     = 32
	maxFirstForkBytes = 256 << 20
)

// worth reports whether a first fork at at takes a checkpoint.
func (f *firstForks) worth(at time.Duration) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return engine.ForkSaves(at, f.rate, f.min) && len(f.at) < maxFirstForks && f.bytes < maxFirstForkBytes
}

// from is the checkpoint a fork at at starts from, if any.
func (f *firstForks) from(at time.Duration) *engine.Checkpoint {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at[at]
}

// ran notes a fork at at that ran: from a checkpoint, or one taken.
func (f *firstForks) ran(at time.Duration, from *engine.Checkpoint, taken []*engine.Checkpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if from != nil {
		f.forked++
	}
	if len(taken) == 1 && taken[0].Reason == "" && f.at[at] == nil {
		if f.at == nil {
			f.at = map[time.Duration]*engine.Checkpoint{}
		}
		f.at[at] = taken[0]
		f.bytes += taken[0].Bytes()
	}
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

// Bounds on Options: past them a search would hold more moments, forks
// or worlds at once than any explanation needs.
const (
	MaxMoments  = 1024
	MaxBranches = 64
	MaxRefine   = 20
	MaxParallel = 256
)

// check refuses options past the bounds.
func (opt Options) check() error {
	for _, b := range []struct {
		name   string
		n, max int
	}{{"moments", opt.Moments, MaxMoments}, {"branches", opt.Branches, MaxBranches}, {"refine", opt.Refine, MaxRefine}, {"parallel", opt.Parallel, MaxParallel}} {
		if b.n > b.max {
			return fmt.Errorf("%s is %d; at most %d", b.name, b.n, b.max)
		}
	}
	if opt.Threshold > 1 {
		return fmt.Errorf("threshold is %v; it is a share of the forks, at most 1", opt.Threshold)
	}
	return nil
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

	tried  map[time.Duration][]outcome // the forks of each moment the search tried, by branch
	aheads map[job]outcome             // forks run ahead of the search (bisect)

	runs  int
	steps uint64
}

// explain searches fail's forks, run by run, for when the failure became
// inevitable.
func explain(ctx context.Context, fail *engine.Result, run runFork, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	s := &search{opt: opt, fail: fail, run: run, tried: map[time.Duration][]outcome{}, aheads: map[job]outcome{}}
	// The least count that meets the threshold, in the float arithmetic
	// the threshold is stated in; more than Branches when none does.
	for s.need = 0; s.need <= opt.Branches && float64(s.need) < opt.Threshold*float64(opt.Branches); s.need++ {
	}
	end := time.Duration(fail.SimNs)
	pl := newPlan(fail, opt)
	s.most = (len(pl.scan) + len(pl.edges) + pl.halvings) * (opt.Branches + opt.Parallel - 1)
	res := &Result{Failure: fail, Need: s.need}

	// The failing run itself counts as failing at its end; lo -1 is
	// the start of the run, before any moment.
	lo, hi := time.Duration(-1), end
	if opt.Exhaustive {
		// Every fork of every moment of the scan, and the earliest
		// moment from which every later one fails. Interrupted, an
		// undecided moment is not known to fail: the latest decided
		// moment before it that passes still bounds the interval below.
		ms, err := s.moments(ctx, pl.scan)
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
		// Then narrowed, every fork of each moment tried.
		for ctx.Err() == nil {
			at, ok := pl.take(lo, hi)
			if !ok {
				break
			}
			ms, err := s.moments(ctx, []time.Duration{at})
			if err != nil {
				return nil, err
			}
			switch ms[0].Verdict {
			case Fails:
				hi = at
			case Passes:
				lo = at
			}
		}
	} else {
		if err := s.bisect(ctx, pl, lo, hi); err != nil {
			return nil, err
		}
		// Every moment that fails lies after every one that passes
		// (see bisect): the interval is between the latest that passes
		// and the earliest that fails. Interrupted, the moments decided
		// so far hold the whole search's interval.
		for at, outs := range s.tried {
			if s.decide(at, outs).Verdict == Fails {
				hi = min(hi, at)
			}
		}
		for at, outs := range s.tried {
			if s.decide(at, outs).Verdict == Passes && at < hi {
				lo = max(lo, at)
			}
		}
	}
	for at, outs := range s.tried {
		m := s.decide(at, outs)
		if opt.Exhaustive {
			m = s.count(at, outs, len(outs))
		}
		if m.Runs > 0 {
			res.Moments = append(res.Moments, m)
		}
	}
	res.Interrupted = ctx.Err() != nil
	res.Runs, res.Steps = s.runs, s.steps
	slices.SortFunc(res.Moments, func(a, b Moment) int { return cmp.Compare(a.At, b.At) })
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

// plan is the moments a search may try: the edges of the faults, then the
// scan's moments in the interval, then halvings of it. Edges come first:
// a failure that a fault causes turns at one, and a fork that passes runs
// the whole workload, which may be many times the failing run, so the
// fewer moments before the turn are tried the better.
type plan struct {
	scan []time.Duration
	// edges are each fault's moment and the nanosecond after: a fork
	// at f.At keeps every fault before f, one at f.At+1 keeps f too.
	edges []time.Duration
	// halve halves an interval while it is wider than this: the scan's
	// step over 2^Refine.
	halve time.Duration
	// halvings is the most halvings a search makes, halved those made.
	halvings, halved int
}

func newPlan(fail *engine.Result, opt Options) *plan {
	pl := &plan{scan: scan(fail, opt), halvings: 2*opt.Refine + 2}
	pl.halve = max(1, time.Duration(fail.SimNs)/time.Duration(opt.Moments)>>opt.Refine)
	for _, f := range fail.Schedule.Faults {
		pl.edges = append(pl.edges, f.At, f.At+1)
	}
	slices.Sort(pl.edges)
	pl.edges = slices.Compact(pl.edges)
	return pl
}

// next is the moment to try in (lo, hi), halved halvings made: the
// middle edge inside it, else the middle moment of the scan inside it,
// else its middle (halving) while it is wider than halve. ok is false
// when there is none: the interval is as narrow as the search makes it.
func (pl *plan) next(lo, hi time.Duration, halved int) (at time.Duration, halving, ok bool) {
	inside := func(ats []time.Duration) []time.Duration {
		i, _ := slices.BinarySearch(ats, lo+1)
		j, _ := slices.BinarySearch(ats, hi)
		return ats[i:j]
	}
	if in := inside(pl.edges); len(in) > 0 {
		return in[len(in)/2], false, true
	}
	if in := inside(pl.scan); len(in) > 0 {
		return in[len(in)/2], false, true
	}
	if lo < 0 {
		return 0, false, false // every moment of the scan fails
	}
	if hi-lo > pl.halve && halved < pl.halvings {
		return lo + (hi-lo)/2, true, true
	}
	return 0, false, false
}

// take is next with the halvings made so far, and counts a halving.
func (pl *plan) take(lo, hi time.Duration) (time.Duration, bool) {
	at, halving, ok := pl.next(lo, hi, pl.halved)
	if halving {
		pl.halved++
	}
	return at, ok
}

// bisect narrows (lo, hi), from the start of the run (-1) to its failure,
// to a moment that passes and the next that fails. It tries each moment
// with its first fork alone and goes the way that fork went; once no
// moment is left to try between them, it runs the two ends' other forks
// until they are decided. An end that goes the other way than its first
// fork did becomes the other end, and the search goes on from the
// nearest moment tried beyond it.
//
// Every moment decided to fail then lies at or after hi, every one
// decided to pass at or before lo: a probe moves an end inward past no
// decided moment, and an end that turns moves to the nearest moment
// tried beyond it that went the other way.
//
// With Parallel > 1, the forks that would otherwise wait for a probe run
// the first fork of the moments the search tries next if the probe fails
// (and then if it passes), ahead of time: the search takes their outcomes
// when it gets there, and goes the same way as one fork at a time.
func (s *search) bisect(ctx context.Context, pl *plan, lo, hi time.Duration) error {
	end := time.Duration(s.fail.SimNs)
	for ctx.Err() == nil {
		for ctx.Err() == nil {
			at, ok := pl.take(lo, hi)
			if !ok {
				break
			}
			var ahead []job
			for _, b := range [][2]time.Duration{{lo, at}, {at, hi}} {
				if a, _, ok := pl.next(b[0], b[1], pl.halved); ok && len(ahead) < s.opt.Parallel-1 {
					ahead = append(ahead, job{a, 0})
				}
			}
			if err := s.fork(ctx, job{at, 0}, ahead); err != nil {
				return err
			}
			switch s.leans(at) {
			case Fails:
				hi = at
			case Passes:
				lo = at
			default:
				return nil // interrupted
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if hi < end {
			m, err := s.moment(ctx, hi)
			if err != nil || m.Verdict == Undecided {
				return err
			}
			if m.Verdict == Passes {
				lo, hi = hi, end
				for at := range s.tried {
					if at > lo && at < hi && s.leans(at) == Fails {
						hi = at
					}
				}
				continue
			}
		}
		if lo >= 0 {
			m, err := s.moment(ctx, lo)
			if err != nil || m.Verdict == Undecided {
				return err
			}
			if m.Verdict == Fails {
				lo, hi = -1, lo
				for at := range s.tried {
					if at < hi && at > lo && s.leans(at) == Passes {
						lo = at
					}
				}
				continue
			}
		}
		return nil
	}
	return nil
}

// leans is the way the moment at goes: its verdict once decided, else
// the way its first fork went (Undecided if that has not run).
func (s *search) leans(at time.Duration) Verdict {
	outs := s.tried[at]
	if v := s.decide(at, outs).Verdict; v != Undecided {
		return v
	}
	switch outs[0] {
	case failed:
		return Fails
	case passed:
		return Passes
	}
	return Undecided
}

// outs is the outcomes of the forks of the moment at the search has
// tried, by branch.
func (s *search) outs(at time.Duration) []outcome {
	o, ok := s.tried[at]
	if !ok {
		o = make([]outcome, s.opt.Branches)
		s.tried[at] = o
	}
	return o
}

// moment runs the moment at's forks in branch order, Parallel at a time,
// until they decide it (or the context ends), and returns it.
func (s *search) moment(ctx context.Context, at time.Duration) (Moment, error) {
	outs := s.outs(at)
	for ctx.Err() == nil {
		if m := s.decide(at, outs); m.Verdict != Undecided {
			return m, nil
		}
		var jobs []job
		for k := 0; k < len(outs) && len(jobs) < s.opt.Parallel; k++ {
			if outs[k] == pending {
				jobs = append(jobs, job{at, k})
			}
		}
		if len(jobs) == 0 {
			break
		}
		if err := s.forks(ctx, jobs, nil); err != nil {
			return Moment{}, err
		}
	}
	return s.decide(at, outs), nil
}

// moments runs every fork of every moment at ats, all Parallel at a
// time, and counts them all.
func (s *search) moments(ctx context.Context, ats []time.Duration) ([]Moment, error) {
	var jobs []job
	for _, at := range ats {
		for b, o := range s.outs(at) {
			if o == pending {
				jobs = append(jobs, job{at, b})
			}
		}
	}
	err := s.forks(ctx, jobs, nil)
	ms := make([]Moment, len(ats))
	for i, at := range ats {
		ms[i] = s.count(at, s.tried[at], s.opt.Branches)
	}
	return ms, err
}

// fork runs the fork j for the search, and the forks ahead alongside it
// for later.
func (s *search) fork(ctx context.Context, j job, ahead []job) error {
	if s.outs(j.at)[j.b] != pending {
		return nil
	}
	return s.forks(ctx, []job{j}, ahead)
}

type job struct {
	at time.Duration
	b  int // the fork's branch, from 0
}

// forks runs jobs for the search, and ahead for later, Parallel at a time
// in that order, and records each fork's outcome: a job's in tried, one
// ahead in aheads, where the search takes it from when it gets to it
// (taken). Once the context ends it starts no more, and a fork it cut
// short stays pending.
func (s *search) forks(ctx context.Context, jobs, ahead []job) error {
	var todo []job
	for _, j := range jobs {
		if !s.taken(j) {
			todo = append(todo, j)
		}
	}
	n := len(todo)
	for _, j := range ahead {
		if _, ok := s.aheads[j]; !ok && s.outs(j.at)[j.b] == pending && len(todo) < s.opt.Parallel {
			todo = append(todo, j)
		}
	}
	if n == 0 {
		return nil
	}
	// Each fork's outcome is recorded, and Progress told, as it ends,
	// before its worker takes another: a Progress that ends the context
	// stops the search at once.
	var mu sync.Mutex
	run := func(ctx context.Context, i int) (*engine.Result, error) {
		j := todo[i]
		r, err := s.run(ctx, j.at, uint64(j.b+1))
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		o := passed
		if !r.Passed && r.Class == s.fail.Class {
			o = failed
		}
		if i < n {
			s.tried[j.at][j.b] = o
		} else {
			s.aheads[j] = o
		}
		s.runs++
		s.steps += r.Steps
		if s.opt.Progress != nil {
			s.opt.Progress(s.runs, s.most)
		}
		return r, nil
	}
	indices := func(yield func(int) bool) {
		for i := range todo {
			if !yield(i) {
				return
			}
		}
	}
	var firstErr error
	for d := range sweep.Ordered(ctx, indices, min(s.opt.Parallel, len(todo)), run) {
		if d.Err != nil && ctx.Err() == nil && firstErr == nil {
			firstErr = d.Err
		}
	}
	return firstErr
}

// taken moves the outcome of j from the forks run ahead to the search's,
// and reports whether there was one.
func (s *search) taken(j job) bool {
	o, ok := s.aheads[j]
	if ok {
		s.outs(j.at)[j.b] = o
		delete(s.aheads, j)
	}
	return ok
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
