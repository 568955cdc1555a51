package engine

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
)

// buggifyWorld runs the buggy guest as a node and as the workload.
func buggifyWorld(faultsJSON, nodeExtra string) string {
	return `{"duration": "5s", "faults": ` + faultsJSON + `,
		"nodes": [{"name": "n", "pkg": "./buggy", "args": ["-n", "100"]` + nodeExtra + `}],
		"workload": {"name": "w", "pkg": "./buggy", "args": ["-n", "100"]}}`
}

func buggifyFaults(r *Result) []faults.Fault {
	var out []faults.Fault
	for _, f := range r.Schedule.Faults {
		if f.Kind == KindBuggify {
			out = append(out, f)
		}
	}
	return out
}

func TestBuggifySitesEnabledInAQuarterOfRuns(t *testing.T) {
	p := prepare(t, buggifyWorld(`{"buggify": true}`, ""))
	const seeds = 40
	enabled := map[string]int{} // site -> runs in which it fired
	for seed := uint64(1); seed <= seeds; seed++ {
		r := run(t, p, seed, nil)
		if !r.Passed {
			t.Fatalf("seed %d failed: %s\n%s", seed, r.Reason, output(r, ""))
		}
		seen := map[string]bool{}
		for _, f := range buggifyFaults(r) {
			if f.Op < 1 || f.Site == "" || (f.Node != "n" && f.Node != "w") || f.Until != 0 {
				t.Fatalf("seed %d: malformed buggify fault %+v", seed, f)
			}
			seen[f.Site] = true
		}
		for s := range seen {
			enabled[s]++
		}
	}
	if len(enabled) != 2 {
		t.Fatalf("sites that fired over %d seeds: %v, want the guest's two", seeds, enabled)
	}
	t.Logf("runs in which each site fired: %v", enabled)
	for site, n := range enabled {
		if !strings.HasPrefix(site, "guests/buggy/main.go:") {
			t.Errorf("site %q is not named by the guest's file:line", site)
		}
		// A quarter of 40 is 10; an enabled site fires within 100 hits
		// (site a at 5% misses them all 0.6% of the time).
		if n < 4 || n > 18 {
			t.Errorf("site %s fired in %d of %d runs, want about a quarter", site, n, seeds)
		}
	}
}

func TestBuggifyReplaysExactly(t *testing.T) {
	p := prepare(t, buggifyWorld(`{"buggify": true, "crash_per_sec": 1}`, ""))
	for seed := uint64(1); seed <= 20; seed++ {
		r := twice(t, p, seed, nil)
		if len(buggifyFaults(r)) == 0 {
			continue
		}
		replayed := twice(t, p, seed, r.Schedule)
		if replayed.Digest != r.Digest {
			t.Fatalf("seed %d: replaying the schedule changed the trace", seed)
		}
		// Without its buggify faults the same seed runs differently: a
		// replay draws none of its own.
		var rest faults.Schedule = *r.Schedule
		rest.Faults = nil
		for _, f := range r.Schedule.Faults {
			if f.Kind != KindBuggify {
				rest.Faults = append(rest.Faults, f)
			}
		}
		if run(t, p, seed, &rest).Digest == r.Digest {
			t.Fatalf("seed %d: dropping the buggify faults left the trace unchanged", seed)
		}
		return
	}
	t.Fatal("no seed in 1..20 fired a buggify site")
}

func TestBuggifyFiresInNodeWithoutFaults(t *testing.T) {
	p := prepare(t, buggifyWorld(`{"buggify": true, "crash_per_sec": 5}`, `, "faults": false`))
	for seed := uint64(1); seed <= 20; seed++ {
		r := run(t, p, seed, nil)
		for _, f := range r.Schedule.Faults {
			if f.Node == "n" && f.Kind != KindBuggify {
				t.Fatalf("seed %d: node with \"faults\": false got %+v", seed, f)
			}
		}
		for _, f := range buggifyFaults(r) {
			if f.Node == "n" {
				return
			}
		}
	}
	t.Fatal("node n never fired a buggify site in seeds 1..20")
}

