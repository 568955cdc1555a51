package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// Recordings let the branches of a run, and the looks at it (RunOptions.StopAt
// with State, as seedfall debug), fork from a recording of it instead of
// running its past again (RunOptions.Checkpoints and From). A session that
// branches and looks at runs many times keeps one: the workbench (branch,
// explore's ctx.branch and run_many, debug), seedfall mcp (seedfall_debug)
// and each shrink (its candidates). Its zero value is ready.
//
//   - A run's branch is a run whose schedule is the run's with one more
//     branch, last (Branch); a shrink candidate keeps the smallest
//     schedule so far until its first change (From). Once a run has been
//     asked twice for such a moment in its second half, it is recorded,
//     and every later run that keeps its past to one of its checkpoints
//     forks from the latest.
//   - A look runs the run's past up to a moment (Look). Once two looks at a
//     run were not covered (no checkpoint in the second half of their
//     past), it is recorded again, up to the latest moment asked; later
//     looks fork from the latest checkpoint before their moment.
//
// A recording runs the run once more, to just past the latest moment
// asked, with a checkpoint at each moment asked so far (the last 8). A
// fork's result is the run's from t=0, to the trace, steps, properties,
// history and state (TestForkIsARunFromScratch), so this changes
// what branching and looking cost and nothing else.
//
// Branching earlier does not pay: a fork still runs its future in full
// and pays 1 to 3 ms to play its past back and take its copies, and the
// recording costs about a run and a quarter (docs/how-it-works.md,
// "Checkpoints and forks"). A look runs only its past, so a fork pays
// there once it saves half of it. Nowhere does a fork pay that saves less
// than MinSaved of real time. What this saves is measured by starlark's
// BenchmarkBranches and BenchmarkDebug and engine/shrink's BenchmarkShrink
// (docs/how-it-works.md, "Figures").
type Recordings struct {
	// MinSaved is the least real time of its past a fork must save, as
	// the runs seen (Ran) took it: 0 is 10ms (minSaved), below 0 any.
	MinSaved time.Duration

	mu       sync.Mutex
	parents  map[string]*parent
	order    []string    // every parent, oldest first
	recorded []recording // the parents recorded, oldest first
	forked   int         // runs that forked (Forked)
}

type recording struct {
	key   string
	bytes int
}

// parent is what Recordings know of one run: how long it ran, the moments
// asked of it, and its recording once made.
type parent struct {
	mu       sync.Mutex
	length   time.Duration
	asked    []time.Duration // the moments asked, the oldest first
	pending  int             // moments due (due) since the last recording
	records  int             // recordings made
	rate     float64         // real ns per virtual ns of its runs (Ran), 0: unknown
	minSaved time.Duration   // Recordings.MinSaved
	cps      []*Checkpoint
	bytes    int
	failed   bool // a recording failed: run every branch from t=0
}

// ask notes a moment to record a checkpoint at: the last maxRecordedAt
// moments asked are kept.
func (pr *parent) ask(at time.Duration) {
	if i := slices.Index(pr.asked, at); i >= 0 {
		pr.asked = slices.Delete(pr.asked, i, i+1)
	}
	pr.asked = append(pr.asked, at)
	if len(pr.asked) > maxRecordedAt {
		pr.asked = slices.Delete(pr.asked, 0, len(pr.asked)-maxRecordedAt)
	}
}

// worth reports whether a fork at a checkpoint at moment at would save
// more than what a fork costs of its own: running its past took at least
// minSaved in the runs seen (Ran); true when none was seen.
func (pr *parent) worth(at time.Duration) bool { return ForkSaves(at, pr.rate, pr.minSaved) }

// ForkSaves reports whether a fork at moment at of a run saves at least
// min of real time (0: MinForkSaving; below 0: any), at rate real ns per
// virtual ns of the run (0: unknown, and then it does).
func ForkSaves(at time.Duration, rate float64, min time.Duration) bool {
	return rate == 0 || min < 0 || float64(at)*rate >= float64(cmp.Or(min, MinForkSaving))
}

