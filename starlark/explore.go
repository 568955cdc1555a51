package starlark

// explore(w, strategy=..., seeds=..., budget=..., parallel=...) runs a
// search strategy written in Starlark. A strategy is a function of one
// argument, an explore context (ctx), that decides which runs to make:
// ctx.run, ctx.run_many (in parallel, results in input order), ctx.branch.
// The context counts runs against the budget and keeps every failing run;
// when the budget is spent, the next run ends the strategy, and explore
// returns what it found.

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/sweep"
	"github.com/seedfall/seedfall/engine/world"
)

func init() {
	registerBuiltin("explore", func(e *Env) sl.Value { return sl.NewBuiltin("explore", e.exploreFn) })
}

// Budget bounds an exploration: a number of runs, which keeps the result
// the same from one exploration to the next, or wall time, which does not
// (how many runs fit depends on the machine).
type Budget struct {
	Runs int           // > 0: at most this many runs
	Time time.Duration // > 0: start no run after this much wall time
}

func (b Budget) String() string {
	if b.Runs > 0 {
		return fmt.Sprintf("%d runs", b.Runs)
	}
	return b.Time.String()
}

// DefaultBudget is explore's budget when none is given.
var DefaultBudget = Budget{Runs: 1000}

// DefaultSeeds is the last of the seeds explore draws from when none are
// given: 1 to DefaultSeeds, more than any budget reaches.
const DefaultSeeds = 1_000_000

// ParseBudget reads a budget: "500" or "500 runs" is a run count, "10m" or
// "90s" wall time.
func ParseBudget(s string) (Budget, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t, "runs"), "run"))
	if n, err := strconv.Atoi(t); err == nil {
		if n < 1 {
			return Budget{}, fmt.Errorf("budget %q: a run count is at least 1", s)
		}
		return Budget{Runs: n}, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d <= 0 {
		return Budget{}, fmt.Errorf("budget %q is neither a run count like 500 nor a wall time like \"10m\"", s)
	}
	return Budget{Time: d}, nil
}

// budgetOf reads explore's budget= argument: an int of runs, or a wall
// time as a string or duration.
func budgetOf(v sl.Value) (Budget, error) {
	switch x := v.(type) {
	case sl.NoneType:
		return DefaultBudget, nil
	case sl.Int:
		n, ok := x.Int64()
		if !ok || n < 1 || n > 1<<31 {
			return Budget{}, fmt.Errorf("budget %v: a run count is an int from 1", x)
		}
		return Budget{Runs: int(n)}, nil
	case sl.String:
		return ParseBudget(string(x))
	case Duration:
		if x <= 0 {
			return Budget{}, fmt.Errorf("budget %v: a wall time is positive", time.Duration(x))
		}
		return Budget{Time: time.Duration(x)}, nil
	}
	return Budget{}, fmt.Errorf("budget is a %s; give a run count (an int, deterministic) or a wall time like \"10m\"", v.Type())
}

// ExploreOptions configure Explore.
type ExploreOptions struct {
	Seeds    engine.Seeds // the seeds a strategy draws from (ctx.seeds); none: 1 to DefaultSeeds
	Budget   Budget       // zero: DefaultBudget
	Parallel int          // runs at once in run_many; below 1: the Env's
	// Progress, when not nil, is called after every run or batch of runs,
	// on the strategy's goroutine.
	Progress func(ExploreProgress)
	// Name names the strategy in errors (default: the function's name).
	Name string
	// StopAtFirst stops the strategy at its first failing run: the runs
	// after it in the order of its batch are not made (or are cancelled
	// when they ran alongside it) and do not count, so the runs counted
	// are the same at any parallelism.
	StopAtFirst bool
	// Context is the context of the strategy's runs (nil: the Env's, which
	// Cancel ends). Once it ends, the runs in flight stop, the strategy's
	// next run fails, and Explore returns what was found (ErrInterrupted).
	Context context.Context
}

// ExploreProgress is how far an exploration is.
type ExploreProgress struct {
	Runs     int
	Work     float64 // the budget spent, in runs (forks count the share they ran)
	Shown    []StatusCount
	Failures int
	Elapsed  time.Duration
	Budget   Budget
}