func TestBuggifyOffNeverFires(t *testing.T) {
	p := prepare(t, buggifyWorld(`{"crash_per_sec": 1}`, ""))
	for seed := uint64(1); seed <= 10; seed++ {
		r := run(t, p, seed, nil)
		if fs := buggifyFaults(r); len(fs) > 0 || strings.Contains(output(r, ""), "fired at") {
			t.Fatalf("seed %d: buggify off, yet %v\n%s", seed, fs, output(r, ""))
		}
	}
}

// A crash planned before the first sim.SetupComplete does not fire; one
// planned after it does.
func TestFaultsAfterSetupHoldsEarlyCrash(t *testing.T) {
	const js = `{"duration": "5s", "faults_after_setup": true,
		"nodes": [{"name": "n", "pkg": "./buggy", "args": ["-n", "300", "-setup", "100ms"]}],
		"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "40"]}}`
	p := prepare(t, js)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 50_000_000, Kind: faults.Crash, Node: "n", Until: 60_000_000},
		{At: 150_000_000, Kind: faults.Crash, Node: "n", Until: 160_000_000},
	}}
	r := twice(t, p, 1, sch)
	if len(r.Schedule.Faults) != 1 || r.Schedule.Faults[0].At != 150_000_000 {
		t.Fatalf("faults that happened: %+v, want only the crash after setup\n%s", r.Schedule.Faults, output(r, "n"))
	}
	out := output(r, "n")
	if !strings.Contains(out, "setup complete") || !strings.Contains(out, "faults start") {
		t.Fatalf("trace lacks the setup:\n%s", out)
	}
	// Without faults_after_setup both crashes happen.
	p2 := prepare(t, strings.Replace(js, `"faults_after_setup": true,`, "", 1))
	if r2 := run(t, p2, 1, sch); len(r2.Schedule.Faults) != 2 {
		t.Fatalf("without faults_after_setup, faults that happened: %+v, want both", r2.Schedule.Faults)
	}
}

// Drawn faults wait for setup too: with a high crash rate, none is
// recorded before the node calls sim.SetupComplete.
func TestFaultsAfterSetupHoldsDrawnFaults(t *testing.T) {
	p := prepare(t, `{"duration": "2s", "faults_after_setup": true, "faults": {"crash_per_sec": 5, "buggify": true},
		"nodes": [{"name": "n", "pkg": "./buggy", "args": ["-n", "300", "-setup", "500ms"]}],
		"workload": {"name": "w", "pkg": "./buggy", "args": ["-n", "1500"]}}`)
	later := 0
	for seed := uint64(1); seed <= 5; seed++ {
		r := run(t, p, seed, nil)
		for _, f := range r.Schedule.Faults {
			if f.At < 500_000_000 {
				t.Fatalf("seed %d: fault %+v before setup completed", seed, f)
			}
			later++
		}
	}
	if later == 0 {
		t.Fatal("no fault at all after setup in seeds 1..5")
	}
}

// A clock skew is the machine's clock from the start: faults_after_setup
// holds it until setup completes, then it takes effect, and the replay of
// the run's schedule does the same.
func TestFaultsAfterSetupAppliesClockSkewAtSetup(t *testing.T) {
	p := prepare(t, `{"duration": "2s", "faults_after_setup": true, "cpu": {"ns_per_call": 0}, "faults": {"clock_skew": "1s"},
		"nodes": [{"name": "n", "pkg": "./buggy", "args": ["-n", "10", "-setup", "100ms"]}],
		"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "5"]}}`)
	r := twice(t, p, 1, nil)
	var skews []faults.Fault
	for _, f := range r.Schedule.Faults {
		if f.Kind == KindClockSkew {
			skews = append(skews, f)
		}
	}
	if len(skews) != 1 || skews[0].Node != "n" || skews[0].At != 100_000_000 {
		t.Fatalf("clock skews: %+v, want n's, taking effect at setup (100ms)\n%s", skews, output(r, ""))
	}
	if !strings.Contains(output(r, "n"), "0.100000000 n#1 - wall clock skewed by") {
		t.Errorf("trace lacks the skew at setup:\n%s", output(r, "n"))
	}
	if again := run(t, p, 1, r.Schedule); again.Digest != r.Digest {
		t.Errorf("replay of the schedule differs:\n%s\n---\n%s", output(r, ""), output(again, ""))
	}
}