// due reports whether a moment asked counts toward recording the run: a
// branch's (or shrink candidate's) in the second half of a run not
// recorded yet, since its future runs in full anyway; a look's when no
// checkpoint covers it (in the second half of its past). A fork there
// must be worth it too.
func (pr *parent) due(at time.Duration, look bool) bool {
	if pr.failed || !pr.worth(at) {
		return false
	}
	if look {
		c := pr.latest(at)
		return (c == nil || 2*c.At < at) && pr.records < maxRecords
	}
	return pr.cps == nil && pr.length > 0 && 2*at >= pr.length
}

// from is the checkpoint a run forks from at at: the latest, when a fork
// from it is worth it.
func (pr *parent) from(at time.Duration) *Checkpoint {
	if c := pr.latest(at); c != nil && pr.worth(c.At) {
		return c
	}
	return nil
}

// latest is the parent's latest checkpoint a fork can start from at or
// before at, or nil.
func (pr *parent) latest(at time.Duration) *Checkpoint {
	var c *Checkpoint
	for _, cp := range pr.cps {
		if cp.At <= at && cp.Reason == "" {
			c = cp
		}
	}
	return c
}

const (
	maxParents    = 4         // recordings kept, the oldest dropped first
	maxRecordedAt = 8         // checkpoints in one recording
	maxForkBytes  = 512 << 20 // the recordings' copies of guests, in all
	asksBeforeRec = 2         // moments due before a run is recorded (again)
	maxRecords    = 4         // recordings of one run
	minSaved      = MinForkSaving
)

// MinForkSaving is the least real time of its past a fork must save to
// pay: a fork pays about 1 to 3 ms to play its past back and put its
// copies into instances (kvlog's BenchmarkFork), whatever the run, so in a
// world whose runs take a few milliseconds forks cost more than they save
// (a shrink of engine/shrink/testdata/late without its client's setup
// took 134 ms forking against 113 from t=0). Recordings and cause fork only
// where the past, at the real rate of the runs seen, took this long.
const MinForkSaving = 10 * time.Millisecond

// forkKey names the run of world p, seed and schedule s: its faults,
// branches and duration ("" if it cannot).
func forkKey(p *Prepared, seed uint64, s *faults.Schedule) string {
	k := struct {
		Faults   []faults.Fault
		Branches []faults.Branch
		Duration time.Duration
	}{s.Faults, s.Branches, s.Duration}
	if len(k.Faults) == 0 {
		k.Faults = nil
	}
	if len(k.Branches) == 0 {
		k.Branches = nil
	}
	b, err := json.Marshal(k)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%p %d %s", p, seed, b)
}

func (f *Recordings) get(key string) *parent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parents == nil {
		f.parents = map[string]*parent{}
	}
	pr := f.parents[key]
	if pr == nil {
		pr = &parent{minSaved: f.MinSaved}
		f.parents[key] = pr
		f.order = append(f.order, key)
		if len(f.order) > 64 {
			delete(f.parents, f.order[0])
			f.order = slices.Clone(f.order[1:])
		}
	}
	return pr
}

// Ran notes how long the run of p, seed and s ran, in virtual and real
// time, for when it is branched or looked at.
func (f *Recordings) Ran(p *Prepared, seed uint64, s *faults.Schedule, res *Result) {
	key := ""
	if s != nil {
		key = forkKey(p, seed, s)
	}
	if key == "" {
		return
	}
	pr := f.get(key)
	pr.mu.Lock()
	pr.length = max(pr.length, time.Duration(res.SimNs))
	if res.SimNs > 0 {
		pr.rate = max(pr.rate, float64(res.WallNs)/float64(res.SimNs))
	}
	pr.mu.Unlock()
}

