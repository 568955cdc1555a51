package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// passingSeeds is how many seeds a world that must pass is run for: the
// issues ask for 500, which scripts/sweep-examples runs (SEEDFALL_SWEEP=1);
// the test suite runs 8 (4 with -short), each a fault schedule of its own,
// to stay within its time budget of 8 minutes cold on 2 cores (issue 13):
// the fixed primary-backup world alone costs over a second a seed. The
// bugs' limits of seeds are not lowered: each bug is still found within
// the limit its example promises.
func passingSeeds() uint64 {
	switch {
	case os.Getenv("SEEDFALL_SWEEP") == "1":
		return 500
	case testing.Short():
		return 4
	}
	return 8
}

// The bundled examples are real programs with real bugs: seedfall must find
// each bug within its limit of seeds, and each fixed twin must pass.
func TestExamples(t *testing.T) {
	for _, ex := range []struct {
		name  string
		limit uint64 // the bug must be found within this many seeds
	}{{"kvlog", 20}, {"snapshot", 20}, {"symswap", 50}, {"walretry", 50}, {"primarybackup", 50}, {"retries", 50}, {"lease", 20},
		{"liveness", 20}, {"liveness/chaos", 20}, {"register", 20},
		{"groupcommit", 50}, {"bank", 100}} {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel() // the suite's longest test: use both cores once the other packages are done
			// "dir/variant" runs dir's seedfall.variant.json and its fixed twin.
			dir, variant, _ := strings.Cut(ex.name, "/")
			world := "seedfall"
			if variant != "" {
				world += "." + variant
			}
			buggy := prepareFile(t, fmt.Sprintf("../examples/%s/%s.json", dir, world))
			found := uint64(0)
			for seed := uint64(1); seed <= ex.limit && found == 0; seed++ {
				if r := run(t, buggy, seed, nil); !r.Passed {
					found = seed
					if r.Class != exampleClass(dir) {
						t.Fatalf("seed %d failed as %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
					}
					// The failure replays exactly from its schedule.
					again := twice(t, buggy, seed, r.Schedule)
					if again.Digest != r.Digest {
						t.Fatalf("seed %d: replaying its schedule changed the trace", seed)
					}
				}
			}
			if found == 0 {
				t.Fatalf("the bug of %s was not found in %d seeds", ex.name, ex.limit)
			}
			fixed := prepareFile(t, fmt.Sprintf("../examples/%s/%s.fixed.json", dir, world))
			for seed := uint64(1); seed <= passingSeeds(); seed++ {
				if r := run(t, fixed, seed, nil); !r.Passed {
					t.Fatalf("fixed %s fails seed %d: %s: %s\n%s", ex.name, seed, r.Class, r.Reason, output(r, ""))
				}
			}
			r := twice(t, fixed, 1, nil)
			if preemptionOnly(dir) {
				// Strategy random records no fault: the fixed twin must face the
				// same preemption as the bug.
				if s := fixed.World.Preempt.Strategy; s != buggy.World.Preempt.Strategy || !preempts(fixed) {
					t.Fatalf("fixed %s preempts with %q, the bug with %q: the test proves nothing", ex.name, s, buggy.World.Preempt.Strategy)
				}
			} else if len(r.Schedule.Faults) == 0 {
				t.Fatalf("fixed %s seed 1 saw no fault: the test proves nothing", ex.name)
			}
		})
	}
}

// exampleClass is how an example's bug fails a run: its workload exits
// non-zero, except where only the history check can see the bug.
func exampleClass(dir string) string {
	if dir == "register" {
		return ClassLinearizability // the client's own checks pass
	}
	return ClassWorkload
}

// preemptionOnly says the example's bug is found by preemption inside a node
// alone, with no fault in the schedule.
func preemptionOnly(dir string) bool { return dir == "bank" }

func preempts(p *Prepared) bool {
	s := p.World.Preempt.Strategy
	return s != world.StrategyNone && s != ""
}

func prepareFile(t testing.TB, path string) *Prepared {
	t.Helper()
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testEngine(t).Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The bank's quick handler (read both balances, log a line, write them back,
// no lock) with four clients at the default latency: a request that arrives
// while a handler computes runs at the handler's next preemption, as another
// core would run it on Linux, so a transfer can overwrite another's update.
// Seed 42 is the first of the first 200 to lose money; the same seed gives
// the same trace twice, and the twin that holds the lock passes.
func TestBankHandlersOverlap(t *testing.T) {
	t.Parallel()
	buggy := prepareFile(t, "../examples/bank/seedfall.handlers.json")
	r := twice(t, buggy, 42, nil)
	if r.Passed || r.Class != ClassWorkload || !strings.Contains(output(r, "client"), "a transfer overwrote another's update") {
		t.Fatalf("seed 42: passed %v, %s: %s\n%s", r.Passed, r.Class, r.Reason, output(r, ""))
	}
	fixed := prepareFile(t, "../examples/bank/seedfall.handlers.fixed.json")
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		if r := run(t, fixed, seed, nil); !r.Passed {
			t.Fatalf("fixed seed %d: %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
		}
	}
	if r := twice(t, fixed, 42, nil); !r.Passed {
		t.Fatalf("fixed seed 42: %s: %s", r.Class, r.Reason)
	}
}
