package shrink

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// A failure that needs one dirty mapped page to survive a crash shrinks to
// that crash and one mmap_early_writeback fault, which replays to the same
// failure.
func TestShrinkMmapEarlyWriteback(t *testing.T) {
	dir, _ := filepath.Abs("../testdata/guests")
	w, err := world.Parse([]byte(`{"duration": "3s",
		"faults": {"crash_per_sec": 1, "restart_after": ["100ms", "200ms"], "mmap_early_writeback": 0.5},
		"nodes": [{"name": "d", "pkg": "./mmapops", "args": ["-mode", "crash", "-fail-if-kept"]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`), filepath.Join(dir, "seedfall.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	p, err := eng.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Shrink(context.Background(), p, 1, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Start.Passed || res.Schedule == nil {
		t.Fatalf("seed 1 did not fail: %s", res.Start.Reason)
	}
	kinds := map[string]int{}
	for _, f := range res.Schedule.Faults {
		kinds[f.Kind]++
		if f.Kind == engine.KindMmapEarlyWriteback && (f.Op != 1 || f.Path != "pages") {
			t.Errorf("shrunk to %v", f)
		}
	}
	if len(res.Schedule.Faults) != 2 || kinds[faults.Crash] != 1 || kinds[engine.KindMmapEarlyWriteback] != 1 {
		t.Fatalf("shrunk to %v", res.Schedule.Faults)
	}
	again, err := p.Run(context.Background(), engine.RunOptions{Seed: 1, Schedule: res.Schedule})
	if err != nil {
		t.Fatal(err)
	}
	if again.Passed || again.Digest != res.Run.Digest {
		t.Fatalf("the shrunk schedule replays to %v %q", again.Passed, again.Reason)
	}
	t.Logf("%d faults shrunk to %v in %d runs", res.Schedule.ShrunkFrom, res.Schedule.Faults, res.Runs)
}