// Branch is the checkpoint the run of p, seed and s starts from, if it is
// a late branch of a run branched often enough (recording that run first
// when it is due); nil: from t=0.
func (f *Recordings) Branch(ctx context.Context, p *Prepared, seed uint64, s *faults.Schedule) *Checkpoint {
	n := len(s.Branches)
	if n == 0 {
		return nil
	}
	ps := *s
	ps.Branches = s.Branches[:n-1]
	return f.From(ctx, p, seed, &ps, s.Branches[n-1].At)
}

// From is the checkpoint a run of p and seed starts from whose schedule
// agrees with parent's before at (RunOptions.From: its faults, branches
// and duration), as Branch's: once the parent has been asked twice for a
// moment in its second half it is recorded, and a run forks from its
// latest checkpoint at or before at; nil: from t=0. shrink asks it for
// each candidate, with the smallest schedule so far as parent.
func (f *Recordings) From(ctx context.Context, p *Prepared, seed uint64, parent *faults.Schedule, at time.Duration) *Checkpoint {
	return f.ask(ctx, p, seed, parent, at, false)
}

// Look is the checkpoint a look at the run of p, seed and s up to at
// starts from, recording the run again when two looks were not covered;
// nil: from t=0.
func (f *Recordings) Look(ctx context.Context, p *Prepared, seed uint64, s *faults.Schedule, at time.Duration) *Checkpoint {
	return f.ask(ctx, p, seed, s, at, true)
}

// ask is From and Look: it notes the moment asked of the run of p, seed
// and s, records the run when two moments were due, and returns the
// checkpoint to fork from, if one is worth it.
func (f *Recordings) ask(ctx context.Context, p *Prepared, seed uint64, s *faults.Schedule, at time.Duration, look bool) *Checkpoint {
	key := forkKey(p, seed, s)
	if key == "" {
		return nil
	}
	pr := f.get(key)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.due(at, look) {
		pr.ask(at)
		if pr.pending++; pr.pending >= asksBeforeRec {
			f.record(ctx, p, seed, s, pr)
		}
	}
	return f.forking(pr.from(at))
}

// Forked is how many runs the Recordings gave a checkpoint to start from.
func (f *Recordings) Forked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forked
}

// forking counts c, a checkpoint a run forks from, if it is one.
func (f *Recordings) forking(c *Checkpoint) *Checkpoint {
	if c != nil {
		f.mu.Lock()
		f.forked++
		f.mu.Unlock()
	}
	return c
}

// record runs the parent ps once more, to just past the latest moment
// asked, with a checkpoint at each moment asked, and keeps the recording
// within the bounds.
func (f *Recordings) record(ctx context.Context, p *Prepared, seed uint64, ps *faults.Schedule, pr *parent) {
	moments := slices.Clone(pr.asked)
	slices.Sort(moments)
	pr.records++
	pr.pending = 0
	res, err := p.Run(ctx, RunOptions{Seed: seed, Schedule: ps, Checkpoints: moments, StopAt: moments[len(moments)-1] + 1})
	if err != nil || ctx.Err() != nil {
		pr.failed = ctx.Err() == nil
		return
	}
	pr.cps, pr.bytes = res.Checkpoints, 0
	for _, c := range pr.cps {
		pr.bytes += c.Bytes()
	}
	// Keep the newest recordings, within maxParents and maxForkBytes:
	// an older parent is forgotten (a branch in flight still holds its
	// recording), and its branches run from t=0 until it is recorded
	// again.
	f.mu.Lock()
	defer f.mu.Unlock()
	key := forkKey(p, seed, ps)
	f.recorded = slices.DeleteFunc(f.recorded, func(r recording) bool { return r.key == key }) // recorded again
	f.recorded = append(f.recorded, recording{key: key, bytes: pr.bytes})
	total := 0
	for i := len(f.recorded) - 1; i >= 0; i-- {
		total += f.recorded[i].bytes
		if len(f.recorded)-i > maxParents || total > maxForkBytes && i < len(f.recorded)-1 {
			for _, r := range f.recorded[:i+1] {
				delete(f.parents, r.key)
			}
			f.recorded = slices.Clone(f.recorded[i+1:])
			break
		}
	}
}
