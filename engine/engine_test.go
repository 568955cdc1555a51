package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

var (
	sharedOnce sync.Once
	sharedEng  *Engine
	sharedErr  error
)

// testEngine is one engine for the package's tests: building and compiling
// guests is the slow part, and the engine caches both.
func testEngine(t testing.TB) *Engine {
	sharedOnce.Do(func() { sharedEng, sharedErr = New(context.Background(), Options{}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedEng
}

// prepare parses a world written against the test guests' module.
func prepare(t testing.TB, js string) *Prepared {
	t.Helper()
	return prepareWith(t, testEngine(t), js)
}

// prepareWith is prepare on engine e.
func prepareWith(t testing.TB, e *Engine, js string) *Prepared {
	t.Helper()
	dir, _ := filepath.Abs("testdata/guests")
	w, err := world.Parse([]byte(js), filepath.Join(dir, "seedfall.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func run(t testing.TB, p *Prepared, seed uint64, sch *faults.Schedule) *Result {
	t.Helper()
	res, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// twice runs a seed two times and insists on the same digest.
func twice(t testing.TB, p *Prepared, seed uint64, sch *faults.Schedule) *Result {
	t.Helper()
	a, b := run(t, p, seed, sch), run(t, p, seed, sch)
	if a.Digest != b.Digest {
		t.Fatalf("seed %d ran twice with different traces:\n%s\n---\n%s", seed, trace.Render(a.Lines, ""), trace.Render(b.Lines, ""))
	}
	return a
}

func output(res *Result, node string) string { return trace.Render(res.Lines, node) }

func TestHelloSeesASeededWorld(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "client", "pkg": "./hello", "args": ["-x"], "env": {"EXTRA": "yes"}}}`)
	r1 := twice(t, p, 1, nil)
	if !r1.Passed || r1.Reason != "every workload exited 0" {
		t.Fatalf("verdict %v %q %q\n%s", r1.Passed, r1.Class, r1.Reason, output(r1, ""))
	}
	out := output(r1, "")
	for _, want := range []string{
		"0.000000000 client#1 - start",
		"| args [client -x]",
		"| env 1 client yes",
		"| wd /",
		"| now 2025-01-01T00:00:00Z",
		"1.500000000 client#1 | slept 1.5s",
		"! to stderr",
		"| no newline at the end",
		"client#1 - exit 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Randomness and map order come from the seed.
	r2 := run(t, p, 2, nil)
	if r2.Digest == r1.Digest {
		t.Fatalf("seeds 1 and 2 gave the same trace:\n%s", out)
	}
	pick := func(r *Result, key string) string {
		for _, l := range r.Lines {
			if strings.HasPrefix(l.Text, key+" ") {
				return l.Text
			}
		}
		return ""
	}
	if pick(r1, "crypto") == pick(r2, "crypto") || pick(r1, "math") == pick(r2, "math") {
		t.Errorf("random draws do not depend on the seed: %q %q", pick(r1, "crypto"), pick(r1, "math"))
	}
	if r1.SimNs != 1_500_000_000 {
		t.Errorf("virtual time at the end = %d, want 1.5s", r1.SimNs)
	}
}

func TestSchedulerInterleavesBySeed(t *testing.T) {
	p := prepare(t, `{"nodes": [{"name": "a", "pkg": "./sleeper"}, {"name": "b", "pkg": "./sleeper"}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "3"]}}`)
	digests := map[string]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		r := twice(t, p, seed, nil)
		if !r.Passed {
			t.Fatalf("seed %d: %s %s\n%s", seed, r.Class, r.Reason, output(r, ""))
		}
		digests[r.Digest] = true
	}
	if len(digests) < 3 {
		t.Fatalf("6 seeds gave %d distinct traces: the seed must decide the interleaving", len(digests))
	}
}

func TestVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, world, class, reason string
		passed                     bool
	}{
		{"workload fails", `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["3"]}}`, ClassWorkload, "c#1 exited with status 3", false},
		{"panic", `{"nodes": [{"name": "s", "pkg": "./panicky"}], "workload": {"name": "c", "pkg": "./sleeper"}}`, ClassPanic, "s#1 panicked (exit status 2)", false},
		{"node exit", `{"nodes": [{"name": "s", "pkg": "./exitcode", "args": ["1"]}], "workload": {"name": "c", "pkg": "./sleeper"}}`, ClassExit, `s#1 exited with status 1 (set "supervise": true`, false},
		{"horizon", `{"duration": "200ms", "nodes": [], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "100"]}}`, "", "hit the time horizon", true},
		{"finally fails", `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]}, "finally": {"name": "f", "pkg": "./exitcode", "args": ["4"]}}`, ClassFinally, "finally check f#1 exited with status 4", false},
		{"finally passes", `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]}, "finally": {"name": "f", "pkg": "./exitcode", "args": ["0"]}}`, "", "workloads and finally check exited 0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, tc.world)
			r := twice(t, p, 1, nil)
			if r.Passed != tc.passed || r.Class != tc.class || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Fatalf("got passed=%v class=%q reason=%q, want %v %q %q\n%s", r.Passed, r.Class, r.Reason, tc.passed, tc.class, tc.reason, output(r, ""))
			}
		})
	}
}

