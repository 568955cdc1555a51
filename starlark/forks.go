package starlark

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

// Forks in explore (issue 28). A schedule from ctx.mutate or
// ctx.branch_schedule keeps its parent run's past before a moment, so its
// run can start from a checkpoint of the parent at or before that moment
// instead of t=0. Before a batch of run_many starts, the batch's runs are
// grouped by parent: a parent whose children would save at least
// recordAfter runs' worth of work is run once more with a checkpoint at
// each child's moment (a recording), and each child forks from the latest
// checkpoint at or before its moment. The decisions depend only on the
// schedules, never on which run ends first, and a fork's result is the
// run's from scratch (engine.TestForkIsARunFromScratch), so explore finds
// the same failures at any -parallel.
//
// The budget counts work: a run from t=0 costs 1; a fork, the share of its
// parent's run after its checkpoint; a recording, the share of the parent
// it runs (to its last checkpoint).

// recordAfter is the work a parent's children must save, in runs, for a
// recording to pay: the recording runs most of the parent again.
const recordAfter = 1.5

// maxMoments bounds the checkpoints of one recording; the children whose
// moments did not get one run from the latest before theirs.
const maxMoments = 16

// cost is what a job spends of a run-count budget.
func (j job) cost() float64 {
	if j.from == nil || j.parent == nil || j.parent.Result.SimNs <= 0 {
		return 1
	}
	return max(0.05, 1-float64(j.from.At)/float64(j.parent.Result.SimNs))
}

// forks admits the prefix of jobs the budget allows, records the parents
// worth recording and gives each admitted child its checkpoint; it returns
// how many jobs were admitted. Which parents are recorded is decided from
// the whole batch; admission then counts what each job will cost (a child
// of a recorded parent the share after its moment, and its parent's
// recording as far as its latest moment so far); only the admitted
// children's moments are recorded, so what is charged afterwards is what
// admission counted, unless a moment could not be checkpointed (a guest
// waiting inside a host call): its child then forks from an earlier one
// and costs more.
func (c *exploreCtx) forks(ctx context.Context, jobs []job) (int, error) {
	if c.env.o.NoForks {
		return c.left(len(jobs)), nil
	}
	type group struct {
		parent  *Run
		moments []time.Duration
		saves   float64
		last    time.Duration // the latest moment of its admitted children
	}
	var groups []*group
	byParent := map[*Run]*group{}
	length := func(j job) float64 { return float64(j.parent.Result.SimNs) }
	for _, j := range jobs {
		if j.parent == nil || j.parent.Result.SimNs <= 0 || j.w != j.parent.World {
			continue
		}
		g := byParent[j.parent]
		if g == nil {
			g = &group{parent: j.parent}
			byParent[j.parent] = g
			groups = append(groups, g)
		}
		g.saves += float64(j.at) / length(j)
	}
	n := len(jobs)
	work := c.work
	for i, j := range jobs {
		if c.budget.Runs > 0 && work >= float64(c.budget.Runs)-1e-9 {
			n = i
			break
		}
		g := byParent[j.parent]
		if j.parent == nil || g == nil || g.saves < recordAfter {
			work++
			continue
		}
		if j.at > g.last {
			// The recording runs to the latest moment admitted.
			work += min(1, float64(j.at)/length(j)) - min(1, float64(g.last)/length(j))
			g.last = j.at
		}
		work += max(0.05, 1-float64(j.at)/length(j))
		if !slices.Contains(g.moments, j.at) {
			g.moments = append(g.moments, j.at)
		}
	}
	recorded := map[*Run][]*engine.Checkpoint{}
	for _, g := range groups {
		if g.saves < recordAfter || len(g.moments) == 0 {
			continue
		}
		slices.Sort(g.moments)
		if len(g.moments) > maxMoments {
			// Keep moments spread over the run, the last among them: the
			// recording runs as far as it.
			var kept []time.Duration
			k := (len(g.moments) + maxMoments - 2) / (maxMoments - 1)
			for i := 0; i < len(g.moments)-1; i += k {
				kept = append(kept, g.moments[i])
			}
			g.moments = append(kept, g.moments[len(g.moments)-1])
		}
		cps, err := c.record(ctx, g.parent, g.moments)
		if err != nil {
			return 0, err
		}
		recorded[g.parent] = cps
	}
	for i := range jobs[:n] {
		j := &jobs[i]
		for _, cp := range recorded[j.parent] {
			if cp.At <= j.at && cp.Reason == "" {
				j.from = cp
			}
		}
	}
	return n, nil
}

// record runs parent again up to its last moment with a checkpoint at each,
// and charges the budget for it.
func (c *exploreCtx) record(ctx context.Context, parent *Run, moments []time.Duration) ([]*engine.Checkpoint, error) {
	p, err := c.env.Prepare(ctx, parent.World)
	if err != nil {
		return nil, err
	}
	last := moments[len(moments)-1]
	res, err := p.Run(ctx, engine.RunOptions{Seed: parent.Seed, Schedule: parent.Schedule(), Checkpoints: moments, StopAt: last + 1})
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err != nil {
		return nil, fmt.Errorf("recording seed %d for its forks: %w", parent.Seed, err)
	}
	c.work += min(1, float64(last)/float64(parent.Result.SimNs))
	return res.Checkpoints, nil
}

// runFrom runs a world value with a seed and a schedule, from checkpoint
// from when it is not nil.
func (e *Env) runFrom(ctx context.Context, w *World, seed uint64, sch *faults.Schedule, from *engine.Checkpoint) (*Run, error) {
	if from == nil {
		return e.runValue(ctx, w, seed, sch, false)
	}
	if err := checkAgainst(sch, w.w); err != nil {
		return nil, err
	}
	p, err := e.Prepare(ctx, w)
	if err != nil {
		return nil, err
	}
	c := *sch
	c.Seed = seed
	res, err := p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: &c, From: from})
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	return &Run{World: w, Seed: seed, Given: &c, Result: res, env: e}, nil
}
