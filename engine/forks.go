package engine

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// Forks lets the branches of a run, the looks at it (RunOptions.StopAt
// with State, as seedfall debug) and the runs that keep its past for a
// while (shrink's candidates, cause's forks) start from a checkpoint of
// it instead of running its past again (RunOptions.Checkpoints and From).
// A session that branches and looks at runs many times keeps one: the
// workbench (branch, explore's ctx.branch and run_many, debug), seedfall
// mcp (seedfall_debug), each shrink (its candidates) and each cause (its
// forks). Its zero value is ready.
//
// Every such run keeps its parent's past until a moment: a branch until
// its branch, a look until its end, a candidate until its first change. So
// a run that no checkpoint of its parent covers (none in the second half
// of the past it keeps) takes one at that moment on its way, for the runs
// after it; a run that one covers forks from the latest. A run is asked
// for with Branch, From or Look, which say how it starts (a Fork), and
// handed back with Fork.Done.
//
// A fork's result is the run's from t=0, to the trace, steps, properties,
// history and state (TestForkIsARunFromScratch), so this changes what
// branching and looking cost and nothing else. A fork pays 1 to 3 ms to
// play its past back and take its copies, and a run that takes a
// checkpoint pays for its tapes until then and for the copy; nowhere does
// either happen where the past took less than MinSaved of real time.
// starlark's BenchmarkBranches, 20 branches of a kvlog run, and
// BenchmarkDebug, 16 looks; engine/shrink's BenchmarkShrink; and
// scripts/bench -only cause measure it (docs/how-it-works.md,
// "Checkpoints and forks").
type Forks struct {
	// MinSaved is the least real time of its past a fork must save, as
	// the runs seen (Ran) took it: 0 is MinForkSaving, below 0 any.
	MinSaved time.Duration

	mu      sync.Mutex
	parents map[string]*parent
	order   []string // every parent, oldest first
	bytes   int      // what every parent's checkpoints hold
	forked  int      // runs that forked (Forked)
}

// parent is what Forks knows of one run: how fast it ran, and the
// checkpoints its children took of it.
type parent struct {
	key      string
	rate     float64       // real ns per virtual ns of its runs (Ran), 0: unknown
	minSaved time.Duration // Forks.MinSaved
	cps      []*Checkpoint // in time order
	bytes    int
}

// worth reports whether a fork at a checkpoint at moment at would save
// more than what a fork costs of its own: running its past took at least
// minSaved in the runs seen (Ran); true when none was seen.
func (pr *parent) worth(at time.Duration) bool {
	return pr.rate == 0 || pr.minSaved < 0 || float64(at)*pr.rate >= float64(cmp.Or(pr.minSaved, minSaved))
}

// latest is the parent's latest checkpoint at or before at, or nil.
func (pr *parent) latest(at time.Duration) *Checkpoint {
	var c *Checkpoint
	for _, cp := range pr.cps {
		if cp.At <= at {
			c = cp
		}
	}
	return c
}

const (
	maxParents   = 64        // parents known, the oldest forgotten first
	maxParentCps = 16        // checkpoints of one parent, the earliest dropped first
	maxForkBytes = 512 << 20 // every parent's checkpoints' copies of guests, in all
	minSaved     = MinForkSaving
)

// MinForkSaving is the least real time of its past a fork must save to
// pay: a fork pays about 1 to 3 ms to play its past back and put its
// copies into instances (kvlog's BenchmarkFork), whatever the run, so in a
// world whose runs take a few milliseconds forks cost more than they save
// (a shrink of engine/shrink/testdata/late without its client's setup
// took 134 ms forking against 113 from t=0). Forks fork, and take
// checkpoints, only where the past, at the real rate of the runs seen,
// took this long.
const MinForkSaving = 10 * time.Millisecond

// A Fork is how a run that keeps a parent's past until a moment starts:
// from the parent's checkpoint From, or from t=0, taking a checkpoint at
// the moment on its way for the runs after it. Its zero value runs from
// t=0 and takes none.
type Fork struct {
	From *Checkpoint
	take time.Duration
	pr   *parent
	f    *Forks
}

// Apply sets opt to start the run so: From, or a checkpoint to take.
func (k Fork) Apply(opt *RunOptions) {
	opt.From = k.From
	if k.take > 0 {
		opt.Checkpoints = []time.Duration{k.take}
	}
}

// Done hands the run's result back: the checkpoint it took, if it took
// one, moves from the result to its parent's.
func (k Fork) Done(res *Result) {
	if k.take == 0 || res == nil {
		return
	}
	cps := res.Checkpoints
	res.Checkpoints = nil
	if len(cps) == 1 && cps[0].Reason == "" {
		k.f.keep(k.pr, cps[0])
	}
}

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

