package engine

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// connraceWorld is a deposit server whose per-connection handlers race on
// the balance (a depth-2 race: one preemption inside a handler's window
// while another handler is ready), and a client that deposits over 8
// connections at once. The nodes share a rack (100-200µs a chunk), so
// requests arrive close enough together for handlers to be ready at the
// same time; CPU takes its default time.
func connraceWorld(server, preempt string) string {
	return fmt.Sprintf(`{"net_overlay": true, "latency": ["100us", "200us"],
		"nodes": [{"name": "server", "pkg": "./connrace", "args": %s}],
		"workload": {"name": "client", "pkg": "./connrace", "args": ["client"]},
		"preempt": %s}`, server, preempt)
}

// pctLine is the trace's pct line, which must be its last.
func pctLine(t *testing.T, res *Result) string {
	t.Helper()
	if len(res.Lines) == 0 {
		t.Fatal("empty trace")
	}
	last := res.Lines[len(res.Lines)-1]
	if last.Node != "world" || !strings.HasPrefix(last.Text, "pct: ") {
		t.Fatalf("the trace does not end with the pct line:\n%s", output(res, ""))
	}
	return last.Text
}

// pct with its defaults (depth 3, steps "auto") finds the handler race
// within 100 seeds; the failing seed replays from its schedule, and the
// fixed server passes that seed and that schedule.
func TestPCTDefaultsFindAConnectionRace(t *testing.T) {
	p := prepare(t, connraceWorld(`["server"]`, `{"strategy": "pct"}`))
	var failed *Result
	for seed := uint64(1); seed <= 100 && failed == nil; seed++ {
		if res := run(t, p, seed, nil); !res.Passed {
			failed = res
		}
	}
	if failed == nil {
		t.Fatal("pct's defaults lost no deposit in seeds 1-100")
	}
	t.Logf("found at seed %d", failed.Seed)
	if failed.Class != ClassWorkload || !strings.Contains(output(failed, "client"), "lost deposits") {
		t.Fatalf("seed %d: class %q, want workload and lost deposits:\n%s", failed.Seed, failed.Class, output(failed, ""))
	}
	if fs := failed.Schedule.Faults; len(fs) == 0 || fs[0].Kind != KindPreempt {
		t.Fatalf("schedule %+v, want preempt faults", fs)
	}
	line := pctLine(t, failed)
	if !regexp.MustCompile(`^pct: server \d+ calls, client \d+ calls; change points are drawn over each node's calls in the calibration run \(seed 1, strategy none\): server \d+, client \d+$`).MatchString(line) {
		t.Errorf("pct line %q", line)
	}
	if again := twice(t, p, failed.Seed, nil); again.Digest != failed.Digest {
		t.Fatalf("seed %d ran again with another trace", failed.Seed)
	}
	replay := twice(t, p, failed.Seed, failed.Schedule)
	if replay.Digest != failed.Digest {
		t.Fatalf("the replay of seed %d differs:\n%s\n---\n%s", failed.Seed, output(failed, ""), output(replay, ""))
	}

	fixed := prepare(t, connraceWorld(`["server", "-locked"]`, `{"strategy": "pct"}`))
	for _, sch := range []*struct {
		name string
		res  *Result
	}{
		{"seed", twice(t, fixed, failed.Seed, nil)},
		{"schedule", twice(t, fixed, failed.Seed, failed.Schedule)},
	} {
		if !sch.res.Passed {
			t.Errorf("the locked server failed seed %d's %s: %s\n%s", failed.Seed, sch.name, sch.res.Reason, output(sch.res, ""))
		}
	}
}

// Drawn over the calls each node makes, nearly every change point fires;
// drawn over the spec's 1,048,576 calls, most fall after the run ends. A
// change point that fires names a call the node made.
func TestPCTChangePointsFallInsideTheRun(t *testing.T) {
	const seeds = 8
	fired := func(steps string) (n int) {
		p := prepare(t, connraceWorld(`["server", "-locked"]`, `{"strategy": "pct"`+steps+`}`))
		for seed := uint64(1); seed <= seeds; seed++ {
			res := run(t, p, seed, nil)
			if !res.Passed {
				t.Fatalf("the locked server failed seed %d: %s\n%s", seed, res.Reason, output(res, ""))
			}
			calls := map[string]uint64{}
			for _, m := range regexp.MustCompile(`(\w+) (\d+) calls`).FindAllStringSubmatch(pctLine(t, res), -1) {
				calls[m[1]], _ = strconv.ParseUint(m[2], 10, 64)
			}
			for _, f := range res.Schedule.Faults {
				if f.Kind != KindPreempt {
					continue
				}
				if f.Op < 1 || f.Op > calls[f.Node] {
					t.Errorf("seed %d: change point %d on %s, which made %d calls", seed, f.Op, f.Node, calls[f.Node])
				}
				n++
			}
		}
		return n
	}
	const drawn = seeds * 2 * 2 // depth 3: 2 change points on each of 2 nodes
	auto, spec := fired(""), fired(`, "steps": 1048576`)
	t.Logf("change points that fired: %d of %d with steps auto, %d with steps 1048576", auto, drawn, spec)
	if auto < drawn*9/10 {
		t.Errorf("%d of %d change points fired with steps auto, want nearly all", auto, drawn)
	}
	if spec > drawn/3 {
		t.Errorf("%d of %d change points fired with steps 1048576: do the nodes make that many calls now?", spec, drawn)
	}
}