// String is the progress line: "40 runs of 100, 3 failures"; when forks
// made runs cost less than one, the work: "146 runs, 100.0 of 100, corpus
// 12, blocks 180, 3 failures".
func (p ExploreProgress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", plural(p.Runs, "run"))
	switch {
	case p.Budget.Runs > 0 && math.Abs(p.Work-float64(p.Runs)) > 0.05:
		fmt.Fprintf(&b, ", %.1f of %d", p.Work, p.Budget.Runs)
	case p.Budget.Runs > 0:
		fmt.Fprintf(&b, " of %d", p.Budget.Runs)
	case p.Budget.Time > 0:
		fmt.Fprintf(&b, " (%s of %s)", p.Elapsed.Round(time.Second), p.Budget.Time)
	}
	for _, s := range p.Shown {
		fmt.Fprintf(&b, ", %s %d", s.Name, s.N)
	}
	fmt.Fprintf(&b, ", %s", plural(p.Failures, "failure"))
	return b.String()
}

// Exploration is what explore found: a Starlark value.
type Exploration struct {
	World     *World
	Strategy  string
	Runs      int     // runs made
	Work      float64 // the budget they spent, in runs: forks count the share they ran
	Failures  []*Run  // failing runs, distinct by digest, in the order found
	Found     []*Run  // runs the strategy reported with ctx.found
	Value     sl.Value
	StoppedBy string // "budget" (spent), "strategy" (it returned with budget left), "failure" (StopAtFirst) or "interrupted"
	Budget    Budget
	// Coverage is the user's code that the runs reached, merged over
	// every run that had coverage on (nil when none had).
	Coverage *cover.Run
}

var _ sl.HasAttrs = (*Exploration)(nil)

func (x *Exploration) String() string {
	var seeds []string
	for _, r := range x.Failures {
		s := strconv.FormatUint(r.Seed, 10)
		if len(r.Result.Schedule.Branches) > 0 {
			s += "+branch"
		}
		seeds = append(seeds, s)
	}
	out := fmt.Sprintf("<exploration %s: %s, %s", x.Strategy, countOf(x.Runs, "run"), countOf(len(x.Failures), "failure"))
	if len(seeds) > 0 {
		const most = 8
		if len(seeds) > most {
			seeds = append(seeds[:most], "...")
		}
		out += " (seeds " + strings.Join(seeds, ", ") + ")"
	}
	return out + ">"
}

func (x *Exploration) Type() string   { return "exploration" }
func (x *Exploration) Freeze()        {}
func (x *Exploration) Truth() sl.Bool { return sl.Bool(len(x.Failures) > 0) }
func (x *Exploration) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable: exploration")
}

func (x *Exploration) AttrNames() []string {
	return []string{"best", "budget", "coverage", "failures", "found", "runs", "stopped_by", "strategy", "value", "work", "world"}
}

func (x *Exploration) Attr(name string) (sl.Value, error) {
	switch name {
	case "coverage":
		return coverageDict(x.Coverage), nil
	case "failures":
		return runList(x.Failures), nil
	case "found":
		return runList(x.Found), nil
	case "runs":
		return sl.MakeInt(x.Runs), nil
	case "work":
		return sl.Float(x.Work), nil
	case "best":
		if b := x.Best(); b != nil {
			return b, nil
		}
		return sl.None, nil
	case "value":
		if x.Value == nil {
			return sl.None, nil
		}
		return x.Value, nil
	case "stopped_by":
		return sl.String(x.StoppedBy), nil
	case "strategy":
		return sl.String(x.Strategy), nil
	case "budget":
		if x.Budget.Runs > 0 {
			return sl.MakeInt(x.Budget.Runs), nil
		}
		return Duration(x.Budget.Time), nil
	case "world":
		return x.World, nil
	}
	return nil, nil
}

// Best is the failure to look at first: the fewest faults, then the
// fewest branches, then the earliest end; ties go to the first found.
func (x *Exploration) Best() *Run {
	var best *Run
	key := func(r *Run) []int64 {
		s := r.Result.Schedule
		return []int64{int64(len(s.Faults)), int64(len(s.Branches)), r.Result.SimNs}
	}
	for _, r := range x.Failures {
		if best == nil || slices.Compare(key(r), key(best)) < 0 {
			best = r
		}
	}
	return best
}

