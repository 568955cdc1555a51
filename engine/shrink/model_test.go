package shrink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

const ms = time.Millisecond

// model is a bug without a simulator: the workload fails 400ms after a crash
// of the server that starts between 100ms and 900ms and lasts at least
// 20ms, provided a crash_io hit the server at its 5th disk operation or
// later. A crash_io alone makes the server panic instead: a different
// failure, which shrink must not settle for.
func model(ctx context.Context, sch *faults.Schedule) (*engine.Result, error) {
	var crashAt time.Duration = -1
	io := false
	for _, f := range sch.Faults {
		switch {
		case f.Kind == faults.Crash && f.Node == "server" && f.At >= 100*ms && f.At <= 900*ms && f.Until-f.At >= 20*ms:
			if crashAt < 0 {
				crashAt = f.At
			}
		case f.Kind == "crash_io" && f.Node == "server" && f.Op >= 5:
			io = true
		}
	}
	res := &engine.Result{Seed: sch.Seed, Passed: true, SimNs: int64(sch.Duration)}
	switch {
	case io && crashAt >= 0 && crashAt+400*ms <= sch.Duration:
		res = &engine.Result{Seed: sch.Seed, Class: engine.ClassWorkload, Node: "client", SimNs: int64(crashAt + 400*ms)}
	case io:
		res = &engine.Result{Seed: sch.Seed, Class: engine.ClassPanic, Node: "server", SimNs: int64(50 * ms)}
	}
	// The faults that happened: those timed no later than the end.
	applied := &faults.Schedule{Seed: sch.Seed, Duration: sch.Duration}
	for _, f := range sch.Faults {
		if atOp(f) || f.At <= time.Duration(res.SimNs) {
			applied.Faults = append(applied.Faults, f)
		}
	}
	res.Schedule = applied
	return res, nil
}

func modelStart() *faults.Schedule {
	return &faults.Schedule{Seed: 7, Duration: 10 * time.Second, Faults: []faults.Fault{
		{At: 50 * ms, Kind: faults.Crash, Node: "client", Until: 80 * ms},
		{At: 70 * ms, Kind: "crash_io", Node: "server", Op: 3, Until: 90 * ms},
		{At: 250 * ms, Kind: faults.Crash, Node: "server", Until: 260 * ms},
		{At: 300 * ms, Kind: "clog", From: "client", To: "server", Mode: "stop", Until: 400 * ms},
		{At: 612345678, Kind: faults.Crash, Node: "server", Until: 812345678},
		{At: 700 * ms, Kind: "crash_io", Node: "server", Op: 41, Until: 750 * ms},
		{At: 720 * ms, Kind: "pause", Node: "client", Until: 730 * ms},
		{At: 800 * ms, Kind: faults.Crash, Node: "server", Until: 900 * ms},
		{At: 3 * time.Second, Kind: faults.Crash, Node: "server", Until: 4 * time.Second},
	}}
}

func TestShrinkModel(t *testing.T) {
	var want string
	var wantRuns int
	for _, par := range []int{1, 2, 3, 8} {
		var seen []Progress
		res, err := shrink(context.Background(), plain(model), 20*time.Second, 7, modelStart(), Options{Parallel: par, Progress: func(p Progress) { seen = append(seen, p) }})
		if err != nil {
			t.Fatal(err)
		}
		got := key(res.Schedule)
		// The crash moves to 100ms and lasts 20ms; the crash_io moves to
		// op 5; the search ran to 10% after the failure at 500ms, and the
		// schedule keeps the horizon it started with (uncut).
		wantFaults := []faults.Fault{
			{At: 100 * ms, Kind: faults.Crash, Node: "server", Until: 120 * ms},
			{At: 700 * ms, Kind: "crash_io", Node: "server", Op: 5, Until: 700 * ms},
		}
		if !slices.EqualFunc(res.Schedule.Faults, wantFaults, func(a, b faults.Fault) bool { return a.String() == b.String() }) {
			t.Fatalf("parallel %d: shrunk to\n%s\nwant the crash at 100ms for 20ms and the crash_io at op 5", par, got)
		}
		if res.Schedule.Duration != 10*time.Second {
			t.Errorf("parallel %d: duration %v, want the start's 10s", par, res.Schedule.Duration)
		}
		if res.Schedule.ShrunkFrom != 9 || res.Schedule.ShrinkRuns != res.Runs || res.Exhausted {
			t.Errorf("parallel %d: shrunk_from %d, shrink_runs %d (runs %d), exhausted %v", par, res.Schedule.ShrunkFrom, res.Schedule.ShrinkRuns, res.Runs, res.Exhausted)
		}
		if res.Run.Class != engine.ClassWorkload || res.Run.Node != "client" {
			t.Errorf("parallel %d: the shrunk run fails as %s on %s", par, res.Run.Class, res.Run.Node)
		}
		if len(seen) == 0 || seen[len(seen)-1].Runs != res.Runs || seen[len(seen)-1].Faults != 2 {
			t.Errorf("parallel %d: last progress %+v, want %d runs and 2 faults", par, seen[len(seen)-1], res.Runs)
		}
		if par == 1 {
			want, wantRuns = got, res.Runs
			t.Logf("%d runs", res.Runs)
		} else if got != want || res.Runs != wantRuns {
			t.Errorf("parallel %d gave another schedule or run count (%d runs, want %d):\n%s\nwant\n%s", par, res.Runs, wantRuns, got, want)
		}
	}
}

