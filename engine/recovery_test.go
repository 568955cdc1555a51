package engine

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// faultList lists the kinds of a schedule's faults, with their node.
func faultList(s *faults.Schedule) []string {
	var out []string
	for _, f := range s.Faults {
		out = append(out, f.Kind+" "+f.Node)
	}
	return out
}

func wantLines(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("trace lacks %q:\n%s", w, out)
		}
	}
}

// A crashed workload comes back as a fresh process with its name and its
// disk, and the run passes when its last incarnation exits 0.
func TestWorkloadCrashRestartsWithItsDisk(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./progress", "args": ["-n", "6"]},
		"faults": {"include_workload": true}}`)
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 350 * ms, Kind: faults.Crash, Node: "client", Until: 500 * ms},
	}})
	out := output(r, "")
	if !r.Passed || r.Reason != "every workload exited 0" {
		t.Fatalf("%v %s: %s\n%s", r.Passed, r.Class, r.Reason, out)
	}
	wantLines(t, out,
		"client#1 - crash, restart at 500ms",
		"client#2 - start",
		"client#2 | v1 resumes at 3",
		"client#2 | v1 done at 6",
		"client#2 - exit 0")
	if got := faultList(r.Schedule); !slices.Equal(got, []string{"crash client"}) {
		t.Errorf("schedule %v, want the one crash", got)
	}
}

// Which programs crash_per_sec reaches: nodes; workloads only under
// include_workload or their own "faults": true.
func TestCrashesReachWorkloadsOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name, js string
		want     []string // programs with at least one crash over the seeds
	}{
		{"default", `"workloads": [{"name": "a", "pkg": "./progress", "args": ["-n", "20"]}, {"name": "b", "pkg": "./progress", "args": ["-n", "20"]}],
			"faults": {"crash_per_sec": 2}`, []string{"n1"}},
		{"include_workload", `"workloads": [{"name": "a", "pkg": "./progress", "args": ["-n", "20"]}, {"name": "b", "pkg": "./progress", "args": ["-n", "20"]}],
			"faults": {"crash_per_sec": 2, "include_workload": true}`, []string{"a", "b", "n1"}},
		{"one workload opts in", `"workloads": [{"name": "a", "pkg": "./progress", "args": ["-n", "20"], "faults": true}, {"name": "b", "pkg": "./progress", "args": ["-n", "20"]}],
			"faults": {"crash_per_sec": 2}`, []string{"a", "n1"}},
		{"one workload opts out", `"workloads": [{"name": "a", "pkg": "./progress", "args": ["-n", "20"]}, {"name": "b", "pkg": "./progress", "args": ["-n", "20"], "faults": false}],
			"faults": {"crash_per_sec": 2, "include_workload": true}`, []string{"a", "n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, `{"nodes": [{"name": "n1", "pkg": "./sleeper", "args": ["-n", "1000"]}], `+tc.js+`}`)
			var got []string
			for seed := uint64(1); seed <= 3; seed++ {
				r := twice(t, p, seed, nil)
				if !r.Passed {
					t.Fatalf("seed %d: %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
				}
				for _, f := range r.Schedule.Faults {
					if !slices.Contains(got, f.Node) {
						got = append(got, f.Node)
					}
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("crashed %v, want %v", got, tc.want)
			}
		})
	}
}

// Liveness: at duration the faults stop, a pause in force ends, a crashed
// workload restarts at once, and the workloads must then finish within
// "within".
func TestLivenessRecoveryPhase(t *testing.T) {
	sch := func() *faults.Schedule {
		return &faults.Schedule{Seed: 1, Faults: []faults.Fault{
			{At: 250 * ms, Kind: KindPause, Node: "client", Until: 20 * time.Second},
			{At: 600 * ms, Kind: faults.Crash, Node: "other", Until: 30 * time.Second},
		}}
	}
	const js = `{"nodes": [], "workloads": [{"name": "client", "pkg": "./progress", "args": ["-n", "%N"]},
		{"name": "other", "pkg": "./progress", "args": ["-n", "%N"]}],
		"duration": "1s", "liveness": {"within": "500ms"}, "faults": {"include_workload": true}}`

	t.Run("finishes in time", func(t *testing.T) {
		p := prepare(t, strings.ReplaceAll(js, "%N", "6"))
		r := twice(t, p, 1, sch())
		out := output(r, "")
		if !r.Passed {
			t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
		}
		wantLines(t, out,
			"1.000000000 world - faults stop at 1s: the recovery phase begins, the workloads have 500ms to finish",
			"1.000000000 client#1 - pause ends for the recovery phase",
			"1.000000000 other#1 - restart for the recovery phase",
			"1.000000000 other#2 - start",
			"other#2 | v1 resumes at 5",
			"client#1 | v1 done at 6")
		if r.Schedule.Duration != time.Second {
			t.Errorf("schedule duration %v, want the fault period, 1s", r.Schedule.Duration)
		}
		// The report ends every lasting fault's bar at a heal.
		if !slices.Equal(r.Heals, []int64{int64(time.Second)}) {
			t.Errorf("heals %v, want the recovery phase at 1s", r.Heals)
		}
		// A replay of the run's own schedule is the same run.
		again := run(t, p, 1, r.Schedule)
		if again.Digest != r.Digest {
			t.Errorf("replay digest %s, run %s", again.Digest, r.Digest)
		}
	})
	t.Run("too slow", func(t *testing.T) {
		p := prepare(t, strings.ReplaceAll(js, "%N", "12"))
		r := twice(t, p, 1, sch())
		if r.Passed || r.Class != ClassLiveness {
			t.Fatalf("verdict %v %s: %s\n%s", r.Passed, r.Class, r.Reason, output(r, ""))
		}
		want := "client#1, other#2 did not finish within 500ms after faults stopped at 1s"
		if r.Reason != want {
			t.Errorf("reason %q, want %q", r.Reason, want)
		}
		if r.SimNs != int64(1500*ms) {
			t.Errorf("ended at %v, want 1.5s", time.Duration(r.SimNs))
		}
	})
	t.Run("no timed fault after duration", func(t *testing.T) {
		p := prepare(t, strings.ReplaceAll(js, "%N", "6"))
		s := sch()
		s.Faults = append(s.Faults, faults.Fault{At: 1200 * ms, Kind: faults.Crash, Node: "client", Until: 1300 * ms})
		r := run(t, p, 1, s)
		if !r.Passed || slices.Contains(faultList(r.Schedule), "crash client") {
			t.Fatalf("%v %s: %s; faults %v\n%s", r.Passed, r.Class, r.Reason, faultList(r.Schedule), output(r, ""))
		}
	})
}

// sim.QuietFor ends the faults in force and keeps new ones away for its
// span; after it, faults come again.
func TestQuietFor(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "client", "pkg": "./progress", "args": ["-n", "10", "-quiet", "400ms"]},
		"faults": {"include_workload": true}}`)
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 0, Kind: KindSlow, Node: "client", Factor: 5, Until: 10 * time.Second},
		{At: 200 * ms, Kind: KindPause, Node: "client", Until: 2 * time.Second},
		{At: 300 * ms, Kind: faults.Crash, Node: "client", Until: 350 * ms},
		{At: 500 * ms, Kind: KindPause, Node: "client", Until: 700 * ms},
	}})
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	wantLines(t, out,
		"client#1 - quiet for 400ms, until 400ms",
		"client#1 - slowdown ends for a quiet period",
		"0.400000000 world - quiet period ends",
		"0.500000000 client#1 - pause until 700ms")
	if got := faultList(r.Schedule); !slices.Equal(got, []string{"slow client", "pause client"}) {
		t.Errorf("faults that happened: %v, want the slowdown and the pause after the quiet period", got)
	}
	// The quiet period is a heal: every fault in force ended then.
	if len(r.Heals) != 1 || r.Heals[0] != 0 {
		t.Errorf("heals %v, want the quiet period at 0", r.Heals)
	}
	// Ten steps of 100ms, the slowdown ended at once, 200ms of pause.
	if r.SimNs != int64(1200*ms) {
		t.Errorf("finished at %v, want 1.2s", time.Duration(r.SimNs))
	}
}

