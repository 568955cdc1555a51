package engine

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// lineAt is the virtual time of the first line of node that contains text.
func lineAt(t *testing.T, r *Result, node, text string) time.Duration {
	t.Helper()
	for _, l := range r.Lines {
		if l.Node == node && strings.Contains(l.Text, text) {
			return time.Duration(l.At)
		}
	}
	t.Fatalf("%s never printed %q:\n%s", node, text, output(r, ""))
	return 0
}

// A busy loop on time.Since ends: the work of each turn moves the node's
// clock. With free CPU the same loop never sees time move, and the
// watchdog stops it.
func TestCPUBusyLoopOnTheClockEnds(t *testing.T) {
	world := func(cpu string) string {
		return `{"watchdog": "2s", ` + cpu + `"nodes": [], "workload": {"name": "w", "pkg": "./cpuwork", "args": ["spin", "-for", "50ms"]}}`
	}
	p := prepare(t, world(""))
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	if at := lineAt(t, r, "w", "spun for 50ms"); at < 50*time.Millisecond || at > 51*time.Millisecond {
		t.Fatalf("the spin ended at %v, want just after 50ms:\n%s", at, output(r, ""))
	}
	free := run(t, prepare(t, world(`"cpu": {"ns_per_call": 0}, `)), 1, nil)
	if free.Passed || free.Class != ClassWatchdog {
		t.Fatalf("with free CPU: %v %s %s, want the watchdog", free.Passed, free.Class, free.Reason)
	}
}

// callsTime is when a node that makes n calls finishes, under the world's
// cpu object and schedule.
func callsTime(t *testing.T, cpu string, n int, seed uint64, sch *faults.Schedule) time.Duration {
	t.Helper()
	p := prepare(t, fmt.Sprintf(`{%s "nodes": [], "workload": {"name": "w", "pkg": "./cpuwork", "args": ["calls", "-n", "%d"]}}`, cpu, n))
	r := twice(t, p, seed, sch)
	if !r.Passed {
		t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	m := regexp.MustCompile(`made \d+ calls in (\S+) `).FindStringSubmatch(output(r, "w"))
	if m == nil {
		t.Fatalf("no timing:\n%s", output(r, "w"))
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Work costs ns_per_call per counted call, within the jitter drawn from the
// seed; a slow node pays its factor; 0 is free.
func TestCPUChargesCountedCalls(t *testing.T) {
	const n = 1_000_000 // a counted call a turn: step's entry
	exact := callsTime(t, `"cpu": {"ns_per_call": 10, "jitter": 0},`, n, 1, nil)
	if exact < n*10*time.Nanosecond || exact > n*10*time.Nanosecond*101/100 {
		t.Fatalf("%d calls at 10ns each took %v, want just over %v", n, exact, n*10*time.Nanosecond)
	}
	var seen []time.Duration
	for seed := uint64(1); seed <= 3; seed++ {
		d := callsTime(t, `"cpu": {"ns_per_call": 10, "jitter": 0.5},`, n, seed, nil)
		if d < exact/2 || d > exact*3/2 {
			t.Fatalf("seed %d: %v with a jitter of 0.5 around %v", seed, d, exact)
		}
		seen = append(seen, d)
	}
	if seen[0] == seen[1] && seen[1] == seen[2] {
		t.Fatalf("three seeds drew the same jitter: %v", seen)
	}
	slow := callsTime(t, `"cpu": {"ns_per_call": 10, "jitter": 0},`, n, 1,
		&faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 0, Kind: KindSlow, Node: "w", Factor: 3, Until: time.Hour}}})
	if ratio := float64(slow) / float64(exact); ratio < 2.9 || ratio > 3.1 {
		t.Fatalf("a 3x slow node took %v against %v (x%.2f)", slow, exact, ratio)
	}
	if free := callsTime(t, `"cpu": {"ns_per_call": 0},`, n, 1, nil); free != 0 {
		t.Fatalf("free CPU took %v", free)
	}
}

// Handlers that compute take time, so requests that arrive while one runs
// pile up and their handlers are in progress together, as on a loaded
// machine. With free CPU each handler is done before the next request
// arrives.
func TestCPUMakesHandlersOverlap(t *testing.T) {
	most := func(cpu string) int {
		p := prepare(t, `{"net_overlay": true, "latency": ["1ms", "1ms"], `+cpu+`
			"nodes": [{"name": "server", "pkg": "./cpuwork", "args": ["server", "-work", "20000"]}],
			"workload": {"name": "client", "pkg": "./cpuwork", "args": ["client", "-n", "8"]}}`)
		r := twice(t, p, 1, nil)
		if !r.Passed {
			t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
		}
		best := 0
		for _, m := range regexp.MustCompile(`most in progress (\d+)`).FindAllStringSubmatch(output(r, "server"), -1) {
			k, _ := strconv.Atoi(m[1])
			best = max(best, k)
		}
		return best
	}
	if k := most(""); k < 2 {
		t.Errorf("with CPU time, at most %d handler in progress at once; want requests to pile up", k)
	}
	if k := most(`"cpu": {"ns_per_call": 0},`); k != 1 {
		t.Errorf("with free CPU, %d handlers in progress at once; want 1", k)
	}
}

// With preempt.loops a loop that makes no calls is counted too: it takes
// virtual time and the world goes on around it, so the watchdog does not
// stop it and the run ends when the workload is done.
func TestPreemptLoopsChargeBusyLoops(t *testing.T) {
	p := prepare(t, `{"watchdog": "1s", "preempt": {"loops": true}, "nodes": [{"name": "s", "pkg": "./spin"}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "3"]}}`)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	if !strings.Contains(output(r, "s"), "spinning") {
		t.Fatalf("the spinner never started:\n%s", output(r, ""))
	}
}

// Under strategy none a goroutine that computes without waiting is still
// preempted at the end of its time slice of 4,194,304 counted calls, so the
// goroutine it starves gets to run: at 1ns a call, after about 4.2ms.
func TestNoneEndsTheTimeSlice(t *testing.T) {
	p := prepare(t, `{"watchdog": "5s", "cpu": {"ns_per_call": 1, "jitter": 0}, "nodes": [], "workload": {"name": "w", "pkg": "./cpuwork", "args": ["hog"]}}`)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	m := regexp.MustCompile(`preempted after (\S+) `).FindStringSubmatch(output(r, "w"))
	if m == nil {
		t.Fatalf("no preemption:\n%s", output(r, ""))
	}
	if d, _ := time.ParseDuration(m[1]); d < 4*time.Millisecond || d > 4300*time.Microsecond {
		t.Fatalf("preempted after %v of 1ns calls, want the end of the 4,194,304-call slice", d)
	}
}