// The watchdog stops a node that never yields: the loop budget that every
// guest carries gives the host control back inside the busy loop.
func TestWatchdog(t *testing.T) {
	p := prepare(t, `{"watchdog": "300ms", "nodes": [{"name": "s", "pkg": "./spin"}], "workload": {"name": "c", "pkg": "./sleeper"}}`)
	if !p.Programs[0].budget {
		t.Fatal("the spin guest carries no loop budget")
	}
	for seed := uint64(1); seed <= 2; seed++ {
		r := run(t, p, seed, nil) // real time decides when, so no digest comparison
		if r.Passed || r.Class != ClassWatchdog || !strings.HasPrefix(r.Reason, "s#1 ran for more than 300ms of real time without yielding") {
			t.Fatalf("got %v %q %q\n%s", r.Passed, r.Class, r.Reason, output(r, ""))
		}
	}
	// The engine is still fine: the stopped guest left nothing behind.
	if r := run(t, prepare(t, `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]}}`), 1, nil); !r.Passed {
		t.Fatalf("after the watchdog: %s %s", r.Class, r.Reason)
	}
}

func TestSupervisedRestart(t *testing.T) {
	p := prepare(t, `{"supervise": true, "duration": "5s", "nodes": [{"name": "s", "pkg": "./exitcode", "args": ["1"]}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "30"]}}`)
	r := twice(t, p, 3, nil)
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	if out := output(r, "s"); !strings.Contains(out, "s#2 - start") || !strings.Contains(out, "supervisor restarts it at") {
		t.Fatalf("no supervised restart:\n%s", out)
	}
}

// A node whose every start exits with an error the same way never
// served: a failing run's verdict names it and quotes its last line, since
// the workload that failed may only have waited for it. A run that passes
// says nothing of it (TestSupervisedRestart).
func TestNeverServedIsNamed(t *testing.T) {
	p := prepare(t, `{"supervise": true, "duration": "5s", "nodes": [{"name": "s", "pkg": "./exitcode", "args": ["1"]}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "30", "-exit", "1"]}}`)
	r := twice(t, p, 3, nil)
	if r.Passed || r.Class != ClassWorkload || r.Node != "c" {
		t.Fatalf("%v %s %s: want the workload's failure", r.Passed, r.Class, r.Node)
	}
	if !strings.Contains(r.Reason, `; s never served: each of its `) || !strings.Contains(r.Reason, ` starts exited with status 1 after "exiting with 1"`) {
		t.Fatalf("the verdict does not name the node that never served: %s", r.Reason)
	}
}

