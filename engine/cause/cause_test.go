package cause

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

func prepare(t *testing.T, path string) *engine.Prepared {
	t.Helper()
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	p, err := e.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// kvlog acknowledges writes before it fsyncs them: its failure becomes
// inevitable at the crash that loses them, and cause names that crash.
func TestCauseFindsTheCrash(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	find := func(parallel int) *Result {
		res, err := Find(context.Background(), p, 1, nil, Options{Moments: 8, Branches: 4, Parallel: parallel})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := find(1)
	if res.Failure.Passed {
		t.Fatal("kvlog seed 1 passed; the test needs its failure")
	}
	if len(res.Faults) != 1 || res.Faults[0].Kind != faults.Crash || res.Faults[0].Node != "server" {
		t.Fatalf("faults in (%v, %v]: %v; want the server's crash", res.After, res.Inevitable, res.Faults)
	}
	crash := res.Faults[0].At
	if !(res.After <= crash && crash < res.Inevitable) {
		t.Errorf("the crash at %v is not in (%v, %v]", crash, res.After, res.Inevitable)
	}
	for _, m := range res.Moments {
		if m.At <= crash && m.Failed > 0 {
			t.Errorf("a fork at %v, before the crash, failed %d times: without the crash kvlog keeps every write", m.At, m.Failed)
		}
	}
	// The same answer every time, whatever the parallelism.
	again := find(2)
	again.Failure, res.Failure = nil, nil
	again.Runs, res.Runs = 0, 0
	if !reflect.DeepEqual(res, again) {
		t.Errorf("parallel 1 and 2 differ:\n%+v\n%+v", res, again)
	}
}

// A passing seed has nothing to explain.
func TestCauseOfAPass(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.fixed.json")
	_, err := Find(context.Background(), p, 1, nil, Options{Moments: 2, Branches: 1})
	if err == nil || err.Error() != `seed 1 passes (every workload exited 0): there is no failure to explain` {
		t.Errorf("err = %v", err)
	}
}

// Interrupted (Ctrl-C), cause returns what it established: the moments
// whose forks finished, and an interval that still holds the crash.
func TestCauseInterrupted(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	whole, err := Find(context.Background(), p, 1, nil, Options{Moments: 8, Branches: 4, Parallel: 2})
	if err != nil || whole.Interrupted {
		t.Fatal(err, whole.Interrupted)
	}
	for _, after := range []int{5, 8 * 4, 8*4 + 2} {
		ctx, cancel := context.WithCancel(context.Background())
		res, err := Find(ctx, p, 1, nil, Options{Moments: 8, Branches: 4, Parallel: 2, Progress: func(done, total int) {
			if done == after {
				cancel()
			}
		}})
		cancel()
		if err != nil {
			t.Fatalf("after %d runs: %v", after, err)
		}
		if !res.Interrupted || res.Runs < after || res.Runs > after+2 {
			t.Errorf("after %d runs: interrupted %v, %d runs", after, res.Interrupted, res.Runs)
		}
		n := 0
		for _, m := range res.Moments {
			if m.Runs < 1 || m.Runs > 4 || m.Failed > m.Runs {
				t.Errorf("after %d runs: moment %+v", after, m)
			}
			n += m.Runs
		}
		if n != res.Runs {
			t.Errorf("after %d runs: the moments count %d forks, the result %d", after, n, res.Runs)
		}
		if !(res.After <= whole.After && whole.Inevitable <= res.Inevitable) || res.Inevitable > time.Duration(res.Failure.SimNs) {
			t.Errorf("after %d runs: (%v, %v] does not hold (%v, %v], the interval of the whole search", after, res.After, res.Inevitable, whole.After, whole.Inevitable)
		}
		t.Logf("after %d runs: %d moments, (%v, %v]", after, len(res.Moments), res.After, res.Inevitable)
	}
}
