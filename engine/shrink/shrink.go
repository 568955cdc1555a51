// Package shrink cuts a failing run's fault schedule down to a small one that
// still fails the same way: fewer faults, earlier and shorter ones, and a run
// that ends just past the failure.
package shrink

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/sweep"
)

// Options tune a shrink. None of them changes the schedule it ends with,
// except a Budget that runs out.
type Options struct {
	// Budget is the wall time shrink may take; 0 means no limit. When it
	// runs out, Shrink returns the smallest schedule found so far.
	Budget time.Duration
	// Parallel is how many runs go at once; below 1 means 1. Candidates are
	// still accepted in a fixed order, so the result does not depend on it.
	Parallel int
	// Progress, if set, hears after every batch of runs.
	Progress func(Progress)
	// NoForks runs every candidate from t=0. Otherwise the candidates that
	// keep the smallest schedule's past late into its run fork from a
	// recording of it (engine.Recordings), with the same results.
	NoForks bool
	// minSaved is engine.Recordings.MinSaved, for the tests.
	minSaved time.Duration
}

// Progress says how far a shrink has come.
type Progress struct {
	Runs   int    // runs so far, counted as Result.Runs counts them
	Faults int    // faults in the smallest failing schedule so far
	Step   string // what shrink is doing now
}

// Steps, as Progress.Step names them.
const (
	StepStart    = "running the seed"
	StepCut      = "cutting the duration"
	StepRemove   = "removing faults"
	StepSimplify = "moving faults earlier and shortening them"
)

// Result is what a shrink found.
type Result struct {
	// Start is the run of the starting schedule, or of the seed's own
	// faults when there was none. When it passed there is nothing to
	// shrink, and Schedule and Run are nil.
	Start *engine.Result
	// Schedule is the shrunk schedule, with ShrunkFrom (the faults of the
	// starting schedule) and ShrinkRuns set.
	Schedule *faults.Schedule
	// Run is the run of Schedule: it fails like Start (same class, same
	// node).
	Run *engine.Result
	// Runs is how many runs the shrink took, counted as if they ran one at
	// a time: runs made ahead in parallel and then not needed do not count,
	// so the figure does not depend on Options.Parallel.
	Runs int
	// Forked is how many runs forked from a recording of the smallest
	// schedule's run instead of running its past again (Options.NoForks),
	// runs made ahead in parallel included.
	Forked int
	// Exhausted is true when the budget ran out (or the context ended)
	// before shrinking finished: Schedule is the best found so far. Runs
	// the context cut short count for nothing; Schedule and Run are
	// always a schedule and the whole run of it.
	Exhausted bool
}

// Shrink runs the seed with start (nil: the faults the seed draws itself)
// and, if that fails, searches for a smaller schedule that fails the same
// way. Each step keeps a candidate only if its run fails with the same
// class and on the same node:
//
//  1. cut the duration to just past the failure;
//  2. remove faults: delta debugging over the list, then one at a time;
//  3. move timed faults earlier and faults at an operation to an earlier
//     operation, and shorten the faults that last; then try removing each
//     fault once more, since a fault moved earlier can make another useless;
//  4. cut the duration again.
//
// The same input always gives the same schedule, whatever Options.Parallel
// is, unless the budget runs out.
func Shrink(ctx context.Context, p *engine.Prepared, seed uint64, start *faults.Schedule, opt Options) (*Result, error) {
	forks := engine.Recordings{MinSaved: opt.minSaved}
	run := func(ctx context.Context, sch, parent *faults.Schedule, parentRun *engine.Result) (*engine.Result, error) {
		ro := engine.RunOptions{Seed: seed, Schedule: sch}
		if at, ok := agreeUntil(parent, sch); ok && !opt.NoForks {
			if at = min(at, keepsFired(parentRun, sch)); at > 0 {
				forks.Ran(p, seed, parent, parentRun)
				ro.From = forks.From(ctx, p, seed, parent, at)
			}
		}
		return p.Run(ctx, ro)
	}
	res, err := shrink(ctx, run, p.World.Duration, seed, start, opt)
	if res != nil {
		res.Forked = forks.Forked()
	}
	return res, err
}

