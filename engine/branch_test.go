package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// A branch re-keys only the stream it names: in a world whose outcome
// depends on one stream alone, branching that stream changes what happens
// after the branch and nothing before it, and branching any other stream
// changes nothing at all.
func TestBranchRekeysOnlyItsStream(t *testing.T) {
	worlds := map[string]string{
		// Three processes due at the same instants: the order is sched's.
		"sched": `{"cpu": {"ns_per_call": 0}, "nodes": [{"name": "a", "pkg": "./sleeper", "args": ["-n", "8"]}, {"name": "b", "pkg": "./sleeper", "args": ["-n", "8"]}],
			"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "8"]}}`,
		// Echoes over links with a wide latency range.
		"net": `{"cpu": {"ns_per_call": 0}, "nodes": [{"name": "server", "pkg": "./echoserver"}], "workload": {"name": "client", "pkg": "./echoclient", "args": ["-n", "20"]},
			"net_overlay": true, "latency": ["1ms", "40ms"]}`,
		// fsyncs whose time is drawn.
		"disklatency": `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "w", "pkg": "./progress", "args": ["-n", "10"]},
			"faults": {"disk_latency": ["1ms", "50ms"], "include_workload": true}}`,
		// crypto/rand read after each step.
		"random": `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "w", "pkg": "./progress", "args": ["-n", "10", "-rand"]}}`,
		// A busy loop whose turns take jittered CPU time. (The other
		// worlds run with free CPU, so that each depends on one stream.)
		// (1µs a call: 100,000 calls take 100ms, and the branch is at
		// 50ms; each 100µs of CPU time costs the host a call.)
		"cpu": `{"cpu": {"ns_per_call": 1000}, "nodes": [], "workload": {"name": "w", "pkg": "./cpuwork", "args": ["calls", "-n", "100000"]}}`,
	}
	for _, used := range []string{"sched", "net", "disklatency", "random", "cpu"} {
		at := 500 * ms
		if used == "cpu" {
			at = 50 * ms
		}
		t.Run(used, func(t *testing.T) {
			p := prepare(t, worlds[used])
			base := twice(t, p, 3, &faults.Schedule{Seed: 3})
			if !base.Passed {
				t.Fatalf("%s: %s\n%s", base.Class, base.Reason, output(base, ""))
			}
			for _, stream := range append([]string{""}, faults.BranchStreams...) {
				r := twice(t, p, 3, &faults.Schedule{Seed: 3, Branches: []faults.Branch{{At: at, Key: 77, Stream: stream}}})
				lines := withoutBranch(r.Lines)
				same := slices.Equal(lines, base.Lines)
				if changes := stream == "" || stream == used; changes == same {
					t.Errorf("branching %q: same run %v, want %v\nbase:\n%s\nbranch:\n%s", stream, same, !changes,
						trace.Render(base.Lines, ""), trace.Render(r.Lines, ""))
				}
				if !slices.Equal(before(lines, at), before(base.Lines, at)) {
					t.Errorf("branching %q changed the run before %v", stream, at)
				}
				if !slices.Equal(r.Schedule.Branches, []faults.Branch{{At: at, Key: 77, Stream: stream}}) {
					t.Errorf("the run's schedule lost its branch: %+v", r.Schedule.Branches)
				}
			}
		})
	}
}

// Two branches of the same stream with different keys are different
// futures; the same key is the same future.
func TestBranchKeys(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./progress", "args": ["-n", "10", "-rand"]}}`)
	out := func(key uint64) string {
		r := twice(t, p, 1, &faults.Schedule{Seed: 1, Branches: []faults.Branch{{At: 200 * ms, Key: key}}})
		return output(r, "")
	}
	if a, b := out(1), out(2); a == b {
		t.Errorf("keys 1 and 2 gave the same run:\n%s", a)
	}
	if !strings.Contains(out(1), "0.200000000 world - branch: every stream re-keyed with 1") {
		t.Errorf("the trace does not show the branch:\n%s", out(1))
	}
}

func withoutBranch(lines []trace.Line) []trace.Line {
	return slices.DeleteFunc(slices.Clone(lines), func(l trace.Line) bool {
		return l.Node == "world" && strings.HasPrefix(l.Text, "branch: ")
	})
}

func before(lines []trace.Line, at time.Duration) []trace.Line {
	i := slices.IndexFunc(lines, func(l trace.Line) bool { return l.At >= int64(at) })
	if i < 0 {
		return lines
	}
	return lines[:i]
}
