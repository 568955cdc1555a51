package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

func historyWorld(mode string) string {
	return `{"duration": "10s", "cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "client", "pkg": "./history", "args": ["-mode", "` + mode + `"]}}` // free CPU: the reasons give exact times
}

func TestHistoryVerdicts(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		passed  bool
		ops     int
		verdict string
		reason  string
	}{
		{"linearizable", true, 4, "linearizable", ""},
		{"stale", false, 3, "not linearizable",
			`key "k": get returned "v1" after put "v2" completed (put by client#1 at 10ms-20ms, get by client#1 at 20ms-30ms; "v1" was written by client#1 at 0s-10ms)`},
		{"counter", false, 2, "not linearizable",
			`counter: no order of its 2 operations explains every answer: the longest that does ends after add 2 (client#1 at 0s) with the value 2, and read returned 3 (client#1 at 10ms-20ms) does not fit`},
		{"bad-output", false, 1, "",
			`client#1 recorded an outcome seedfall cannot check: client#1 read of counter returned "five": a counter's read returns a decimal number`},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			p := prepare(t, historyWorld(tc.mode))
			r := twice(t, p, 1, nil)
			if r.Passed != tc.passed {
				t.Fatalf("passed = %v (%s: %s), want %v\n%s", r.Passed, r.Class, r.Reason, tc.passed, output(r, ""))
			}
			if r.History == nil || r.History.Ops != tc.ops || r.History.Verdict != tc.verdict {
				t.Fatalf("history %+v, want %d ops, verdict %q", r.History, tc.ops, tc.verdict)
			}
			if tc.passed {
				return
			}
			if r.Class != ClassLinearizability || r.Reason != tc.reason {
				t.Errorf("verdict %s: %s\nwant %s: %s", r.Class, r.Reason, ClassLinearizability, tc.reason)
			}
			if tc.verdict == "not linearizable" {
				if len(r.History.HTML) == 0 {
					t.Errorf("no visualization of the failing history")
				}
				if !strings.Contains(output(r, ""), "world - the history of ") {
					t.Errorf("the trace does not say the history is not linearizable:\n%s", output(r, ""))
				}
			}
		})
	}
}

// A workload that crashes with operations in flight leaves them open: the
// trace says how many, and the check lets them take effect any time after
// they started.
func TestHistoryCrashedWorkloadLeavesOpsOpen(t *testing.T) {
	p := prepare(t, historyWorld("inflight"))
	sch := &faults.Schedule{Seed: 1, Duration: 10 * time.Second, Faults: []faults.Fault{
		{At: 100 * time.Millisecond, Kind: faults.Crash, Node: "client", Until: 200 * time.Millisecond},
	}}
	r := twice(t, p, 1, sch)
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	out := output(r, "")
	if !strings.Contains(out, "client#1 - client#1 died with 3 operations in flight, their outcome is unknown") {
		t.Errorf("the trace does not report the operations in flight:\n%s", out)
	}
	if r.History == nil || r.History.Ops != 4 || r.History.Verdict != "linearizable" {
		t.Errorf("history %+v, want 4 ops, linearizable", r.History)
	}
}

// A world that records nothing has no history in its result.
func TestNoHistoryWithoutOperations(t *testing.T) {
	r := run(t, prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./tiny"}}`), 1, nil)
	if r.History != nil {
		t.Errorf("History = %+v, want nil", r.History)
	}
}

// A check that runs out of time neither passes nor fails the history: the
// run passes, and only Result.History says the verdict is unknown.
func TestHistoryCheckOutOfTimeDoesNotFail(t *testing.T) {
	defer func(l time.Duration) { HistoryLimit = l }(HistoryLimit)
	HistoryLimit = 0
	r := twice(t, prepare(t, historyWorld("stale")), 1, nil)
	if !r.Passed || r.History == nil || r.History.Verdict != "unknown" {
		t.Fatalf("passed=%v %s: %s, history %+v; want a pass with verdict unknown", r.Passed, r.Class, r.Reason, r.History)
	}
	if strings.Contains(output(r, ""), "linearizable") {
		t.Errorf("the trace mentions the check:\n%s", output(r, ""))
	}
}
