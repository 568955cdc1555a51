package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// racyWorld runs the racy guest (an unsynchronized read-modify-write of a
// counter by two goroutines) as the workload under a preempt object.
func racyWorld(preempt string) string {
	return fmt.Sprintf(`{"nodes": [], "workload": {"name": "w", "pkg": "./racy"}, "preempt": %s}`, preempt)
}

func TestPreemptFindsADataRace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		preempt string
		fails   bool
	}{
		{"none never interleaves", `{"strategy": "none"}`, false},
		{"random", `{"strategy": "random"}`, true},
		{"interleave is random", `{"interleave": true}`, true},
		{"calls", `{"strategy": "calls", "calls": 3000}`, true},
		{"pct", `{"strategy": "pct"}`, true},
		{"pct with steps", `{"strategy": "pct", "steps": 200000}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, racyWorld(tc.preempt))
			var failed *Result
			for seed := uint64(1); seed <= 5 && failed == nil; seed++ {
				if res := run(t, p, seed, nil); !res.Passed {
					failed = res
				}
			}
			if !tc.fails {
				if failed != nil {
					t.Fatalf("seed %d failed: %s\n%s", failed.Seed, failed.Reason, output(failed, ""))
				}
				return
			}
			if failed == nil {
				t.Fatal("no seed of 1-5 lost an update")
			}
			if failed.Class != ClassWorkload || !strings.Contains(output(failed, ""), "lost ") {
				t.Fatalf("seed %d: class %q, want workload and lost updates:\n%s", failed.Seed, failed.Class, output(failed, ""))
			}
			again := twice(t, p, failed.Seed, nil)
			if again.Digest != failed.Digest {
				t.Fatalf("seed %d ran again with another trace", failed.Seed)
			}
			replay := twice(t, p, failed.Seed, failed.Schedule)
			if replay.Digest != failed.Digest {
				t.Fatalf("the replay of seed %d differs:\n%s\n---\n%s", failed.Seed, output(failed, ""), output(replay, ""))
			}
		})
	}
}

// A pct change point is a fault: the schedule records it, a replay without
// it does not preempt there, and the race is gone.
func TestPreemptPCTRecordsChangePoints(t *testing.T) {
	p := prepare(t, racyWorld(`{"strategy": "pct", "depth": 2, "steps": 200000}`))
	var failed *Result
	for seed := uint64(1); seed <= 10 && failed == nil; seed++ {
		if res := run(t, p, seed, nil); !res.Passed {
			failed = res
		}
	}
	if failed == nil {
		t.Fatal("no seed of 1-10 lost an update under pct")
	}
	fs := failed.Schedule.Faults
	if len(fs) != 1 || fs[0].Kind != KindPreempt || fs[0].Node != "w" || fs[0].Op < 1 || fs[0].Op > 200000 {
		t.Fatalf("schedule %+v, want one preempt fault on w within the first 200000 calls", fs)
	}
	want := fmt.Sprintf("fault preempt: change point at counted call #%d", fs[0].Op)
	if !strings.Contains(output(failed, ""), want) {
		t.Errorf("trace lacks %q:\n%s", want, output(failed, ""))
	}
	without := &faults.Schedule{Seed: failed.Seed, Duration: failed.Schedule.Duration}
	if res := run(t, p, failed.Seed, without); !res.Passed {
		t.Fatalf("replay without the change point failed: %s\n%s", res.Reason, output(res, ""))
	}
	// Another call number preempts elsewhere: still a replay, still exact.
	moved := *failed.Schedule
	moved.Faults = []faults.Fault{fs[0]}
	moved.Faults[0].Op += 7
	a, b := run(t, p, failed.Seed, &moved), run(t, p, failed.Seed, &moved)
	if a.Digest != b.Digest {
		t.Fatal("a moved change point does not replay exactly")
	}
}

// Two CPU-bound goroutines: without preemption the first runs to the end
// before the second starts; preempted, they take turns, the same way each
// time.
func TestPreemptInterleavesGoroutines(t *testing.T) {
	order := func(res *Result) string {
		for _, l := range res.Lines {
			if s, ok := strings.CutPrefix(l.Text, "order "); ok {
				return s
			}
		}
		return ""
	}
	serial := strings.Repeat("A", 20) + strings.Repeat("B", 20)
	for _, tc := range []struct {
		preempt string
		serial  bool
	}{
		{`{"strategy": "none"}`, true},
		{`{"strategy": "calls", "calls": 4096}`, false},
		{`{"strategy": "random"}`, false},
	} {
		p := prepare(t, fmt.Sprintf(`{"nodes": [], "workload": {"name": "w", "pkg": "./racyorder"}, "preempt": %s}`, tc.preempt))
		res := twice(t, p, 1, nil)
		got := order(res)
		if len(got) != 40 || !res.Passed {
			t.Fatalf("%s: order %q, passed %v", tc.preempt, got, res.Passed)
		}
		if (got == serial) != tc.serial {
			t.Errorf("%s: order %s", tc.preempt, got)
		}
		if !tc.serial && strings.Count(got, "AB")+strings.Count(got, "BA") < 10 {
			t.Errorf("%s: goroutines hardly take turns: %s", tc.preempt, got)
		}
	}
}

func TestPreemptRefusesOtherGoReleases(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		content string
		want    string
	}{
		{"\x00asm runtime go1.26.8 data", ""},
		{"\x00asm runtime go1.25.3 data", "w was built with go1.25.3, but preemption knows the runtime of go1.26 only"},
		{"\x00asm no version at all", "w was built with an unknown Go release"},
	} {
		path := filepath.Join(dir, "m.wasm")
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		prog := &Program{Program: &world.Program{Name: "w", Wasm: path}, path: path}
		err := testEngine(t).checkGoVersion(prog, []byte(tc.content))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: err = %v, want %q", tc.content, err, tc.want)
		}
	}
}