// A program's upgrade_to runs from its first restart on.
func TestUpgradeToRunsFromTheFirstRestart(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./progress", "args": ["-n", "6"], "upgrade_to": "./progressv2"},
		"faults": {"include_workload": true}}`)
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 250 * ms, Kind: faults.Crash, Node: "client", Until: 300 * ms},
		{At: 450 * ms, Kind: faults.Crash, Node: "client", Until: 500 * ms},
	}})
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	wantLines(t, out,
		"client#1 | v1 resumes at 0",
		"client#2 - start, upgraded to ./progressv2",
		"client#2 | v2 resumes at 2",
		"client#3 | v2 resumes at 3",
		"client#3 | v2 done at 6")
	if strings.Contains(output(r, ""), "client#2 | v1") {
		t.Errorf("the restarted client ran the old program:\n%s", out)
	}
}

// Swarm: each seed keeps or drops every configured fault type and rescales
// the rate of those it keeps; unconfigured types stay off, settings stay.
func TestSwarm(t *testing.T) {
	p := prepare(t, `{"nodes": [{"name": "n1", "pkg": "./sleeper", "args": ["-n", "30"]}, {"name": "n2", "pkg": "./sleeper", "args": ["-n", "30"]}],
		"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "40"]}, "duration": "5s",
		"faults": {"swarm": true, "crash_per_sec": 1, "pause_per_sec": 1, "slow_per_sec": 1, "clock_jump_per_sec": 1, "pause_for": ["10ms", "20ms"]}}`)
	seen := map[string]bool{}
	var lines []string
	for seed := uint64(1); seed <= 12; seed++ {
		r := twice(t, p, seed, nil)
		line := ""
		for _, l := range r.Lines {
			if l.Node == "world" && strings.HasPrefix(l.Text, "swarm: ") {
				line = l.Text
			}
		}
		if line == "" {
			t.Fatalf("seed %d: no swarm line:\n%s", seed, output(r, ""))
		}
		lines = append(lines, line)
		for _, k := range []string{"crash", "pause", "slow", "clock_jump"} {
			on := !strings.Contains(line, k+"_per_sec off")
			n := 0
			for _, f := range r.Schedule.Faults {
				if f.Kind == k {
					n++
					if k == KindPause && f.Until-f.At > 20*ms {
						t.Errorf("seed %d: pause of %v: swarm must leave pause_for alone", seed, f.Until-f.At)
					}
				}
			}
			if !on && n > 0 {
				t.Errorf("seed %d: %s is off (%s) but %d %s faults happened", seed, k, line, n, k)
			}
			seen[k+" "+map[bool]string{true: "on", false: "off"}[on]] = true
		}
		if strings.Contains(line, "clog") || strings.Contains(line, "partition") {
			t.Errorf("seed %d: swarm turned on a type the world does not configure: %s", seed, line)
		}
	}
	if len(seen) != 8 {
		t.Errorf("over 12 seeds every type should be both on and off somewhere; saw %v\n%s", seen, strings.Join(lines, "\n"))
	}
}

// Every fault field is either a fault type swarm toggles or a setting it
// leaves alone, so a new field cannot slip past swarm unnoticed.
func TestSwarmCoversEveryFaultField(t *testing.T) {
	var classified []string
	for _, k := range swarmKnobs {
		classified = append(classified, k.name)
	}
	classified = append(classified, swarmSettings...)
	for _, f := range world.Fields() {
		name, ok := strings.CutPrefix(f, "faults.")
		if ok && !slices.Contains(classified, name) {
			t.Errorf("faults.%s is neither in swarmKnobs nor in swarmSettings", name)
		}
	}
}

// The world at a moment (seedfall debug) is the same every time: each
// program's state, and the writes a crash would lose.
func TestStateAtAMoment(t *testing.T) {
	p := prepare(t, `{"nodes": [{"name": "n", "pkg": "./progress", "args": ["-n", "50"]}],
		"workload": {"name": "w", "pkg": "./progress", "args": ["-n", "50"]}, "faults": {"include_workload": true}}`)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 150 * ms, Kind: faults.Crash, Node: "n", Until: 900 * ms},
		{At: 220 * ms, Kind: KindPause, Node: "w", Until: 700 * ms},
		{At: 230 * ms, Kind: KindSlow, Node: "w", Factor: 2, Until: 800 * ms},
	}}
	at := func() *Result {
		r, err := p.Run(context.Background(), RunOptions{Seed: 1, Schedule: sch, StopAt: 250 * ms, State: true})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := at(), at()
	if a.Digest != b.Digest || !reflect.DeepEqual(a.State, b.State) {
		t.Fatalf("two runs to 250ms differ:\n%+v\n%+v", a.State, b.State)
	}
	st := a.State
	if st.At != 250*ms || len(st.Programs) != 2 {
		t.Fatalf("state %+v", st)
	}
	n, w := st.Programs[0], st.Programs[1]
	if n.What != "down, restarts at 900ms" || n.Inc != 1 {
		t.Errorf("n: %+v, want down until its restart", n)
	}
	if w.What != "paused until 700ms" || w.Slow != 2 {
		t.Errorf("w: %+v, want paused and slowed", w)
	}
	// progress syncs every step: nothing of its count is waiting to be lost.
	for _, f := range w.Pending {
		if f.Path == "count" {
			t.Errorf("w's count is pending (%+v), but progress syncs it", f)
		}
	}
}