// A node that fails to start the same way again and again, with nothing
// faulted that could change it, stops the run: the verdict is about it,
// not about the workload that would have waited for it until the horizon.
func TestNodeThatNeverServesStopsTheRun(t *testing.T) {
	p := prepare(t, `{"supervise": true, "duration": "60s", "nodes": [{"name": "s", "pkg": "./exitcode", "args": ["1"]}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "500"]}}`)
	r := twice(t, p, 3, nil)
	if r.Passed || r.Class != ClassExit || r.Node != "s" {
		t.Fatalf("%v %s %s: %s\nwant the run to fail at s", r.Passed, r.Class, r.Node, r.Reason)
	}
	want := `s never served: each of its 8 starts exited with status 1 after "exiting with 1", the last 8 with every other program up and no partition or clog in force, so the run stopped there`
	if !strings.HasPrefix(r.Reason, want) {
		t.Fatalf("the verdict:\n%s\nwant it to begin:\n%s", r.Reason, want)
	}
	if r.SimNs > int64(20*time.Second) {
		t.Fatalf("the run went on to %v", time.Duration(r.SimNs))
	}
	// Another node down all along: each start of s may fail for want of
	// it, so s is restarted until the workload's verdict.
	p = prepare(t, `{"supervise": true, "duration": "60s", "nodes": [{"name": "s", "pkg": "./exitcode", "args": ["1"]}, {"name": "d", "pkg": "./sleeper", "args": ["-n", "1000"]}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "300"]}}`)
	down := &faults.Schedule{Seed: 3, Duration: 60 * time.Second, Faults: []faults.Fault{{At: time.Millisecond, Kind: "crash", Node: "d", Until: 59 * time.Second}}}
	r = twice(t, p, 3, down)
	if !r.Passed {
		t.Fatalf("with d down: %s %s: %s\n%s", r.Class, r.Node, r.Reason, output(r, ""))
	}
	if !strings.Contains(output(r, "s"), "s#9 - start") {
		t.Fatalf("s did not start 9 times with d down:\n%s", output(r, "s"))
	}
}

// A crash keeps only what was durable: synced file data, and directory
// entries whose parent was synced (under strict_dirs), or all entries (without).
func TestCrashKeepsDurableState(t *testing.T) {
	crashAt := &faults.Schedule{Seed: 1, Duration: 0, Faults: []faults.Fault{{At: 1_000_000_000, Kind: faults.Crash, Node: "d", Until: 1_500_000_000}}}
	for _, tc := range []struct {
		strict bool
		want   string
	}{
		// b/synced: b's own entry was synced with ".", but b was never synced.
		{true, `found [a/synced="x" synced="s" unsynced=""]`},
		{false, `found [a/synced="x" b/synced="y" c/synced="z" synced="s" unsynced=""]`},
	} {
		js := `{"duration": "3s", "faults": {"strict_dirs": ` + map[bool]string{true: "true", false: "false"}[tc.strict] + `},
			"nodes": [{"name": "d", "pkg": "./durable"}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`
		p := prepare(t, js)
		r := twice(t, p, 1, crashAt)
		out := output(r, "d")
		if !strings.Contains(out, "d#1 | found []") || !strings.Contains(out, "d#2 | "+tc.want) {
			t.Fatalf("strict_dirs=%v: after the crash want %s\n%s", tc.strict, tc.want, out)
		}
		if len(r.Schedule.Faults) != 1 {
			t.Fatalf("schedule = %+v, want the one crash", r.Schedule.Faults)
		}
	}
}

