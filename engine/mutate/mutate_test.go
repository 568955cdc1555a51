package mutate

import (
	"context"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
)

// kvlog's fixed server fsyncs each record before it answers: without
// mutants its seeds pass, fsync made a no-op is killed by the first seed,
// and fdatasync, which it never calls, is not reached. The search's
// outcomes are the same at any parallelism, as a sweep's are.
func TestSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a world")
	}
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	w, err := world.Load("../../examples/kvlog/seedfall.fixed.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Prepare(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	seeds, err := engine.ParseSeeds("1-3")
	if err != nil {
		t.Fatal(err)
	}
	mutants := []engine.Mutant{{Kind: engine.MutantFsync}, {Kind: engine.MutantFdatasync}}
	var first []Outcome
	for _, parallel := range []int{1, 3} {
		ran, failed, reached, err := Reach(ctx, p, seeds, parallel, mutants)
		if err != nil || failed != nil || ran != 3 {
			t.Fatalf("parallel %d, without mutants: %d ran, failed %v, %v", parallel, ran, failed, err)
		}
		if reached[0].Len() != 3 || reached[1].Len() != 0 {
			t.Fatalf("parallel %d: fsync reached in %d seeds, fdatasync in %d; want 3 and 0", parallel, reached[0].Len(), reached[1].Len())
		}
		var got []Outcome
		for i, m := range mutants {
			o, err := Search(ctx, p, m, reached[i], parallel)
			if err != nil {
				t.Fatal(err)
			}
			o.WallNs, o.Res = 0, nil
			got = append(got, o)
		}
		if got[0].Verdict != Killed || got[0].Seed != 1 || got[0].Runs != 1 || got[0].Weakened == 0 {
			t.Errorf("parallel %d: fsync %+v, want killed by seed 1, its first run", parallel, got[0])
		}
		if got[1].Verdict != NotReached || got[1].Runs != 0 {
			t.Errorf("parallel %d: fdatasync %+v, want not reached", parallel, got[1])
		}
		if first == nil {
			first = got
		} else if got[0] != first[0] || got[1] != first[1] {
			t.Errorf("parallel %d: %+v, parallel 1: %+v", parallel, got, first)
		}
	}
}