// coverageDict is x.coverage: a dict of blocks (ran), stmts (ran) and
// all_stmts (of the covered packages), as r.coverage is; None without
// coverage.
func coverageDict(c *cover.Run) sl.Value {
	if c == nil {
		return sl.None
	}
	hit, all := c.Stmts()
	d := sl.NewDict(3)
	_ = d.SetKey(sl.String("blocks"), sl.MakeInt(c.Hit.Len()))
	_ = d.SetKey(sl.String("stmts"), sl.MakeInt(hit))
	_ = d.SetKey(sl.String("all_stmts"), sl.MakeInt(all))
	d.Freeze()
	return d
}

func runList(rs []*Run) *sl.List {
	l := make([]sl.Value, len(rs))
	for i, r := range rs {
		l[i] = r
	}
	v := sl.NewList(l)
	v.Freeze()
	return v
}

// errBudget ends a strategy when its budget is spent: every ctx.run after
// that fails with it, and explore returns normally.
var errBudget = errors.New("the exploration's budget is spent")

// exploreCtx is the strategy's ctx.
type exploreCtx struct {
	env      *Env
	world    *World
	seeds    sl.Value
	parallel int
	budget   Budget
	start    time.Time
	progress func(ExploreProgress)

	ctx      context.Context // of the runs; nil: the Env's
	runs     int
	failures []*Run
	seen     map[string]bool // failing digests
	found    []*Run
	stopped  string // why the strategy was stopped, "" while it runs
	// work is the budget spent, in runs: a run from t=0 is 1, a fork the
	// share of its parent's run it makes, a recording the share it runs
	// (forks.go). runs counts the runs.
	work  float64
	shown []StatusCount // ctx.status
	// stopAtFirst: the strategy stops after the batch of its first failure
	// (ExploreOptions.StopAtFirst).
	stopAtFirst bool
	// coverage is the user's code the runs reached, merged in the order
	// of their batches' items (Exploration.Coverage).
	coverage *cover.Run
}

var _ sl.HasAttrs = (*exploreCtx)(nil)

func (c *exploreCtx) String() string {
	return fmt.Sprintf("<explore context: %s of %s, %s>", countOf(c.runs, "run"), c.budget, countOf(len(c.failures), "failure"))
}
func (c *exploreCtx) Type() string          { return "explore_context" }
func (c *exploreCtx) Freeze()               {}
func (c *exploreCtx) Truth() sl.Bool        { return sl.True }
func (c *exploreCtx) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: explore_context") }

func (c *exploreCtx) AttrNames() []string {
	return []string{"branch", "branch_schedule", "failures", "found", "mutate", "parallel", "remaining", "run", "run_many", "runs", "seeds", "status", "work", "world"}
}

func (c *exploreCtx) Attr(name string) (sl.Value, error) {
	switch name {
	case "world":
		return c.world, nil
	case "seeds":
		return c.seeds, nil
	case "parallel":
		return sl.MakeInt(c.parallel), nil
	case "runs":
		return sl.MakeInt(c.runs), nil
	case "failures":
		return runList(c.failures), nil
	case "remaining":
		return sl.NewBuiltin("remaining", c.remaining), nil
	case "run":
		return sl.NewBuiltin("run", c.run), nil
	case "run_many":
		return sl.NewBuiltin("run_many", c.runMany), nil
	case "branch":
		return sl.NewBuiltin("branch", c.branch), nil
	case "branch_schedule":
		return sl.NewBuiltin("branch_schedule", c.branchSchedule), nil
	case "found":
		return sl.NewBuiltin("found", c.foundFn), nil
	case "mutate":
		return sl.NewBuiltin("mutate", c.mutate), nil
	case "status":
		return sl.NewBuiltin("status", c.status), nil
	case "work":
		return sl.Float(c.work), nil
	}
	return nil, nil
}

// left is how many more runs may start now: the run count left, or, for
// wall time, n when time is left and 0 when not.
func (c *exploreCtx) left(n int) int {
	if c.budget.Runs > 0 {
		// Whole runs: a run from t=0 costs 1.
		return min(n, max(0, int(math.Ceil(float64(c.budget.Runs)-c.work-1e-9))))
	}
	if time.Since(c.start) >= c.budget.Time {
		return 0
	}
	return n
}

// remaining() is the budget left: an int of runs, or a duration of wall
// time; either is false once spent, so `while ctx.remaining():` works.
func (c *exploreCtx) remaining(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 0); err != nil {
		return nil, err
	}
	if c.budget.Runs > 0 {
		// Whole runs left: a fork that costs a share still takes one.
		return sl.MakeInt(int(math.Ceil(float64(c.budget.Runs) - c.work - 1e-9))), nil
	}
	return Duration(max(0, c.budget.Time-time.Since(c.start))), nil
}

