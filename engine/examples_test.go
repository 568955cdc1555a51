package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// The bundled examples are real programs with real bugs: seedfall must find
// each bug within 20 seeds, and each fixed twin must pass 500.
func TestExamples(t *testing.T) {
	for _, ex := range []string{"kvlog", "snapshot", "primarybackup", "retries"} {
		t.Run(ex, func(t *testing.T) {
			buggy := prepareFile(t, fmt.Sprintf("../examples/%s/seedfall.json", ex))
			found := uint64(0)
			for seed := uint64(1); seed <= 20 && found == 0; seed++ {
				if r := run(t, buggy, seed, nil); !r.Passed {
					found = seed
					if r.Class != ClassWorkload {
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
				t.Fatalf("the bug of %s was not found in 20 seeds", ex)
			}
			fixed := prepareFile(t, fmt.Sprintf("../examples/%s/seedfall.fixed.json", ex))
			n := uint64(500)
			if testing.Short() {
				n = 50
			}
			for seed := uint64(1); seed <= n; seed++ {
				if r := run(t, fixed, seed, nil); !r.Passed {
					t.Fatalf("fixed %s fails seed %d: %s: %s\n%s", ex, seed, r.Class, r.Reason, output(r, ""))
				}
			}
			r := twice(t, fixed, 1, nil)
			if len(r.Schedule.Faults) == 0 {
				t.Fatalf("fixed %s seed 1 saw no crash: the test proves nothing", ex)
			}
		})
	}
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
