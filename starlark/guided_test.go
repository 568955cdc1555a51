package starlark

import (
	"context"
	"slices"
	"testing"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine"
)

// rareCrashes is explore's test world with rare crashes, so that most
// seeds pass and a guided corpus grows.
func rareCrashes(t *testing.T) (*Env, *sl.Thread, *World) {
	env := NewEnv(Options{Engine: testEngine(t), Parallel: 3})
	th := env.NewThread("test")
	w, err := sl.Call(th, env.Predeclared()["load_config"], sl.Tuple{sl.String("testdata/explore/seedfall.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err = sl.Call(th, mustAttr(t, w, "replace"), nil, []sl.Tuple{{sl.String("faults"), dictOf(map[string]sl.Value{"crash_per_sec": sl.Float(0.2)})}})
	if err != nil {
		t.Fatal(err)
	}
	return env, th, w.(*World)
}

// guided under a run budget finds the same failures at -parallel 1 and 3,
// with the same runs and work; its mutations fork (more runs than the
// budget, each fork costing the share it ran); and every failure it finds
// replays from its schedule, in its world, to its digest.
func TestGuidedIsDeterministic(t *testing.T) {
	env, th, w := rareCrashes(t)
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
		x, err := env.Explore(th, w, fn, ExploreOptions{Seeds: engine.SeedRange(1, 1000), Budget: Budget{Runs: 60}, Parallel: 1 + 2*i})
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

// -stop-at-first stops at the first failing run in the order of its
// batch: the runs after it are not made or do not count, so an
// exploration counts the same runs and finds the same one failure at
// -parallel 1 and 3; random_seeds stops at the seed that failed.
func TestStopAtFirst(t *testing.T) {
	env, th, w := rareCrashes(t)
	for _, name := range []string{"random_seeds", "guided"} {
		fn, err := env.StdStrategy(th, sl.String(name))
		if err != nil {
			t.Fatal(err)
		}
		var runs [2]int
		var digest [2]string
		for i := range runs {
			x, err := env.Explore(th, w, fn, ExploreOptions{Seeds: engine.SeedRange(1, 1000), Budget: Budget{Runs: 500}, Parallel: 1 + 2*i, StopAtFirst: true})
			if err != nil {
				t.Fatal(ScriptError(err))
			}
			if len(x.Failures) != 1 || x.StoppedBy != "failure" {
				t.Fatalf("%s at -parallel %d: %d failures, stopped by %s; want one, stopped by the failure", name, 1+2*i, len(x.Failures), x.StoppedBy)
			}
			runs[i], digest[i] = x.Runs, x.Failures[0].Result.Digest
			if name == "random_seeds" && uint64(x.Runs) != x.Failures[0].Seed {
				t.Errorf("random_seeds from seed 1 stopped after %d runs at a failure of seed %d", x.Runs, x.Failures[0].Seed)
			}
		}
		if runs[0] != runs[1] || digest[0] != digest[1] {
			t.Errorf("%s: %d runs to %s at -parallel 1, %d runs to %s at 3", name, runs[0], digest[0], runs[1], digest[1])
		}
		t.Logf("%s: the first failure after %d runs", name, runs[0])
	}
}