// agreeUntil returns the latest moment before which sch keeps parent's
// faults, branches and duration (faults.Schedule.Keeps, what a fork from
// parent's run must keep), and false when that is t=0 or either is nil.
func agreeUntil(parent, sch *faults.Schedule) (time.Duration, bool) {
	if parent == nil || sch == nil || parent.Duration != sch.Duration {
		return 0, false
	}
	var moments []time.Duration
	for _, f := range parent.Faults {
		moments = append(moments, f.At)
	}
	for _, f := range sch.Faults {
		moments = append(moments, f.At)
	}
	for _, b := range parent.Branches {
		moments = append(moments, b.At)
	}
	for _, b := range sch.Branches {
		moments = append(moments, b.At)
	}
	if !sch.Keeps(parent, 0) {
		return 0, false // a fault at an operation changed: it may fire at any time
	}
	// Keeps(at) looks at what comes before at, so it holds up to the first
	// moment whose own faults or branches differ, and not after: search.
	slices.Sort(moments)
	moments = slices.Compact(moments)
	i := sort.Search(len(moments), func(i int) bool { return !sch.Keeps(parent, moments[i]+1) })
	if i == len(moments) {
		return 0, false // the same schedule: nothing to run that the cache has not
	}
	return moments[i], moments[i] > 0
}

// keepsFired is the latest moment before which sch keeps every fault at
// an operation that fired in parentRun: the moment the first one sch
// drops fired there. Such a fault's At in a schedule records when it
// fired in some run, not necessarily in this one (a fault moved to an
// earlier operation keeps its At), so agreeUntil, which goes by the
// schedules' At, may put a dropped fault after a moment it fired before;
// a fork from there would play back a past the candidate does not have.
func keepsFired(parentRun *engine.Result, sch *faults.Schedule) time.Duration {
	at := time.Duration(math.MaxInt64)
	if parentRun == nil || parentRun.Schedule == nil {
		return 0
	}
	same := func(a, b faults.Fault) bool {
		a.At, b.At = 0, 0
		return reflect.DeepEqual(a, b)
	}
	for _, f := range parentRun.Schedule.Faults {
		if k, _ := faults.Lookup(f.Kind); k.AtOp && !slices.ContainsFunc(sch.Faults, func(g faults.Fault) bool { return same(f, g) }) {
			at = min(at, f.At)
		}
	}
	return at
}

// runFunc runs the seed with a schedule (nil: the seed's own faults),
// a candidate that changes parent, the smallest schedule so far, whose
// run is parentRun.
type runFunc func(ctx context.Context, sch, parent *faults.Schedule, parentRun *engine.Result) (*engine.Result, error)

// shrink is Shrink over any runner, so the search can be tested on a
// model of a bug; horizon is the world's duration.
func shrink(ctx context.Context, run runFunc, horizon time.Duration, seed uint64, start *faults.Schedule, opt Options) (*Result, error) {
	s := &shrinker{ctx: ctx, run: run, horizon: horizon, seed: seed, opt: opt, par: max(opt.Parallel, 1), cache: map[string]*engine.Result{}}
	if opt.Budget > 0 {
		s.deadline = time.Now().Add(opt.Budget)
	}
	s.step = StepStart
	first, err := run(ctx, start, nil, nil)
	if err != nil {
		return nil, err
	}
	s.runs = 1
	res := &Result{Start: first}
	if first.Passed {
		res.Runs = s.runs
		return res, nil
	}
	if start == nil {
		start = first.Schedule
	}
	s.want = first
	s.best = start.Changed()
	s.best.Seed = seed
	s.bestRun = first
	s.cache[key(s.best)] = first
	s.report()

	s.cut()
	s.remove()
	s.simplify()
	s.step = StepRemove
	s.removeEach() // a fault moved earlier may have made another one useless
	s.normalize()
	s.cut()
	s.normalize()
	s.uncut(start)
	if s.err != nil {
		return nil, s.err
	}

	sch := s.best.Changed()
	sch.ShrunkFrom = len(start.Faults)
	sch.ShrinkRuns = s.runs
	res.Schedule, res.Run, res.Runs, res.Exhausted = sch, s.bestRun, s.runs, s.exhausted
	return res, nil
}