// job is one run to make.
type job struct {
	w    *World
	seed uint64
	sch  *faults.Schedule
	// parent and at: the schedule keeps parent's past before at, so the
	// run may fork from a checkpoint of parent's (forks.go).
	parent *Run
	at     time.Duration
	from   *engine.Checkpoint
}

// jobOf reads a run_many item: a seed, a schedule (its seed), or a dict
// with seed, schedule and world.
func (c *exploreCtx) jobOf(v sl.Value) (job, error) {
	j := job{w: c.world}
	switch x := v.(type) {
	case sl.Int:
		n, err := seedOf(x)
		j.seed = n
		return j, err
	case *Schedule:
		j.sch, j.seed = x.S, x.S.Seed
		if x.parent != nil {
			j.w, j.parent, j.at = x.parent.World, x.parent, x.forkAt
		}
		return j, nil
	case sl.IterableMapping:
		seed, sch, w := sl.Value(sl.None), sl.Value(sl.None), sl.Value(sl.None)
		for _, kv := range x.Items() {
			k, _ := sl.AsString(kv[0])
			switch k {
			case "seed":
				seed = kv[1]
			case "schedule":
				sch = kv[1]
			case "world":
				w = kv[1]
			default:
				return j, fmt.Errorf("unknown key %q; a run is a dict of seed, schedule and world", k)
			}
		}
		return c.jobFrom(seed, sch, w)
	}
	return j, fmt.Errorf("got a %s; give a seed, a schedule, or a dict(seed=, schedule=, world=)", v.Type())
}

// jobFrom reads ctx.run's arguments.
func (c *exploreCtx) jobFrom(seed, schV, wV sl.Value) (job, error) {
	j := job{w: c.world}
	if wV != sl.None {
		w, ok := wV.(*World)
		if !ok {
			return j, fmt.Errorf("world is a %s, not a world", wV.Type())
		}
		j.w = w
	}
	if schV != sl.None {
		s, err := toSchedule(schV)
		if err != nil {
			return j, fmt.Errorf("schedule: %v", err)
		}
		j.sch, j.seed = s, s.Seed
		if x, ok := schV.(*Schedule); ok && x.parent != nil && (wV == sl.None || wV == x.parent.World) {
			j.w, j.parent, j.at = x.parent.World, x.parent, x.forkAt
		}
	}
	if seed != sl.None {
		n, err := seedOf(seed)
		if err != nil {
			return j, err
		}
		j.seed = n
	} else if j.sch == nil {
		return j, fmt.Errorf("say which seed to run: seed=N, or a schedule=")
	}
	return j, nil
}

// runJobs runs jobs, up to parallel at once, and returns the runs of the
// prefix the budget allowed, in input order, recording failures in that
// order so that the result does not depend on which run ended first.
func (c *exploreCtx) runJobs(fn string, jobs []job) ([]*Run, error) {
	if c.left(1) == 0 {
		c.stopped = "budget"
		return nil, errBudget
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = c.env.Context()
	}
	n, err := c.forks(ctx, jobs)
	if err != nil {
		return nil, err
	}
	out := make([]*Run, n)
	errs := make([]error, n)
	// Items are taken in order, and none once the wall time is spent, so
	// the runs made are always a prefix of the items.
	items := func(yield func(int) bool) {
		for i := range n {
			if c.budget.Time > 0 && time.Since(c.start) >= c.budget.Time || !yield(i) {
				return
			}
		}
	}
	run := func(ctx context.Context, i int) (*Run, error) {
		if jobs[i].parent != nil {
			return c.env.runFrom(ctx, jobs[i].w, jobs[i].seed, jobs[i].sch, jobs[i].from)
		}
		return c.env.RunValue(ctx, jobs[i].w, jobs[i].seed, jobs[i].sch)
	}
	done := 0
	for d := range sweep.Ordered(ctx, items, c.parallel, run) {
		out[d.Job], errs[d.Job] = d.Res, d.Err
		done++
		// With StopAtFirst the runs after the first failure, in the order
		// of the items, are not made (those in flight are cancelled), so
		// what counts is the same at any -parallel.
		if c.stopAtFirst && d.Err == nil && d.Res != nil && !d.Res.Result.Passed {
			break
		}
	}
	out, errs = out[:done], errs[:done]
	// A run cut short is no run: the others count, and their failures
	// are kept, before the strategy stops.
	cut := ctx.Err() != nil // no item starts once the context ends
	for i, err := range errs {
		if errors.Is(err, ErrInterrupted) || err != nil && ctx.Err() != nil {
			cut = true
			continue
		}
		if err != nil {
			what := fmt.Sprintf("seed %d", jobs[i].seed)
			if len(jobs) > 1 {
				what = fmt.Sprintf("item %d (seed %d)", i, jobs[i].seed)
			}
			return nil, fmt.Errorf("%s: %s: %w", fn, what, err)
		}
	}
	for i, r := range out {
		if r == nil {
			continue
		}
		c.runs++
		c.work += jobs[i].cost()
		if r.Result.Coverage != nil {
			c.coverage = cover.MergeRun(c.coverage, r.Result.Coverage)
		}
		if !r.Result.Passed && !c.seen[r.Result.Digest] {
			c.seen[r.Result.Digest] = true
			c.failures = append(c.failures, r)
		}
	}
	if cut {
		c.stopped = "interrupted"
		return nil, ErrInterrupted
	}
	if c.progress != nil {
		c.progress(ExploreProgress{Runs: c.runs, Work: c.work, Failures: len(c.failures), Elapsed: time.Since(c.start), Budget: c.budget, Shown: c.shown})
	}
	if c.stopAtFirst && len(c.failures) > 0 {
		c.stopped = "failure"
		return nil, errBudget
	}
	if done < len(jobs) {
		c.stopped = "budget"
		return nil, errBudget
	}
	return out, nil
}

