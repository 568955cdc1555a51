// Package sweep is seedfall's one pool of runs: an ordered, parallel,
// interruptible sweep over a list of jobs, which `seedfall run`, the go
// test helper, explore, shrink, cause and mutate all use. It knows
// nothing of what a job is: a seed, a schedule, a fork.
package sweep

import (
	"context"
	"iter"
	"sync"
)

// Done is one job of a sweep and what running it gave. Err is the run's
// error, or the context's cause when the sweep's context ended before the
// job started; the caller tells the two apart by its own context.
type Done[J, R any] struct {
	Job J
	Res R
	Err error
}

// slot is one job on its way from the feeder to a worker and to the
// caller.
type slot[J, R any] struct {
	d    Done[J, R]
	done chan struct{} // closed when d.Res or d.Err is set
}

// Ordered runs run on each job jobs yields, parallel at a time, and yields
// each finished job in the order of jobs, whatever order they finish in.
// The jobs are drawn from jobs as workers free up, on a goroutine of the
// sweep's own: at most 2×parallel finished jobs wait to be yielded, so a
// sweep of a hundred million seeds holds as little as one of ten.
//
// No job starts once ctx ends; a job the context cut short is yielded
// with its error, which the caller skips when its context has ended.
// Stopping the range early (break, or the stop of iter.Pull) cancels the
// jobs in flight, starts no more and waits for the workers before the
// range returns.
func Ordered[J, R any](ctx context.Context, jobs iter.Seq[J], parallel int, run func(context.Context, J) (R, error)) iter.Seq[Done[J, R]] {
	return func(yield func(Done[J, R]) bool) {
		parallel = max(parallel, 1)
		ctx, cancel := context.WithCancel(ctx)
		order := make(chan *slot[J, R], 2*parallel) // to the caller, in the order of jobs
		work := make(chan *slot[J, R])              // to the workers
		var wg sync.WaitGroup
		wg.Add(1 + parallel)
		go func() {
			defer wg.Done()
			defer close(order)
			defer close(work)
			for j := range jobs {
				if ctx.Err() != nil {
					return
				}
				s := &slot[J, R]{d: Done[J, R]{Job: j}, done: make(chan struct{})}
				select {
				case order <- s:
				case <-ctx.Done():
					return
				}
				select {
				case work <- s:
				case <-ctx.Done():
					s.d.Err = context.Cause(ctx)
					close(s.done)
					return
				}
			}
		}()
		for range parallel {
			go func() {
				defer wg.Done()
				for s := range work {
					if ctx.Err() != nil {
						// The context ended while s waited for this worker.
						s.d.Err = context.Cause(ctx)
					} else {
						s.d.Res, s.d.Err = run(ctx, s.d.Job)
					}
					close(s.done)
				}
			}()
		}
		defer func() {
			cancel()
			for range order {
			}
			wg.Wait()
		}()
		for s := range order {
			<-s.done
			d := s.d
			s.d = Done[J, R]{} // let the result go once the caller has it
			if !yield(d) {
				return
			}
		}
	}
}