type shrinker struct {
	ctx      context.Context
	run      runFunc
	horizon  time.Duration // the world's duration, for a schedule without one
	seed     uint64
	opt      Options
	par      int
	deadline time.Time

	want    *engine.Result   // the failure to keep
	best    *faults.Schedule // the smallest schedule that still fails like want
	bestRun *engine.Result   // best's run
	runs    int
	// cache holds the runs a one-at-a-time shrink would have made, by
	// schedule: only those, so that what is counted does not depend on
	// how many ran ahead in parallel.
	cache     map[string]*engine.Result
	step      string
	exhausted bool
	err       error
}

// stopped reports whether shrinking must end now: an error, the context
// ended or the budget ran out.
func (s *shrinker) stopped() bool {
	if s.err != nil || s.exhausted {
		return true
	}
	if s.ctx.Err() != nil || (!s.deadline.IsZero() && !time.Now().Before(s.deadline)) {
		s.exhausted = true
	}
	return s.exhausted
}

// broken reports whether the last runAll left a candidate without a
// result: an error, or the context ended during a run.
func (s *shrinker) broken() bool { return s.err != nil || s.exhausted && s.ctx.Err() != nil }

// same reports whether a run fails the way the starting run did.
func (s *shrinker) same(r *engine.Result) bool {
	return !r.Passed && r.Class == s.want.Class && r.Node == s.want.Node
}

func (s *shrinker) report() {
	if s.opt.Progress != nil {
		s.opt.Progress(Progress{Runs: s.runs, Faults: len(s.best.Faults), Step: s.step})
	}
}

// runAll runs the candidates that are not cached, up to Parallel at once,
// and returns every candidate's result (nil after an error, or for a run
// the context cut short: then s.broken() is true).
func (s *shrinker) runAll(cands []*faults.Schedule) []*engine.Result {
	out := make([]*engine.Result, len(cands))
	keys := make([]string, len(cands))
	started := map[string]int{}
	var todo []int
	for i, c := range cands {
		keys[i] = key(c)
		if r, ok := s.cache[keys[i]]; ok {
			out[i] = r
			continue
		}
		if _, ok := started[keys[i]]; ok {
			continue
		}
		started[keys[i]] = i
		todo = append(todo, i)
	}
	parent, parentRun := s.best, s.bestRun // no run changes them
	run := func(ctx context.Context, i int) (*engine.Result, error) {
		return s.run(ctx, cands[i], parent, parentRun)
	}
	for d := range sweep.Ordered(s.ctx, slices.Values(todo), s.par, run) {
		switch {
		case d.Err != nil && s.ctx.Err() != nil:
			// Cut short (Ctrl-C): the shrink ends with the best so far.
			s.exhausted = true
		case d.Err != nil:
			if s.err == nil {
				s.err = d.Err
			}
		default:
			out[d.Job] = d.Res
		}
	}
	if s.ctx.Err() != nil {
		s.exhausted = true // the candidates it did not start are cut short too
	}
	for i := range cands {
		if out[i] == nil {
			if j, ok := started[keys[i]]; ok {
				out[i] = out[j]
			}
		}
	}
	return out
}

// visit counts a run a one-at-a-time shrink would have made and caches it.
func (s *shrinker) visit(c *faults.Schedule, r *engine.Result) {
	k := key(c)
	if _, ok := s.cache[k]; !ok {
		s.cache[k] = r
		s.runs++
	}
}

func (s *shrinker) accept(c *faults.Schedule, r *engine.Result) {
	s.best, s.bestRun = c, r
}

