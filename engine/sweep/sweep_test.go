package sweep

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// count yields 0, 1, ... n-1.
func count(n int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// Jobs that finish in any order are handed over in the order of the list,
// each with its own result, at any parallelism.
func TestOrderedKeepsTheListOrder(t *testing.T) {
	for _, parallel := range []int{1, 2, 3, 8} {
		var got []int
		run := func(ctx context.Context, i int) (int, error) {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return i * i, nil
		}
		for d := range Ordered(context.Background(), count(50), parallel, run) {
			if d.Err != nil || d.Res != d.Job*d.Job {
				t.Fatalf("parallel %d: job %d gave %d, %v", parallel, d.Job, d.Res, d.Err)
			}
			got = append(got, d.Job)
		}
		if want := slices.Collect(count(50)); !slices.Equal(got, want) {
			t.Fatalf("parallel %d: order %v", parallel, got)
		}
	}
}

// A slow consumer holds at most 2×parallel finished jobs: the list is drawn
// as the caller takes results, not all at once.
func TestOrderedDrawsLazily(t *testing.T) {
	const parallel = 2
	var drawn, taken atomic.Int64
	jobs := func(yield func(int) bool) {
		for i := 0; ; i++ {
			drawn.Add(1)
			if !yield(i) {
				return
			}
		}
	}
	run := func(ctx context.Context, i int) (int, error) { return i, nil }
	for d := range Ordered(context.Background(), jobs, parallel, run) {
		taken.Add(1)
		time.Sleep(200 * time.Microsecond)
		// Drawn but not taken: the order queue, one waiting for a worker,
		// one in each worker, and one in the feeder's hands.
		if ahead := drawn.Load() - taken.Load(); ahead > 2*parallel+parallel+2 {
			t.Fatalf("after job %d, %d jobs drawn ahead of the caller", d.Job, ahead)
		}
		if d.Job == 200 {
			break
		}
	}
}

// Breaking out of the range stops the sweep: no job starts after the
// range returns, and the jobs in flight saw their context end.
func TestOrderedBreakCancels(t *testing.T) {
	var running, started atomic.Int64
	run := func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		running.Add(1)
		defer running.Add(-1)
		if i >= 3 {
			<-ctx.Done() // would run for ever
			return 0, ctx.Err()
		}
		return i, nil
	}
	for d := range Ordered(context.Background(), count(1000), 4, run) {
		if d.Job == 2 {
			break
		}
	}
	if n := running.Load(); n != 0 {
		t.Fatalf("%d jobs still running after the range returned", n)
	}
	n := started.Load()
	time.Sleep(10 * time.Millisecond)
	if started.Load() != n || n > 3+4 {
		t.Fatalf("%d jobs started, then %d: the sweep went on after the break", n, started.Load())
	}
}

// Once the context ends no job starts; what was cut short comes back with
// an error, and what finished with its result, still in order.
func TestOrderedStopsAtTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int64
	run := func(ctx context.Context, i int) (int, error) {
		started.Add(1)
		if i == 5 {
			cancel()
		}
		return i, nil
	}
	var last int
	for d := range Ordered(ctx, count(1000), 1, run) {
		if d.Err != nil && !errors.Is(d.Err, context.Canceled) {
			t.Fatalf("job %d: %v", d.Job, d.Err)
		}
		last = d.Job
	}
	if n := started.Load(); n != 6 {
		t.Fatalf("%d jobs started; the context ended in the sixth", n)
	}
	if last > 7 {
		t.Fatalf("jobs up to %d handed over after the context ended", last)
	}
}

// iter.Pull's stop ends the sweep as a break does (the go test helper pulls
// one seed per subtest).
func TestOrderedPull(t *testing.T) {
	var running atomic.Int64
	run := func(ctx context.Context, i int) (int, error) {
		running.Add(1)
		defer running.Add(-1)
		if i > 0 {
			<-ctx.Done()
		}
		return i, ctx.Err()
	}
	next, stop := iter.Pull(Ordered(context.Background(), count(10), 3, run))
	if d, ok := next(); !ok || d.Job != 0 || d.Err != nil {
		t.Fatalf("first job: %+v, %v", d, ok)
	}
	stop()
	if n := running.Load(); n != 0 {
		t.Fatalf("%d jobs still running after stop", n)
	}
}

// BenchmarkOrdered is the pool's own cost per job, with jobs that do
// nothing: next to a seed's run (tens of milliseconds), it is nothing.
func BenchmarkOrdered(b *testing.B) {
	run := func(ctx context.Context, i int) (int, error) { return i, nil }
	for _, parallel := range []int{1, 2, 8} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			n := 0
			for d := range Ordered(context.Background(), count(b.N), parallel, run) {
				n += d.Res
			}
		})
	}
}
