package main

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/seedfall/seedfall/engine"
)

// sweepJob is one seed of a sweep on its way from the feeder to a worker
// and to the caller.
type sweepJob struct {
	seed uint64
	opt  engine.RunOptions
	prep error // opts' error: the sweep stops there
	res  *engine.Result
	err  error
	done chan struct{} // closed when res or err is set
}

// sweep runs the seeds, parallel at a time, and hands each finished run to
// each in seed order, whatever order they finish in. The seeds are drawn
// from the list as workers free up: at most 2×parallel results wait to be
// handed over, so a sweep of a hundred million seeds holds as little as
// one of ten. opts, if not nil, says how to run a seed.
//
// A run the context cut short (Ctrl-C) is no result: it is skipped, and no
// seed starts after the context ends. sweep returns how many seeds ran to
// a result, and the first error other than the context's: a seed whose run
// failed to run at all is skipped too, and the others still run, as
// before; an error of opts stops the sweep.
func (s *session) sweep(ctx context.Context, seeds engine.Seeds, parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	return s.sweepSeq(ctx, seeds.All(), parallel, opts, each)
}

// sweepSeq is sweep over the seeds seeds yields: a shard's, say.
func (s *session) sweepSeq(ctx context.Context, seeds iter.Seq[uint64], parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	parallel = max(parallel, 1)
	order := make(chan *sweepJob, 2*parallel) // to the caller, in seed order
	work := make(chan *sweepJob)              // to the workers
	go func() {
		defer close(order)
		defer close(work)
		for seed := range seeds {
			if ctx.Err() != nil {
				return
			}
			j := &sweepJob{seed: seed, opt: engine.RunOptions{Seed: seed}, done: make(chan struct{})}
			if opts != nil {
				var err error
				if j.opt, err = opts(seed); err != nil {
					j.prep = err
					close(j.done)
					order <- j
					return
				}
			}
			select {
			case order <- j:
			case <-ctx.Done():
				return
			}
			select {
			case work <- j:
			case <-ctx.Done():
				j.err = context.Cause(ctx)
				close(j.done)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.res, j.err = s.p.Run(ctx, j.opt)
				close(j.done)
			}
		}()
	}
	for j := range order {
		<-j.done
		switch {
		case j.prep != nil:
			if firstErr == nil {
				firstErr = j.prep
			}
		case j.err != nil && ctx.Err() != nil:
			// Cut short: neither passed nor failed.
		case j.err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("seed %d: %w", j.seed, j.err)
			}
		default:
			ran++
			each(j.res)
		}
		j.res = nil // let the trace go
	}
	wg.Wait()
	return ran, firstErr
}

// seedTally keeps the first few seeds of a kind (the failing ones) and
// counts the rest, for a line such as "(seeds 3 5 8 and 12 more)".
type seedTally struct {
	first []uint64
	n     int
}

// tallyShown is how many seeds a tally names.
const tallyShown = 10

func (t *seedTally) add(seed uint64) {
	if len(t.first) < tallyShown {
		t.first = append(t.first, seed)
	}
	t.n++
}

// String writes " (seeds 3 5 and 12 more)", or "" for none.
func (t *seedTally) String() string {
	if t.n == 0 {
		return ""
	}
	s := " (seeds"
	for _, x := range t.first {
		s += fmt.Sprintf(" %d", x)
	}
	if more := t.n - len(t.first); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + ")"
}

// interruptedLine says how much of a sweep ran before Ctrl-C stopped it.
func interruptedLine(ran, of int) string {
	return fmt.Sprintf("interrupted: %d of %s ran", ran, plural(of, "seed"))
}