func TestPlannedCrashesReplayExactly(t *testing.T) {
	p := prepare(t, `{"duration": "5s", "faults": {"crash_per_sec": 2, "restart_after": ["10ms", "100ms"]},
		"nodes": [{"name": "a", "pkg": "./sleeper", "args": ["-n", "1000", "-every", "7ms"]}, {"name": "b", "pkg": "./sleeper", "args": ["-n", "1000"]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "40"]}}`)
	r := twice(t, p, 11, nil)
	if len(r.Schedule.Faults) < 2 {
		t.Fatalf("only %d crashes happened; want a few\n%s", len(r.Schedule.Faults), output(r, ""))
	}
	for _, f := range r.Schedule.Faults {
		if int64(f.At) > r.SimNs {
			t.Fatalf("fault at %v recorded after the run ended at %v", f.At, r.SimNs)
		}
	}
	replayed := twice(t, p, 11, r.Schedule)
	if replayed.Digest != r.Digest {
		t.Fatalf("replaying the recorded schedule changed the trace")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := r.Schedule.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := faults.Load(path, faults.CheckConfig{Programs: []string{"a", "b", "c"}, Duration: p.World.Duration})
	if err != nil {
		t.Fatal(err)
	}
	if run(t, p, 11, loaded).Digest != r.Digest {
		t.Fatal("replaying the saved schedule file changed the trace")
	}
	// Without the faults, the same seed runs differently.
	none := run(t, p, 11, &faults.Schedule{Seed: 11})
	if none.Digest == r.Digest {
		t.Fatal("an empty schedule gave the same trace as the crashing one")
	}
	_ = os.Remove(path)
}

func TestTCPOverTheSimulatedNetwork(t *testing.T) {
	p := prepare(t, `{"net_overlay": true, "latency": ["1ms", "5ms"],
		"nodes": [{"name": "server", "pkg": "./echoserver"}],
		"workload": {"name": "client", "pkg": "./echoclient", "args": ["-refused"]}}`)
	r := twice(t, p, 1, nil)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	for _, want := range []string{
		"server#1 | listening on [::]:7000",
		"client#1 | dial closed port: dial tcp 10.0.0.1:7999: connect: Connection refused",
		"client#1 | dial unknown host: true",
		"client#1 | connected 10.0.0.2:",
		"server#1 | accepted 10.0.0.2:",
		"client#1 | deadline ok",
		"client#1 | bulk ok",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}

func TestHTTPOverTheSimulatedNetwork(t *testing.T) {
	p := prepare(t, `{"net_overlay": true,
		"nodes": [{"name": "server", "pkg": "./httpserver"}],
		"workload": {"name": "client", "pkg": "./httpclient"}}`)
	r := twice(t, p, 2, nil)
	out := output(r, "")
	if !r.Passed || !strings.Contains(out, "200 OK 6 from 10.0.0.2:") {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
}

// A crashed server resets its peers' connections, refuses dials while it is
// down, and serves again after its restart.
func TestCrashResetsConnections(t *testing.T) {
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 20_000_000, Kind: faults.Crash, Node: "server", Until: 300_000_000}}}
	p := prepare(t, `{"net_overlay": true, "latency": ["1ms", "2ms"],
		"nodes": [{"name": "server", "pkg": "./httpserver"}],
		"workload": {"name": "client", "pkg": "./httpclient"}}`)
	r := twice(t, p, 1, sch)
	out := output(r, "")
	if !r.Passed || !strings.Contains(out, "server#1 - crash, restart at 300ms") || !strings.Contains(out, "200 OK 1 from") {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	if !strings.Contains(out, "Connection refused") && !strings.Contains(out, "Connection reset") {
		t.Fatalf("the client never noticed the crash:\n%s", out)
	}
}

// A guest rebuilt from empty caches (no seedfall cache, no Go build cache)
// is byte-identical and gives the same trace: digests taken on one machine
// hold on another.
func TestColdRebuildGivesTheSameDigest(t *testing.T) {
	// A cold build of the standard library for wasip1 takes over a minute
	// of the suite's budget in every run; CI runs this test in the slow
	// tier's step of its own (.ci/run, docs/contributing.md).
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("builds the standard library for wasip1 from nothing; run with SEEDFALL_SLOW=1")
	}
	const js = `{"net_overlay": true, "faults": {"crash_per_sec": 1}, "nodes": [{"name": "server", "pkg": "./httpserver"}], "workload": {"name": "client", "pkg": "./httpclient"}}`
	warm := prepare(t, js)
	want := run(t, warm, 5, nil)

	cold, err := New(context.Background(), Options{CacheDir: t.TempDir(), GoEnv: []string{"GOCACHE=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cold.Close(context.Background())
	dir, _ := filepath.Abs("testdata/guests")
	w, err := world.Parse([]byte(js), filepath.Join(dir, "seedfall.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := cold.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	for i, prog := range p.Programs {
		if prog.Cached {
			t.Fatalf("%s came from a cache", prog.Name)
		}
		if prog.Hash != warm.Programs[i].Hash {
			t.Fatalf("%s: cold build %s, warm build %s", prog.Name, prog.Hash, warm.Programs[i].Hash)
		}
	}
	got, err := p.Run(context.Background(), RunOptions{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest != want.Digest {
		t.Fatalf("cold rebuild: digest %s, warm: %s", got.Digest, want.Digest)
	}
}

// links[] overrides the latency of one direction of one link; the first
// matching entry wins.
func TestLinksOverrideLatency(t *testing.T) {
	rtts := func(js string) []time.Duration {
		p := prepare(t, js)
		r := twice(t, p, 3, nil)
		var out []time.Duration
		for _, l := range r.Lines {
			var i int
			var d time.Duration
			var s string
			if n, _ := fmt.Sscanf(l.Text, "echo %d rtt %s", &i, &s); n == 2 {
				d, _ = time.ParseDuration(s)
				out = append(out, d)
			}
		}
		if len(out) != 5 {
			t.Fatalf("want 5 round trips, got %v\n%s", out, output(r, ""))
		}
		return out
	}
	const base = `"net_overlay": true, "latency": ["1ms", "2ms"], "nodes": [{"name": "server", "pkg": "./echoserver"}], "workload": {"name": "client", "pkg": "./echoclient"}`
	for _, d := range rtts(`{` + base + `}`) {
		if d < 2*time.Millisecond || d > 4*time.Millisecond {
			t.Fatalf("round trip %v outside 2-4ms for latency 1-2ms each way", d)
		}
	}
	for _, d := range rtts(`{` + base + `, "links": [{"to": "server", "latency": ["40ms", "40ms"]}, {"to": "server", "latency": ["1s", "1s"]}]}`) {
		if d < 41*time.Millisecond || d > 42*time.Millisecond {
			t.Fatalf("round trip %v: want 40ms to the server plus 1-2ms back", d)
		}
	}
}

// A schedule's duration is the replay's horizon.
func TestReplayHonoursTheScheduleDuration(t *testing.T) {
	p := prepare(t, `{"duration": "10s", "nodes": [], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "200"]}}`)
	full := twice(t, p, 1, nil)
	if full.SimNs != 10e9 || full.Reason != "hit the time horizon" {
		t.Fatalf("full run ended at %v: %s", full.SimNs, full.Reason)
	}
	short := twice(t, p, 1, &faults.Schedule{Seed: 1, Duration: 2 * time.Second})
	if short.SimNs != 2e9 || short.Reason != "hit the time horizon" || short.Schedule.Duration != 2*time.Second {
		t.Fatalf("replay with a 2s schedule ended at %v: %s", short.SimNs, short.Reason)
	}
}

// Worlds running side by side in one engine do not see each other: each
// seed's digest is the one it has when run alone.
func TestConcurrentRunsMatchSequentialOnes(t *testing.T) {
	p := prepareFile(t, "../examples/kvlog/seedfall.json")
	const n = 8
	want := make([]string, n)
	for i := range want {
		want[i] = run(t, p, uint64(i+1), nil).Digest
	}
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Run(context.Background(), RunOptions{Seed: uint64(i + 1)})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = res.Digest
		}()
	}
	wg.Wait()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("seed %d: concurrent digest %s, alone %s", i+1, got[i], want[i])
		}
	}
}

// A cancelled context (Ctrl-C in the REPL) ends a run at once, with an
// error rather than a verdict: a world that would go on for a long while,
// and one whose node spins without yielding.
func TestCancelStopsARun(t *testing.T) {
	for _, js := range []string{
		`{"duration": "1000h", "nodes": [], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "100000000", "-every", "1ms"]}}`,
		`{"duration": "1000h", "nodes": [{"name": "s", "pkg": "./spin"}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "100000000"]}}`,
	} {
		p := prepare(t, js)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		res, err := p.Run(ctx, RunOptions{Seed: 1})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("got %v, %v; want context.Canceled", res, err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("the run took %v to stop", el)
		}
		// The engine is still fine afterwards.
		if r := run(t, prepare(t, `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]}}`), 1, nil); !r.Passed {
			t.Fatalf("after a cancel: %s %s", r.Class, r.Reason)
		}
	}
}

// StatesAt shows, in one run, the world at each moment as a run stopped
// there shows it (seedfall debug -at), the moment of a crash included.
func TestStatesAtAreStopAtStates(t *testing.T) {
	p := prepareFile(t, "../examples/kvlog/seedfall.json")
	first, err := p.Run(context.Background(), RunOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	crash := first.Schedule.Faults[0].At
	moments := []time.Duration{first.Schedule.Faults[1].At, crash - 1, crash, crash + 1, time.Duration(first.SimNs) / 2}
	res, err := p.Run(context.Background(), RunOptions{Seed: 1, StatesAt: moments})
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != first.Digest {
		t.Errorf("looking changed the run")
	}
	slices.Sort(moments)
	if len(res.States) != len(moments) {
		t.Fatalf("%d states for %d moments", len(res.States), len(moments))
	}
	for i, at := range moments {
		alone, err := p.Run(context.Background(), RunOptions{Seed: 1, StopAt: at, State: true})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := json.Marshal(res.States[i])
		b, _ := json.Marshal(alone.State)
		if string(a) != string(b) {
			t.Errorf("at %v, in one run:\n%s\nstopped there:\n%s", at, a, b)
		}
	}
	// A moment past the end shows nothing.
	res, err = p.Run(context.Background(), RunOptions{Seed: 1, StatesAt: []time.Duration{crash, time.Duration(first.SimNs) + time.Second}})
	if err != nil || len(res.States) != 1 {
		t.Fatalf("%v, %d states; want the one the run reached", err, len(res.States))
	}
}

// A world the engine prepared lately, prepared again from the same file
// with the same content, is the same Prepared, so that the recordings of
// its runs serve the next call (seedfall mcp opens its world each call);
// another content, or another -set of the same file, is another.
func TestPrepareKeepsTheWorld(t *testing.T) {
	const js = `{"nodes": [], "workload": {"name": "client", "pkg": "./progress", "args": ["-n", "2"]}}`
	e := testEngine(t)
	a, b := prepareWith(t, e, js), prepareWith(t, e, js)
	if a != b {
		t.Errorf("the same world prepared twice gave two Prepared")
	}
	// The kept world runs a seed as a world prepared afresh does.
	fresh, err := New(context.Background(), Options{CacheDir: e.opts.CacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close(context.Background())
	if x, y := twice(t, b, 1, nil), twice(t, prepareWith(t, fresh, js), 1, nil); x.Digest != y.Digest {
		t.Errorf("the kept world's run %s, a fresh one's %s", x.Digest, y.Digest)
	}
	if c := prepareWith(t, e, strings.Replace(js, `"2"`, `"3"`, 1)); c == a {
		t.Errorf("another world gave the first one's Prepared")
	}
	dir, _ := filepath.Abs("testdata/guests")
	w, err := world.ParseWith([]byte(js), filepath.Join(dir, "seedfall.json"), dir, world.Options{Set: []string{"duration=20s"}})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := e.Prepare(context.Background(), w); err != nil || d == a {
		t.Errorf("the world with -set gave %v, %v: want another Prepared", d == a, err)
	}
}

// A sweep hands its runs over in seed order, each the run of its seed
// alone, at any parallelism; a run it stops is no result, and no seed
// starts after each says stop.
func TestSweepDeterministic(t *testing.T) {
	p := prepare(t, `{"nodes": [{"name": "s", "pkg": "./sleeper"}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "3"]},
		"faults": {"crash_per_sec": 5, "restart_after": ["1ms", "20ms"]}}`)
	seeds := func(yield func(uint64) bool) {
		for s := uint64(1); s <= 6; s++ {
			if !yield(s) {
				return
			}
		}
	}
	var first []string
	for _, parallel := range []int{1, 3, 3} {
		var got []string
		ran, err := p.Sweep(context.Background(), seeds, parallel, nil, func(res *Result) bool {
			got = append(got, fmt.Sprintf("%d %s", res.Seed, res.Digest))
			return true
		})
		if err != nil || ran != 6 {
			t.Fatalf("parallel %d: %d ran, %v", parallel, ran, err)
		}
		if first == nil {
			first = got
			for i, line := range got {
				if want := fmt.Sprintf("%d %s", i+1, run(t, p, uint64(i+1), nil).Digest); line != want {
					t.Errorf("sweep gave %s, the seed alone %s", line, want)
				}
			}
		} else if !slices.Equal(got, first) {
			t.Errorf("parallel %d: %v, parallel 1: %v", parallel, got, first)
		}
	}
	ran, _ := p.Sweep(context.Background(), seeds, 2, nil, func(res *Result) bool { return res.Seed < 3 })
	if ran != 3 {
		t.Errorf("each said stop at seed 3: %d ran to a result", ran)
	}
}