func TestShrinkModelBudget(t *testing.T) {
	res, err := shrink(context.Background(), plain(model), 20*time.Second, 7, modelStart(), Options{Budget: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exhausted || res.Runs != 1 || len(res.Schedule.Faults) != 9 {
		t.Fatalf("with no budget: exhausted %v after %d runs with %d faults, want the starting schedule after 1 run", res.Exhausted, res.Runs, len(res.Schedule.Faults))
	}
	if res.Run.Passed || res.Run.Class != engine.ClassWorkload {
		t.Fatalf("the best so far must still fail: %+v", res.Run)
	}
}

func TestShrinkModelPasses(t *testing.T) {
	start := &faults.Schedule{Seed: 7, Duration: time.Second, Faults: []faults.Fault{{At: 200 * ms, Kind: faults.Crash, Node: "server", Until: 300 * ms}}}
	res, err := shrink(context.Background(), plain(model), 20*time.Second, 7, start, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Start.Passed || res.Schedule != nil || res.Runs != 1 {
		t.Fatalf("a passing start: passed %v, schedule %v, %d runs", res.Start.Passed, res.Schedule, res.Runs)
	}
}

func TestSplit(t *testing.T) {
	fs := make([]faults.Fault, 7)
	for i := range fs {
		fs[i].Op = uint64(i)
	}
	for _, tc := range []struct {
		n    int
		want string
	}{{2, "0 1 2|3 4 5 6"}, {3, "0 1|2 3|4 5 6"}, {7, "0|1|2|3|4|5|6"}} {
		var parts []string
		for _, ch := range split(fs, tc.n) {
			var ops []string
			for _, f := range ch {
				ops = append(ops, fmt.Sprint(f.Op))
			}
			parts = append(parts, strings.Join(ops, " "))
		}
		if got := strings.Join(parts, "|"); got != tc.want {
			t.Errorf("split into %d: %q, want %q", tc.n, got, tc.want)
		}
	}
}

// A context cancelled mid-shrink (Ctrl-C) ends it like a budget: the runs
// it cut short count for nothing, and the result is the smallest failing
// schedule so far, with its whole run.
func TestShrinkModelInterrupted(t *testing.T) {
	for _, par := range []int{1, 4} {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		var mu sync.Mutex
		cut := func(ctx context.Context, sch *faults.Schedule) (*engine.Result, error) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 12 {
				cancel()
			}
			if n >= 12 {
				return nil, fmt.Errorf("run stopped: %w", ctx.Err())
			}
			return model(ctx, sch)
		}
		res, err := shrink(ctx, plain(cut), 20*time.Second, 7, modelStart(), Options{Parallel: par})
		if err != nil {
			t.Fatalf("parallel %d: %v", par, err)
		}
		if !res.Exhausted || res.Runs >= 12 || res.Runs < 2 {
			t.Errorf("parallel %d: exhausted %v after %d runs", par, res.Exhausted, res.Runs)
		}
		if got, err := model(context.Background(), res.Schedule); err != nil || got.Passed || got.Class != engine.ClassWorkload || res.Run.Class != engine.ClassWorkload {
			t.Errorf("parallel %d: the schedule so far must still fail like the start:\n%s", par, key(res.Schedule))
		}
		if len(res.Schedule.Faults) >= 9 {
			t.Logf("parallel %d: nothing removed before the interrupt (%d faults)", par, len(res.Schedule.Faults))
		}
	}
	// Cut short in its first run, there is nothing to shrink: an error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := shrink(ctx, plain(func(ctx context.Context, sch *faults.Schedule) (*engine.Result, error) {
		return nil, ctx.Err()
	}), 20*time.Second, 7, modelStart(), Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted first run: %v", err)
	}
}

// plain is a runner that does not use the candidate's parent.
func plain(f func(ctx context.Context, sch *faults.Schedule) (*engine.Result, error)) runFunc {
	return func(ctx context.Context, sch, _ *faults.Schedule, _ *engine.Result) (*engine.Result, error) {
		return f(ctx, sch)
	}
}
