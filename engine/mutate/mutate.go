// Package mutate is the mutation search behind `seedfall mutate`: it
// weakens one durability guarantee at a time (engine.Mutant) and looks
// for the first seed, in order, whose workload notices.
package mutate

import (
	"context"
	"time"

	"github.com/seedfall/seedfall/engine"
)

// The verdicts of one mutant.
const (
	Killed     = "killed"      // a seed failed under it
	Survived   = "survived"    // every seed it could change passed
	NotReached = "not_reached" // no seed made a call it weakens
)

// Outcome is what the search found for one mutant; as JSON, a line of
// seedfall mutate -json.
type Outcome struct {
	Mutant   string `json:"mutant"`
	Verdict  string `json:"verdict"` // Killed, Survived or NotReached
	Seeds    int    `json:"seeds"`   // the seeds that made a call it weakens
	Runs     int    `json:"runs"`    // the seeds run under it before the verdict
	Weakened uint64 `json:"weakened"`
	// The killing seed, when killed. Replay is the caller's: the command
	// that replays the seed under the mutant, as its skin writes it.
	Seed   uint64 `json:"seed,omitempty"`
	Class  string `json:"class,omitempty"`
	Reason string `json:"reason,omitempty"`
	Digest string `json:"digest,omitempty"`
	Replay string `json:"replay,omitempty"`
	WallNs int64  `json:"wall_ns"`

	Res *engine.Result `json:"-"` // the killing run
}

// Reach runs the seeds without mutants, in order, until one fails: a seed
// that fails already says nothing about a mutant. It returns how many
// seeds ran, the first failing run (nil if none) and, for each mutant,
// the seeds whose runs made a call it weakens.
func Reach(ctx context.Context, p *engine.Prepared, seeds engine.Seeds, parallel int, mutants []engine.Mutant) (ran int, failed *engine.Result, reached []engine.Seeds, err error) {
	reached = make([]engine.Seeds, len(mutants))
	ran, err = p.Sweep(ctx, seeds.All(), parallel, nil, func(res *engine.Result) bool {
		if !res.Passed {
			failed = res
			return false // the first failing seed in order ends it; the others need not finish
		}
		for i, m := range mutants {
			if m.Reached(res.Reach) > 0 {
				reached[i].Append(res.Seed)
			}
		}
		return true
	})
	return ran, failed, reached, err
}

// Search runs the seeds m can change under it, in order, until one fails.
// It returns the outcome; its Runs is how many seeds it ran.
func Search(ctx context.Context, p *engine.Prepared, m engine.Mutant, seeds engine.Seeds, parallel int) (Outcome, error) {
	start := time.Now()
	o := Outcome{Mutant: m.String(), Verdict: NotReached, Seeds: seeds.Len()}
	if seeds.Len() == 0 {
		return o, nil
	}
	opts := func(seed uint64) (engine.RunOptions, error) { return engine.RunOptions{Seed: seed, Mutant: m}, nil }
	_, err := p.Sweep(ctx, seeds.All(), parallel, opts, func(res *engine.Result) bool {
		o.Runs++
		o.Weakened += res.Weakened
		if !res.Passed {
			o.Res = res
			return false // the first failing seed in order kills it; the others need not finish
		}
		return true
	})
	o.WallNs = int64(time.Since(start))
	if err != nil {
		return o, err
	}
	if res := o.Res; res != nil {
		o.Verdict, o.Seed, o.Class, o.Reason, o.Digest = Killed, res.Seed, res.Class, res.Reason, res.Digest
	} else {
		o.Verdict = Survived
	}
	return o, nil
}
