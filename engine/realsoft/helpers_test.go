package realsoft

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

// testEngine is one engine for the package: it caches built and compiled
// programs. Every test of the package is parallel (go test runs two at a
// time on two cores): the build or compile of one library overlaps the
// runs of another, and the package, often the last of a cold go test ./...,
// does not leave a core idle.
func testEngine(t testing.TB) *engine.Engine {
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	return eng
}

// prepareFile loads and builds a world of examples/real, such as
// "bboltkv/seedfall.json".
func prepareFile(t testing.TB, rel string) *engine.Prepared {
	t.Helper()
	w, err := world.Load("../../examples/real/" + rel)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testEngine(t).Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t testing.TB, p *engine.Prepared, seed uint64, sch *faults.Schedule) *engine.Result {
	t.Helper()
	res, err := p.Run(context.Background(), engine.RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// twice runs a seed two times and insists on the same digest.
func twice(t testing.TB, p *engine.Prepared, seed uint64, sch *faults.Schedule) *engine.Result {
	t.Helper()
	a, b := run(t, p, seed, sch), run(t, p, seed, sch)
	if a.Digest != b.Digest {
		t.Fatalf("seed %d ran twice with different traces:\n%s\n---\n%s", seed, trace.Render(a.Lines, ""), trace.Render(b.Lines, ""))
	}
	return a
}

func output(res *engine.Result, node string) string { return trace.Render(res.Lines, node) }

// passingSeeds is how many seeds a world that must pass runs for in the
// test suite; scripts/sweep-examples runs the 100 (SEEDFALL_SWEEP=1).
func passingSeeds() uint64 {
	switch {
	case os.Getenv("SEEDFALL_SWEEP") == "1":
		return 100
	case testing.Short():
		return 2
	}
	return 4
}

// benchWorld runs seeds 1 to b.N of a world that must pass and reports
// seeds per second of real time and how much faster than real time the
// world runs.
func benchWorld(b *testing.B, rel string) {
	p := prepareFile(b, rel)
	b.ResetTimer()
	var sim, wall int64
	start := time.Now()
	for i := 0; i < b.N; i++ {
		res := run(b, p, uint64(i+1), nil)
		if !res.Passed {
			b.Fatalf("seed %d: %s: %s", i+1, res.Class, res.Reason)
		}
		sim += res.SimNs
		wall += res.WallNs
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "seeds/s")
	b.ReportMetric(float64(sim)/float64(wall), "sim/wall")
}

// findFailure runs seeds 1..limit of a world that must fail and returns the
// first failure.
func findFailure(t testing.TB, p *engine.Prepared, limit uint64) *engine.Result {
	t.Helper()
	for seed := uint64(1); seed <= limit; seed++ {
		if res := run(t, p, seed, nil); !res.Passed {
			return res
		}
	}
	t.Fatalf("no failure in seeds 1-%d", limit)
	return nil
}

// replaysExactly replays a failure from its recorded schedule, twice, and
// insists on the same verdict and digest as the run that found it.
func replaysExactly(t testing.TB, p *engine.Prepared, res *engine.Result) {
	t.Helper()
	again := twice(t, p, res.Seed, res.Schedule)
	if again.Passed || again.Class != res.Class || again.Digest != res.Digest {
		t.Fatalf("seed %d replayed from its schedule: passed %v, class %q, digest %s; the run that found it: class %q, digest %s",
			res.Seed, again.Passed, again.Class, again.Digest, res.Class, res.Digest)
	}
}

// shrunkFails replays a schedule kept in the repo (written by seedfall shrink)
// twice and returns the run, which must fail.
func shrunkFails(t *testing.T, p *engine.Prepared, rel string) *engine.Result {
	t.Helper()
	sch, err := faults.Load("../../examples/real/"+rel, checkConfig(p))
	if err != nil {
		t.Fatal(err)
	}
	res := twice(t, p, sch.Seed, sch)
	if res.Passed {
		t.Fatalf("seed %d passed with %s", sch.Seed, rel)
	}
	return res
}

// checkConfig is what a schedule of p's world is checked against.
func checkConfig(p *engine.Prepared) faults.CheckConfig {
	var names []string
	for _, prog := range p.World.Programs() {
		names = append(names, prog.Name)
	}
	return faults.CheckConfig{Programs: names, Duration: p.World.Duration}
}
