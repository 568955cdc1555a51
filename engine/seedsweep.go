package engine

import (
	"context"
	"fmt"
	"iter"

	"github.com/seedfall/seedfall/engine/sweep"
)

// Sweep runs the seeds, parallel at a time (sweep.Ordered), and hands each
// finished run to each in seed order, whatever order they finish in,
// until each returns false. opts, if not nil, says how to run a seed.
//
// A run the context cut short (Ctrl-C) is no result: it is skipped, and no
// seed starts after the context ends. Sweep returns how many seeds ran to
// a result, and the first error other than the context's: a seed whose run
// failed to run at all is skipped, and the others still run; an error of
// opts stops the sweep there.
func (p *Prepared) Sweep(ctx context.Context, seeds iter.Seq[uint64], parallel int, opts func(seed uint64) (RunOptions, error), each func(res *Result) bool) (ran int, firstErr error) {
	type job struct {
		seed uint64
		opt  RunOptions
		prep error // opts' error: the sweep stops there
	}
	jobs := func(yield func(job) bool) {
		for seed := range seeds {
			j := job{seed: seed, opt: RunOptions{Seed: seed}}
			if opts != nil {
				j.opt, j.prep = opts(seed)
			}
			if !yield(j) || j.prep != nil {
				return
			}
		}
	}
	run := func(ctx context.Context, j job) (*Result, error) {
		if j.prep != nil {
			return nil, j.prep
		}
		return p.Run(ctx, j.opt)
	}
	for d := range sweep.Ordered(ctx, jobs, parallel, run) {
		switch {
		case d.Job.prep != nil:
			if firstErr == nil {
				firstErr = d.Job.prep
			}
		case d.Err != nil && ctx.Err() != nil:
			// Cut short: neither passed nor failed.
		case d.Err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("seed %d: %w", d.Job.seed, d.Err)
			}
		default:
			ran++
			if !each(d.Res) {
				return ran, firstErr
			}
		}
	}
	return ran, firstErr
}