// first tests the candidates in order, Parallel at a time, and accepts the
// first one that fails the same way; it returns its index, or -1.
func (s *shrinker) first(cands []*faults.Schedule) int {
	for i := 0; i < len(cands); {
		if s.stopped() {
			return -1
		}
		batch := cands[i:min(i+s.par, len(cands))]
		res := s.runAll(batch)
		if s.broken() {
			return -1
		}
		for j, r := range res {
			s.visit(batch[j], r)
			if s.same(r) {
				s.accept(batch[j], r)
				s.report()
				return i + j
			}
		}
		s.report()
		i += len(batch)
	}
	return -1
}

// lowest binary searches [lo, hi] for the smallest i whose candidate fails
// the same way, taking hi's as failing without running it, and accepts that
// candidate when it is not hi's. With Parallel above 1 it runs ahead every
// probe the next few steps of the search could make, then walks the search
// as a one-at-a-time shrink would, so the answer is the same.
func (s *shrinker) lowest(lo, hi int64, cand func(int64) *faults.Schedule) int64 {
	depth := 1
	for (1<<(depth+1))-1 <= s.par {
		depth++
	}
	top := hi
	var found *engine.Result
	for lo < hi && !s.stopped() {
		var probes []int64
		var plan func(lo, hi int64, d int)
		plan = func(lo, hi int64, d int) {
			if lo >= hi || d == 0 {
				return
			}
			mid := lo + (hi-lo)/2
			probes = append(probes, mid)
			plan(lo, mid, d-1)
			plan(mid+1, hi, d-1)
		}
		plan(lo, hi, depth)
		cands := make([]*faults.Schedule, len(probes))
		for i, p := range probes {
			cands[i] = cand(p)
		}
		res := s.runAll(cands)
		if s.broken() {
			return top
		}
		for lo < hi {
			mid := lo + (hi-lo)/2
			i := slices.Index(probes, mid)
			if i < 0 {
				break
			}
			s.visit(cands[i], res[i])
			if s.same(res[i]) {
				hi, found = mid, res[i]
			} else {
				lo = mid + 1
			}
		}
		s.report()
	}
	if hi != top && found != nil {
		s.accept(cand(hi), found)
		s.report()
	}
	return hi
}

// cut ends the run just past the failure: 10% of the failure time later,
// at least 10ms, rounded up to a millisecond. Timed faults after the new
// end are dropped, since they could not fire.
func (s *shrinker) cut() {
	s.step = StepCut
	t := time.Duration(s.bestRun.SimNs)
	d := t + max(t/10, 10*time.Millisecond)
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	cur := s.best.Duration
	if cur == 0 {
		cur = s.horizon
	}
	if d >= cur || s.stopped() {
		return
	}
	c := s.best.Changed()
	c.Duration = d
	c.Faults = slices.DeleteFunc(c.Faults, func(f faults.Fault) bool { return !atOp(f) && f.At > d })
	s.first([]*faults.Schedule{c})
}

// uncut gives the shrunk schedule back the horizon it started with, when
// cut shortened it and the failure is the same there: cut speeds the
// search up, but a schedule saved with it would end before the workload's
// check once the program answers later, and pass without checking
// anything (a pin that "passes now").
func (s *shrinker) uncut(start *faults.Schedule) {
	want := start.Duration
	if want == 0 {
		want = s.horizon
	}
	if s.best.Duration == 0 || s.best.Duration >= want || s.stopped() {
		return
	}
	c := s.best.Changed()
	c.Duration = want
	s.first([]*faults.Schedule{c})
}

// remove drops faults: first the empty schedule, then delta debugging
// (ddmin) over the list, then each remaining fault one at a time.
func (s *shrinker) remove() {
	s.step = StepRemove
	if len(s.best.Faults) == 0 {
		return
	}
	if s.first([]*faults.Schedule{s.with(nil)}) == 0 {
		return
	}
	// ddmin: split into n chunks; keep a chunk that fails alone, else a
	// complement that does; else split finer, until chunks are single
	// faults.
	n := 2
ddmin:
	for len(s.best.Faults) >= 2 && !s.stopped() {
		fs := s.best.Faults
		n = min(n, len(fs))
		chunks := split(fs, n)
		var cands []*faults.Schedule
		for _, ch := range chunks {
			cands = append(cands, s.with(ch))
		}
		if n > 2 { // with two chunks, each complement is the other chunk
			for i := range chunks {
				var rest []faults.Fault
				for j, ch := range chunks {
					if j != i {
						rest = append(rest, ch...)
					}
				}
				cands = append(cands, s.with(rest))
			}
		}
		switch i := s.first(cands); {
		case i >= 0 && i < len(chunks):
			n = 2
		case i >= 0:
			n = max(n-1, 2)
		case n >= len(fs):
			break ddmin
		default:
			n = min(2*n, len(fs))
		}
	}
	s.removeEach()
}