// The pct line gives each node's calls and what the change points are drawn
// over: the calibration run's calls (the very count a run without change
// points makes), preempt.steps when set, and for a node that never started
// in the calibration run the most calls of any node.
func TestPCTLine(t *testing.T) {
	hello := `{"nodes": [], "workload": {"name": "w", "pkg": "./hello"}, "preempt": %s}`
	calls := func(line string) string {
		m := regexp.MustCompile(`^pct: w (\d+) calls[;,]`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("pct line %q", line)
		}
		return m[1]
	}
	plain := pctLine(t, twice(t, prepare(t, fmt.Sprintf(hello, `{"strategy": "pct", "depth": 1}`)), 1, nil))
	n := calls(plain)
	if want := "pct: w " + n + " calls; depth 1: no change points"; plain != want {
		t.Errorf("depth 1: %q, want %q", plain, want)
	}
	auto := pctLine(t, twice(t, prepare(t, fmt.Sprintf(hello, `{"strategy": "pct"}`)), 1, nil))
	if want := "; change points are drawn over each node's calls in the calibration run (seed 1, strategy none): w " + n; !strings.HasSuffix(auto, want) {
		t.Errorf("auto: %q, want it to end %q: the calibration counts the calls a run makes", auto, want)
	}
	set := pctLine(t, twice(t, prepare(t, fmt.Sprintf(hello, `{"strategy": "pct", "steps": 200000}`)), 1, nil))
	if !strings.HasSuffix(set, " calls; change points are drawn over each node's first 200000 calls (preempt.steps)") {
		t.Errorf("steps 200000: %q", set)
	}
	// Calls are counted over a node's incarnations: a node that exits 1 and
	// is restarted k times made about k times the calls of one run.
	one, _ := strconv.Atoi(calls(pctLine(t, run(t, prepare(t, fmt.Sprintf(`{"nodes": [], "workload": {"name": "w", "pkg": "./exitcode", "args": ["0"]}, "preempt": %s}`,
		`{"strategy": "pct", "depth": 1}`)), 1, nil))))
	res := run(t, prepare(t, `{"supervise": true, "duration": "1s", "faults": {"restart_after": ["10ms", "10ms"]},
		"nodes": [{"name": "w", "pkg": "./exitcode", "args": ["1"]}], "workload": {"name": "s", "pkg": "./sleeper"},
		"preempt": {"strategy": "pct", "depth": 1}}`), 1, nil)
	all, _ := strconv.Atoi(calls(pctLine(t, res)))
	if k := strings.Count(output(res, "w"), "- start"); k < 3 || all < (k-1)*one || all > k*one*11/10 {
		t.Errorf("%d starts made %d calls, one run %d", k, all, one)
	}
	// Seed 1 fails, so the finally check never starts in the calibration.
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./exitcode", "args": ["3"]},
		"finally": {"name": "f", "pkg": "./hello"}, "preempt": {"strategy": "pct"}}`)
	line := pctLine(t, twice(t, p, 2, nil))
	m := regexp.MustCompile(`; change points are drawn over each node's calls in the calibration run \(seed 1, strategy none\): w (\d+), f (\d+) \(it made no call there: the most of any node\)$`).FindStringSubmatch(line)
	if m == nil || m[1] != m[2] {
		t.Errorf("fallback: %q", line)
	}
}

// Seeds that run in parallel share one calibration, and no seed's trace
// depends on which of them ran it; a calibration stopped by its context
// is not kept.
func TestPCTCalibrationOnceAndOrderFree(t *testing.T) {
	world := connraceWorld(`["server"]`, `{"strategy": "pct"}`)
	p := prepare(t, world)
	if _, err := p.Run(canceled(), RunOptions{Seed: 3}); err == nil || !strings.Contains(err.Error(), "pct's calibration run (seed 1 under strategy none") {
		t.Fatalf("cancelled calibration: err = %v", err)
	}
	parallel := make([]string, 4)
	var wg sync.WaitGroup
	for i := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := p.Run(context.Background(), RunOptions{Seed: uint64(4 - i)})
			if err != nil {
				t.Error(err)
				return
			}
			parallel[i] = res.Digest
		}()
	}
	wg.Wait()
	q := prepare(t, world)
	for i := range parallel {
		if d := run(t, q, uint64(4-i), nil).Digest; d != parallel[i] {
			t.Errorf("seed %d: another trace when its seeds ran in parallel", 4-i)
		}
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