// run(seed=None, schedule=None, world=None) makes one run: of ctx.world
// unless world= names another, with the seed's own faults or the schedule.
func (c *exploreCtx) run(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	seed, sch, w := sl.Value(sl.None), sl.Value(sl.None), sl.Value(sl.None)
	if err := sl.UnpackArgs(b.Name(), args, kw, "seed?", &seed, "schedule?", &sch, "world?", &w); err != nil {
		return nil, err
	}
	j, err := c.jobFrom(seed, sch, w)
	if err != nil {
		return nil, fmt.Errorf("run: %v", err)
	}
	rs, err := c.runJobs("run", []job{j})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// run_many(items) makes a run of each item (a seed, a schedule, or a dict
// of seed, schedule and world), ctx.parallel at a time, and returns them in
// the items' order. When the budget cannot take them all, the ones that fit
// are made and counted, and the strategy ends.
func (c *exploreCtx) runMany(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	var items sl.Iterable
	if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &items); err != nil {
		return nil, err
	}
	var jobs []job
	it := items.Iterate()
	defer it.Done()
	var v sl.Value
	for i := 0; it.Next(&v); i++ {
		j, err := c.jobOf(v)
		if err != nil {
			return nil, fmt.Errorf("run_many: item %d: %v", i, err)
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 {
		return sl.NewList(nil), nil
	}
	rs, err := c.runJobs("run_many", jobs)
	if err != nil {
		return nil, err
	}
	return runList(rs), nil
}

// branchOf is r's schedule with one more branch: from the first step at or
// after at, the stream (every stream when "") draws from a seed re-keyed
// with key. The rules are branch()'s.
func branchOf(fn string, r *Run, streamV sl.Value, at durationArg, key int) (*faults.Schedule, error) {
	stream := ""
	if streamV != sl.None {
		s, ok := sl.AsString(streamV)
		if !ok {
			return nil, fmt.Errorf("%s: stream is a %s; name one of %s, or None for all", fn, streamV.Type(), strings.Join(faults.BranchStreams, ", "))
		}
		stream = s
	}
	if stream != "" && !slices.Contains(faults.BranchStreams, stream) {
		hint := ""
		if s := world.Suggest(stream, faults.BranchStreams); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("%s: %q is not a stream%s; name one of %s, or None for all", fn, stream, hint, strings.Join(faults.BranchStreams, ", "))
	}
	if key < 0 {
		return nil, fmt.Errorf("%s: key %d is negative; keys are ints from 0", fn, key)
	}
	if at < 0 {
		return nil, fmt.Errorf("%s: at %v is negative", fn, time.Duration(at))
	}
	sch := r.Schedule()
	if n := len(sch.Branches); n > 0 && time.Duration(at) < sch.Branches[n-1].At {
		return nil, fmt.Errorf("%s: at %v is before the run's last branch at %v: branches must not go back in time", fn, time.Duration(at), sch.Branches[n-1].At)
	}
	if end := sch.Duration; end > 0 && time.Duration(at) > end {
		return nil, fmt.Errorf("%s: at %v is after the end of the run at %v", fn, time.Duration(at), end)
	}
	sch = sch.Changed()
	sch.Seed = r.Seed
	sch.Branches = append(sch.Branches, faults.Branch{At: time.Duration(at), Key: uint64(key), Stream: stream})
	return sch, nil
}

func unpackBranch(b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (*Run, *faults.Schedule, error) {
	var r *Run
	streamV := sl.Value(sl.None)
	at := durationArg(time.Second)
	key := 1
	if err := sl.UnpackArgs(b.Name(), args, kw, "r", &r, "at?", &at, "stream?", &streamV, "key?", &key); err != nil {
		return nil, nil, err
	}
	sch, err := branchOf(b.Name(), r, streamV, at, key)
	return r, sch, err
}

// branch(r, at="1s", stream=None, key=1) replays r with one more branch,
// as the branch() builtin does, counted against the budget.
func (c *exploreCtx) branch(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	r, sch, err := unpackBranch(b, args, kw)
	if err != nil {
		return nil, err
	}
	rs, err := c.runJobs("branch", []job{{w: r.World, seed: r.Seed, sch: sch}})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// branch_schedule(r, at="1s", stream=None, key=1) is the schedule
// ctx.branch would run, without running it: give a list of them to
// run_many to branch in parallel. It runs in ctx.world.
func (c *exploreCtx) branchSchedule(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	r, sch, err := unpackBranch(b, args, kw)
	if err != nil {
		return nil, err
	}
	out := NewSchedule(sch, r.World.w)
	out.parent, out.forkAt = r, sch.Branches[len(sch.Branches)-1].At
	return out, nil
}

// found(r) reports a run the strategy finds worth keeping, failing or
// not (a passing run whose logs show trouble): it joins .found.
func (c *exploreCtx) foundFn(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	var r *Run
	if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &r); err != nil {
		return nil, err
	}
	for _, f := range c.found {
		if f.Result.Digest == r.Result.Digest {
			return sl.None, nil
		}
	}
	c.found = append(c.found, r)
	return sl.None, nil
}

// seedsValue makes ctx.seeds: a range when the seeds are consecutive (so
// a million seeds cost nothing), else a seeds value, which holds the list's
// spans and reads like a frozen list of its seeds.
func seedsValue(t *sl.Thread, seeds engine.Seeds) (sl.Value, error) {
	if first, last, ok := seeds.Range(); ok && last < 1<<62 {
		return sl.Call(t, sl.Universe["range"], sl.Tuple{sl.MakeUint64(first), sl.MakeUint64(last + 1)}, nil)
	}
	return seedList{seeds}, nil
}

// seedList is a list of seeds such as "2-3,9", as Starlark sees it: an
// immutable sequence of ints that can be indexed, sliced, iterated and
// searched with `in`, at the memory cost of its spans, whatever the seeds.
type seedList struct{ s engine.Seeds }

var (
	_ sl.Indexable  = seedList{}
	_ sl.Sequence   = seedList{}
	_ sl.Sliceable  = seedList{}
	_ sl.Container  = seedList{}
	_ sl.Comparable = seedList{}
)

func (l seedList) String() string        { return fmt.Sprintf("seeds(%q)", l.s.String()) }
func (l seedList) Type() string          { return "seeds" }
func (l seedList) Freeze()               {}
func (l seedList) Truth() sl.Bool        { return l.s.Len() > 0 }
func (l seedList) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: seeds") }
func (l seedList) Len() int              { return l.s.Len() }
func (l seedList) Index(i int) sl.Value  { return sl.MakeUint64(l.s.At(i)) }

func (l seedList) Iterate() sl.Iterator {
	next, stop := iter.Pull(l.s.All())
	return &seedIterator{next: next, stop: stop}
}

// Slice is a seeds value again when step is 1, else a frozen list.
func (l seedList) Slice(start, end, step int) sl.Value {
	if step == 1 {
		if end < start {
			end = start
		}
		return seedList{l.s.Slice(start, end)}
	}
	var out []sl.Value
	for i := start; (step > 0 && i < end) || (step < 0 && i > end); i += step {
		out = append(out, l.Index(i))
	}
	v := sl.NewList(out)
	v.Freeze()
	return v
}

func (l seedList) Has(x sl.Value) (bool, error) {
	i, ok := x.(sl.Int)
	if !ok {
		return false, nil
	}
	seed, ok := i.Uint64()
	return ok && l.s.Has(seed), nil
}

// CompareSameType: two seeds values are equal when they name the same
// seeds in the same order.
func (l seedList) CompareSameType(op syntax.Token, y sl.Value, depth int) (bool, error) {
	eq := l.s.String() == y.(seedList).s.String()
	switch op {
	case syntax.EQL:
		return eq, nil
	case syntax.NEQ:
		return !eq, nil
	}
	return false, fmt.Errorf("%s %s %s not implemented", l.Type(), op, y.Type())
}

type seedIterator struct {
	next func() (uint64, bool)
	stop func()
}

func (it *seedIterator) Next(p *sl.Value) bool {
	seed, ok := it.next()
	if ok {
		*p = sl.MakeUint64(seed)
	}
	return ok
}

func (it *seedIterator) Done() { it.stop() }

func defaultSeeds(t *sl.Thread) (sl.Value, error) {
	return sl.Call(t, sl.Universe["range"], sl.Tuple{sl.MakeInt(1), sl.MakeInt(DefaultSeeds + 1)}, nil)
}

// seedsOf reads explore's seeds= argument: a range, a list of ints, or a
// string like "1-1000" or "2-3,9".
func seedsOf(t *sl.Thread, v sl.Value) (sl.Value, error) {
	switch x := v.(type) {
	case sl.NoneType:
		return nil, nil
	case seedList:
		if x.Len() == 0 {
			return nil, fmt.Errorf("seeds is empty; give a range like range(1, 1001)")
		}
		return x, nil // its seeds are seeds: ctx.seeds of another exploration, or a slice of it
	case sl.String:
		seeds, err := engine.ParseSeeds(string(x))
		if err != nil {
			return nil, err
		}
		return seedsValue(t, seeds)
	case sl.Iterable:
		n := 0
		it := x.Iterate()
		defer it.Done()
		var s sl.Value
		for it.Next(&s) {
			if _, err := seedOf(s); err != nil {
				return nil, fmt.Errorf("seeds[%d]: %v", n, err)
			}
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("seeds is empty; give a range like range(1, 1001)")
		}
		if _, ok := x.(sl.Indexable); !ok {
			return nil, fmt.Errorf("seeds is a %s; give a range, a list of ints or a string like \"1-1000\"", v.Type())
		}
		return v, nil
	}
	return nil, fmt.Errorf("seeds is a %s; give a range, a list of ints or a string like \"1-1000\"", v.Type())
}

// Explore runs strategy on w. The Exploration is returned even with an
// error when the exploration was interrupted (ErrInterrupted), so that a
// caller can show what was found before.
func (e *Env) Explore(t *sl.Thread, w *World, strategy sl.Callable, o ExploreOptions) (*Exploration, error) {
	var sv sl.Value
	var err error
	if o.Seeds.Len() == 0 {
		sv, err = defaultSeeds(t)
	} else {
		sv, err = seedsValue(t, o.Seeds)
	}
	if err != nil {
		return nil, err
	}
	return e.explore(t, w, strategy, sv, o)
}

func (e *Env) explore(t *sl.Thread, w *World, strategy sl.Callable, seeds sl.Value, o ExploreOptions) (*Exploration, error) {
	if o.Budget == (Budget{}) {
		o.Budget = DefaultBudget
	}
	if o.Parallel < 1 {
		o.Parallel = e.o.Parallel
	}
	name := o.Name
	if name == "" {
		name = strategy.Name()
	}
	c := &exploreCtx{env: e, world: w, seeds: seeds, parallel: o.Parallel, budget: o.Budget, ctx: o.Context,
		start: time.Now(), progress: o.Progress, seen: map[string]bool{}, stopAtFirst: o.StopAtFirst}
	v, err := sl.Call(t, strategy, sl.Tuple{c}, nil)
	x := &Exploration{World: w, Strategy: name, Runs: c.runs, Work: c.work, Failures: c.failures, Found: c.found, Value: v, Budget: o.Budget, Coverage: c.coverage}
	switch {
	case err == nil && c.left(1) == 0:
		x.StoppedBy = "budget" // it returned with none left
	case err == nil:
		x.StoppedBy = "strategy"
	case errors.Is(err, errBudget) && (c.stopped == "budget" || c.stopped == "failure"):
		x.StoppedBy, x.Value = c.stopped, nil
	case errors.Is(err, ErrInterrupted):
		x.StoppedBy, x.Value = "interrupted", nil
		return x, ErrInterrupted
	default:
		return nil, strategyError(name, err)
	}
	return x, nil
}

// strategyError names where in its file a strategy failed: the innermost
// frame in a script, with the message.
func strategyError(name string, err error) error {
	var ee *sl.EvalError
	if !errors.As(err, &ee) {
		return fmt.Errorf("strategy %s: %v", name, err)
	}
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		fr := ee.CallStack[i]
		if fr.Pos.Filename() != "" && fr.Pos.Filename() != "<builtin>" {
			return fmt.Errorf("strategy %s failed at %s: %s", name, posString(fr.Pos), strings.TrimPrefix(ee.Msg, cancelPrefix))
		}
	}
	return fmt.Errorf("strategy %s: %s", name, strings.TrimPrefix(ee.Msg, cancelPrefix))
}

func posString(p syntax.Position) string {
	return fmt.Sprintf("%s:%d:%d", p.Filename(), p.Line, p.Col)
}

// exploreFn is explore(w, strategy=None, seeds=None, budget=None,
// parallel=None). strategy is a function of a context, or the name of a
// stdlib strategy ("random_seeds", "swarm", "branch_closest"); the
// default is random_seeds.
func (e *Env) exploreFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var w *World
	strat, seedsV, budgetV, parV := sl.Value(sl.None), sl.Value(sl.None), sl.Value(sl.None), sl.Value(sl.None)
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "w", &w, "strategy?", &strat, "seeds?", &seedsV, "budget?", &budgetV, "parallel?", &parV); err != nil {
		return nil, err
	}
	fn, err := e.StdStrategy(t, strat)
	if err != nil {
		return nil, fmt.Errorf("explore: %v", err)
	}
	budget, err := budgetOf(budgetV)
	if err != nil {
		return nil, fmt.Errorf("explore: %v", err)
	}
	parallel := e.o.Parallel
	if parV != sl.None {
		p, err := sl.AsInt32(parV)
		if err != nil || p < 1 {
			return nil, fmt.Errorf("explore: parallel is %v; give an int from 1", parV)
		}
		parallel = p
	}
	seeds, err := seedsOf(t, seedsV)
	if err != nil {
		return nil, fmt.Errorf("explore: %v", err)
	}
	if seeds == nil {
		if seeds, err = defaultSeeds(t); err != nil {
			return nil, err
		}
	}
	o := ExploreOptions{Budget: budget, Parallel: parallel}
	if e.o.Progress != nil {
		o.Progress = func(p ExploreProgress) {
			e.progress("explore: %s", p)
		}
	}
	x, err := e.explore(t, w, fn, seeds, o)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return x, nil
}

