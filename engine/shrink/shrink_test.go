package shrink

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

func prepare(t *testing.T, path string) *engine.Prepared {
	t.Helper()
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The bundled examples' bugs (engine/examples_test.go says which seed of
// each fails) shrink to at most 3 faults, and the shrunk schedule fails
// the same way on replay, with the trace the shrink saw.
func TestExamples(t *testing.T) {
	for _, ex := range []struct {
		name  string
		seed  uint64
		short bool // also run with -short
	}{
		{"kvlog", 1, true}, {"snapshot", 1, false}, {"symswap", 1, true}, {"walretry", 1, true},
		{"primarybackup", 1, false}, {"retries", 1, false}, {"lease", 2, true},
	} {
		t.Run(ex.name, func(t *testing.T) {
			if testing.Short() && !ex.short {
				t.Skip("slow example; runs without -short")
			}
			p := prepare(t, fmt.Sprintf("../../examples/%s/seedfall.json", ex.name))
			begin := time.Now()
			res, err := Shrink(context.Background(), p, ex.seed, nil, Options{Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			wall := time.Since(begin)
			if res.Start.Passed {
				t.Fatalf("seed %d of %s passes: pick a failing one", ex.seed, ex.name)
			}
			sch := res.Schedule
			t.Logf("%s seed %d: %d faults -> %d in %d runs, duration %v, %v wall", ex.name, ex.seed, sch.ShrunkFrom, len(sch.Faults), res.Runs, sch.Duration, wall.Round(time.Millisecond))
			for _, f := range sch.Faults {
				t.Logf("  %s", faults.Describe(f))
			}
			if res.Exhausted {
				t.Fatal("shrink said its budget ran out, with no budget")
			}
			if len(sch.Faults) > 3 {
				t.Errorf("shrunk to %d faults, want at most 3", len(sch.Faults))
			}
			if sch.ShrunkFrom != len(res.Start.Schedule.Faults) || sch.ShrinkRuns != res.Runs {
				t.Errorf("shrunk_from %d (started with %d), shrink_runs %d (took %d)", sch.ShrunkFrom, len(res.Start.Schedule.Faults), sch.ShrinkRuns, res.Runs)
			}
			// Through the file, as a user replays it.
			b, err := sch.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var back faults.Schedule
			if err := back.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
			again, err := p.Run(context.Background(), engine.RunOptions{Seed: ex.seed, Schedule: &back})
			if err != nil {
				t.Fatal(err)
			}
			if again.Passed || again.Class != res.Start.Class || again.Node != res.Start.Node {
				t.Fatalf("the shrunk schedule replays as passed=%v %s on %q, want %s on %q", again.Passed, again.Class, again.Node, res.Start.Class, res.Start.Node)
			}
			if again.Digest != res.Run.Digest {
				t.Errorf("the replay's trace differs from the shrunk run's")
			}
		})
	}
}

// A schedule shrinks to the same bytes with one run at a time and with
// several.
func TestSameWhateverParallel(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	var first []byte
	for _, par := range []int{1, 3} {
		res, err := Shrink(context.Background(), p, 3, nil, Options{Parallel: par})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := res.Schedule.MarshalJSON()
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("parallel %d shrank to\n%s\nparallel 1 to\n%s", par, b, first)
		}
	}
}

func TestPassingSeed(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.fixed.json")
	res, err := Shrink(context.Background(), p, 1, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Start.Passed || res.Schedule != nil || res.Runs != 1 {
		t.Fatalf("a passing seed: passed %v, schedule %v, %d runs", res.Start.Passed, res.Schedule, res.Runs)
	}
}
