package starlark

import (
	"context"
	"slices"
	"testing"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine"
)

// guided under a run budget finds the same failures at -parallel 1 and 3,
// with the same runs and work; its mutations fork (more runs than the
// budget, each fork costing the share it ran); and every failure it finds
// replays from its schedule, in its world, to its digest.
func TestGuidedIsDeterministic(t *testing.T) {
	env := NewEnv(Options{Engine: testEngine(t), Parallel: 3})
	th := env.NewThread("test")
	w, err := sl.Call(th, env.Predeclared()["load_config"], sl.Tuple{sl.String("testdata/explore/seedfall.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Rare crashes, so that most seeds pass and the corpus grows.
	w, err = sl.Call(th, mustAttr(t, w, "replace"), nil, []sl.Tuple{{sl.String("faults"), dictOf(map[string]sl.Value{"crash_per_sec": sl.Float(0.2)})}})
	if err != nil {
		t.Fatal(err)
	}
	fn, err := env.StdStrategy(th, sl.String("guided"))
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		runs     int
		work     float64
		digests  []string
		branched int
	}
	var got [2]seen
	var failures []*Run
	for i := range got {
		x, err := env.Explore(th, w.(*World), fn, ExploreOptions{Seeds: engine.SeedRange(1, 1000), Budget: Budget{Runs: 60}, Parallel: 1 + 2*i})
		if err != nil {
			t.Fatal(ScriptError(err))
		}
		got[i] = seen{runs: x.Runs, work: x.Work}
		for _, r := range x.Failures {
			got[i].digests = append(got[i].digests, r.Result.Digest)
			if len(r.Result.Schedule.Branches) > 0 {
				got[i].branched++
			}
		}
		failures = x.Failures
		if x.Runs <= 60 {
			t.Errorf("%d runs for a budget of 60: no mutation forked (work %.2f)", x.Runs, x.Work)
		}
		if x.Work < 59 || x.Work > 62 {
			t.Errorf("the exploration spent %.2f of a budget of 60", x.Work)
		}
	}
	if got[0].runs != got[1].runs || got[0].work != got[1].work || !slices.Equal(got[0].digests, got[1].digests) {
		t.Fatalf("guided at -parallel 1 and 3 differ:\n%+v\n%+v", got[0], got[1])
	}
	if len(failures) == 0 {
		t.Fatal("guided found no failure in 60 runs of a world whose crashes lose writes")
	}
	for _, r := range failures {
		again, err := env.RunValue(context.Background(), r.World, r.Seed, r.Schedule())
		if err != nil {
			t.Fatal(err)
		}
		if again.Result.Digest != r.Result.Digest {
			t.Errorf("seed %d (%d branches) replays to %s, found as %s", r.Seed, len(r.Result.Schedule.Branches), again.Result.Digest, r.Result.Digest)
		}
	}
	t.Logf("%d runs, work %.2f, %d failures, %d of them from mutations", got[0].runs, got[0].work, len(failures), got[0].branched)
}