// isStrategy reports whether v is a strategy: a function whose first
// parameter is ctx (the stdlib's helpers, such as scores, are not).
func isStrategy(v sl.Value) bool {
	f, ok := v.(*sl.Function)
	if !ok || f.NumParams() == 0 {
		return false
	}
	name, _ := f.Param(0)
	return name == "ctx"
}

// StdStrategy returns a strategy: v itself when it is a function, else the
// stdlib strategy v names (None: random_seeds).
func (e *Env) StdStrategy(t *sl.Thread, v sl.Value) (sl.Callable, error) {
	if c, ok := v.(sl.Callable); ok {
		return c, nil
	}
	name := "random_seeds"
	if v != sl.None {
		s, ok := sl.AsString(v)
		if !ok {
			return nil, fmt.Errorf("strategy is a %s; give a function of one argument (ctx) or a stdlib strategy's name", v.Type())
		}
		name = s
	}
	g, err := e.load(t, "@seedfall/strategies.star")
	if err != nil {
		return nil, err
	}
	if isStrategy(g[name]) && !strings.HasPrefix(name, "_") {
		return g[name].(sl.Callable), nil
	}
	var names []string
	for _, k := range g.Keys() {
		if isStrategy(g[k]) && !strings.HasPrefix(k, "_") {
			names = append(names, k)
		}
	}
	hint := ""
	if s := world.Suggest(name, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, fmt.Errorf("no stdlib strategy %q%s; there are %s", name, hint, strings.Join(names, ", "))
}