func (f *Forks) get(key string) *parent {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parents == nil {
		f.parents = map[string]*parent{}
	}
	pr := f.parents[key]
	if pr == nil {
		pr = &parent{key: key, minSaved: f.MinSaved}
		f.parents[key] = pr
		f.order = append(f.order, key)
		if len(f.order) > maxParents {
			f.forget(f.order[0])
		}
	}
	return pr
}

// forget drops a parent and its checkpoints (a run in flight still holds
// the one it forks from).
func (f *Forks) forget(key string) {
	if pr := f.parents[key]; pr != nil {
		f.bytes -= pr.bytes
		delete(f.parents, key)
	}
	f.order = slices.DeleteFunc(f.order, func(k string) bool { return k == key })
}

// Ran notes how fast the run of p, seed and s ran, in real time over
// virtual, for when it is branched or looked at.
func (f *Forks) Ran(p *Prepared, seed uint64, s *faults.Schedule, res *Result) {
	key := ""
	if s != nil {
		key = forkKey(p, seed, s)
	}
	if key == "" || res.SimNs <= 0 {
		return
	}
	pr := f.get(key)
	f.mu.Lock()
	pr.rate = max(pr.rate, float64(res.WallNs)/float64(res.SimNs))
	f.mu.Unlock()
}

// Branch is how the run of p, seed and s starts, a branch of the run
// without s's last branch until that branch's moment.
func (f *Forks) Branch(p *Prepared, seed uint64, s *faults.Schedule) Fork {
	n := len(s.Branches)
	if n == 0 {
		return Fork{}
	}
	ps := *s
	ps.Branches = s.Branches[:n-1]
	return f.From(p, seed, &ps, s.Branches[n-1].At)
}

// From is how a run of p and seed starts whose schedule keeps parent's
// until at (its faults, branches and duration, faults.Schedule.Keeps):
// shrink asks it for each candidate, with the smallest schedule so far as
// parent, and cause for each fork, with the failing run's.
func (f *Forks) From(p *Prepared, seed uint64, parent *faults.Schedule, at time.Duration) Fork {
	return f.ask(p, seed, parent, at)
}

// Look is how a look at the run of p, seed and s up to at starts.
func (f *Forks) Look(p *Prepared, seed uint64, s *faults.Schedule, at time.Duration) Fork {
	return f.ask(p, seed, s, at)
}

// ask is Branch, From and Look: a fork from the parent's latest checkpoint
// at or before at if it covers the second half of the past and is worth
// it; else from t=0, taking a checkpoint at at if one would be worth it.
func (f *Forks) ask(p *Prepared, seed uint64, s *faults.Schedule, at time.Duration) Fork {
	key := forkKey(p, seed, s)
	if key == "" || at <= 0 {
		return Fork{}
	}
	pr := f.get(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	c := pr.latest(at)
	switch {
	case c != nil && 2*c.At >= at && pr.worth(c.At):
		f.forked++
		return Fork{From: c}
	case pr.worth(at) && f.bytes < maxForkBytes:
		// From t=0, which costs at most twice the fork from an
		// earlier checkpoint, for the runs after it.
		return Fork{take: at, pr: pr, f: f}
	}
	return Fork{}
}

// keep adds c, taken by a child of pr, to pr's checkpoints, within the
// bounds.
func (f *Forks) keep(pr *parent, c *Checkpoint) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.parents[pr.key] != pr || slices.ContainsFunc(pr.cps, func(o *Checkpoint) bool { return o.At == c.At }) {
		return // forgotten meanwhile, or taken twice
	}
	pr.cps = append(pr.cps, c)
	slices.SortFunc(pr.cps, func(a, b *Checkpoint) int { return cmp.Compare(a.At, b.At) })
	pr.bytes += c.Bytes()
	f.bytes += c.Bytes()
	for len(pr.cps) > maxParentCps {
		pr.bytes -= pr.cps[0].Bytes()
		f.bytes -= pr.cps[0].Bytes()
		pr.cps = pr.cps[1:]
	}
	// Past the bound in all, the parents asked about least recently go
	// first (their runs in flight still hold what they fork from).
	for f.bytes > maxForkBytes && len(f.order) > 1 && f.order[0] != pr.key {
		f.forget(f.order[0])
	}
}

// Forked is how many runs the Forks gave a checkpoint to start from.
func (f *Forks) Forked() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forked
}