// removeEach tries removing each fault, from the first: after a removal,
// the fault that moved into that place is tried next.
func (s *shrinker) removeEach() {
	for i := 0; i < len(s.best.Faults) && !s.stopped(); {
		var cands []*faults.Schedule
		for j := i; j < len(s.best.Faults); j++ {
			cands = append(cands, s.with(slices.Delete(slices.Clone(s.best.Faults), j, j+1)))
		}
		k := s.first(cands)
		if k < 0 {
			break
		}
		i += k
	}
}

// simplify moves each fault as early as it still fails and shortens the
// faults that last: a timed fault's at (and its until with it) on a 1ms
// grid, an operation fault's op, and a lasting fault's span on a 1ms grid.
func (s *shrinker) simplify() {
	s.step = StepSimplify
	for i := 0; i < len(s.best.Faults) && !s.stopped(); i++ {
		f := s.best.Faults[i]
		if atOp(f) {
			s.lowest(1, int64(f.Op), func(op int64) *faults.Schedule {
				return s.change(i, func(g *faults.Fault) { g.Op = uint64(op) })
			})
		} else if grid := int64(f.At / time.Millisecond); grid > 0 {
			s.lowest(0, grid, func(k int64) *faults.Schedule {
				return s.change(i, func(g *faults.Fault) {
					at := time.Duration(k) * time.Millisecond
					if k == grid {
						at = f.At
					}
					if g.Until >= g.At {
						g.Until -= g.At - at
					}
					g.At = at
				})
			})
		}
		f = s.best.Faults[i]
		if k, _ := faults.Lookup(f.Kind); k.Lasts && f.Until > f.At {
			span := f.Until - f.At
			grid := int64(span / time.Millisecond)
			s.lowest(0, grid, func(k int64) *faults.Schedule {
				return s.change(i, func(g *faults.Fault) {
					g.Until = g.At + time.Duration(k)*time.Millisecond
					if k == grid {
						g.Until = g.At + span
					}
				})
			})
		}
	}
}

// normalize swaps the best schedule for the faults its run actually
// applied, when that still fails the same way: faults that never fired
// drop out, and an operation fault's at says when it fired after it moved.
func (s *shrinker) normalize() {
	if s.stopped() {
		return
	}
	c := s.with(s.bestRun.Schedule.Faults)
	if key(c) != key(s.best) {
		s.first([]*faults.Schedule{c})
	}
}

// with is the best schedule with these faults instead of its own.
func (s *shrinker) with(fs []faults.Fault) *faults.Schedule {
	c := s.best.Changed()
	c.Faults = slices.Clone(fs)
	return c
}

// change is the best schedule with fault i edited.
func (s *shrinker) change(i int, edit func(*faults.Fault)) *faults.Schedule {
	c := s.best.Changed()
	edit(&c.Faults[i])
	return c
}

func atOp(f faults.Fault) bool {
	k, _ := faults.Lookup(f.Kind)
	return k.AtOp
}

// split cuts fs into n chunks of nearly equal size, in order.
func split(fs []faults.Fault, n int) [][]faults.Fault {
	var out [][]faults.Fault
	for i := 0; i < n; i++ {
		out = append(out, fs[i*len(fs)/n:(i+1)*len(fs)/n])
	}
	return out
}

// key identifies a candidate: its schedule as JSON.
func key(s *faults.Schedule) string {
	b, err := s.MarshalJSON()
	if err != nil {
		panic(fmt.Sprintf("shrink: a schedule did not marshal: %v", err))
	}
	return string(b)
}
