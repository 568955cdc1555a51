package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

func txnWorld(mode, consistency string) string {
	c := ""
	if consistency != "" {
		c = `, "consistency": ` + consistency
	}
	return `{"duration": "10s", "cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "client", "pkg": "./txn", "args": ["-mode", "` + mode + `"]}` + c + `}` // free CPU: the reasons give exact times
}

func TestTxnVerdicts(t *testing.T) {
	for _, tc := range []struct {
		mode, consistency string
		txns              int
		isolation         string
		reason            string // the failure's reason, when it fails
		types             string
	}{
		{"serial", "", 14, "valid", "", ""},
		{"skew", `"serializable"`, 3, "not valid",
			"the transactions are not serializable: G2-item (1 found); G2-item: T1 (client#1 at 0s-10ms) rw→ T2 (client#1 at 0s-10ms) rw→ T1", "G2-item"},
		{"skew", `["snapshot-isolation", "strong-session-read-committed"]`, 3, "valid", "", ""},
		{"aborted-read", "", 3, "not valid",
			"the transactions are not strict-serializable: G1a (1 found); G1a: the transaction at index 3 (client#1 at 10ms-20ms) read key 1 = 5, written by a transaction that failed (an aborted read): index 1", "G1a"},
		{"twice", "", 1, "",
			"client#1 recorded a transaction seedfall cannot check: 7 is appended to key 1 a second time (first by client#1 at 0s): the check orders a key's values by who wrote them, so each value appended to a key must be unique: draw them from a counter", ""},
	} {
		t.Run(tc.mode+tc.consistency, func(t *testing.T) {
			r := twice(t, prepare(t, txnWorld(tc.mode, tc.consistency)), 1, nil)
			if r.Passed != (tc.reason == "") {
				t.Fatalf("passed = %v (%s: %s)\n%s", r.Passed, r.Class, r.Reason, output(r, ""))
			}
			h := r.History
			if h == nil || h.Txns != tc.txns || h.Isolation != tc.isolation || strings.Join(h.AnomalyTypes, " ") != tc.types || h.Ops != 0 || h.Verdict != "" {
				t.Fatalf("history %+v, want %d transactions, %q %s", h, tc.txns, tc.isolation, tc.types)
			}
			if tc.reason == "" {
				return
			}
			if r.Class != ClassIsolation || r.Reason != tc.reason {
				t.Errorf("verdict %s: %s\nwant %s: %s", r.Class, r.Reason, ClassIsolation, tc.reason)
			}
			if tc.isolation != "not valid" {
				return
			}
			if len(h.Anomalies) == 0 || len(h.Anomalies[0].Explanation) < 2 {
				t.Errorf("anomalies %+v, want the first explained", h.Anomalies)
			}
			if !strings.Contains(output(r, ""), "world - the history of "+transactions(tc.txns)+" is not ") {
				t.Errorf("the trace does not say the transactions are not valid:\n%s", output(r, ""))
			}
		})
	}
}

// A client that crashes with a transaction in flight leaves it open: the
// trace says so, Elle takes it as an info, and a later read of half its
// appends is a G-single-item (a fractured read). The seed's verdict and
// digest are the same twice.
func TestTxnCrashedClientLeavesTxnsOpen(t *testing.T) {
	p := prepare(t, txnWorld("half", ""))
	sch := &faults.Schedule{Seed: 1, Duration: 10 * time.Second, Faults: []faults.Fault{
		{At: 100 * time.Millisecond, Kind: faults.Crash, Node: "client", Until: 200 * time.Millisecond},
	}}
	r := twice(t, p, 1, sch)
	out := output(r, "")
	if !strings.Contains(out, "client#1 - client#1 died with 2 transactions in flight, their outcome is unknown") {
		t.Errorf("the trace does not report the transactions in flight:\n%s", out)
	}
	want := "the transactions are not strict-serializable: G-single-item (1 found); G-single-item: T1 (client#2 at 200ms-210ms) rw→ T2 (client#1 from 0s, never finished) wr→ T1"
	if r.Passed || r.Class != ClassIsolation || r.Reason != want {
		t.Fatalf("%v %s: %s\nwant isolation: %s\n%s", r.Passed, r.Class, r.Reason, want, out)
	}
	if h := r.History; h.Txns != 3 || h.Isolation != "not valid" || len(h.Anomalies) != 1 || h.Anomalies[0].Workload != "list-append" {
		t.Errorf("history %+v", h)
	}
}

// A check that runs out of time neither passes nor fails the transactions:
// the run passes, and only Result.History says the verdict is unknown.
func TestTxnCheckOutOfTimeDoesNotFail(t *testing.T) {
	defer func(l time.Duration) { HistoryLimit = l }(HistoryLimit)
	HistoryLimit = 0
	r := twice(t, prepare(t, txnWorld("skew", `"serializable"`)), 1, nil)
	if !r.Passed || r.History == nil || r.History.Isolation != "unknown" || r.History.Anomalies != nil {
		t.Fatalf("passed=%v %s: %s, history %+v; want a pass with isolation unknown", r.Passed, r.Class, r.Reason, r.History)
	}
	if strings.Contains(output(r, ""), "serializable") {
		t.Errorf("the trace mentions the check:\n%s", output(r, ""))
	}
}

// The transactional examples: each bug is found within its limit of seeds
// as the anomaly its README names, the failing seed gives the same verdict,
// reason and digest run twice and replayed from its schedule, and the fixed
// twin passes with its transactions valid.
func TestTxnExamples(t *testing.T) {
	for _, ex := range []struct {
		name    string
		limit   uint64
		anomaly string
	}{{"ledger", 5, "G2-item"}, {"inventory", 10, "G-single-item"}} {
		t.Run(ex.name, func(t *testing.T) {
			buggy := prepareFile(t, "../examples/"+ex.name+"/seedfall.json")
			found := false
			for seed := uint64(1); seed <= ex.limit && !found; seed++ {
				r := twice(t, buggy, seed, nil)
				if r.Passed {
					continue
				}
				found = true
				if r.Class != ClassIsolation || r.History == nil || len(r.History.AnomalyTypes) == 0 || r.History.AnomalyTypes[0] != ex.anomaly {
					t.Fatalf("seed %d failed as %s (%+v): %s\n%s", seed, r.Class, r.History, r.Reason, output(r, ""))
				}
				again := run(t, buggy, seed, r.Schedule)
				if again.Digest != r.Digest || again.Reason != r.Reason {
					t.Fatalf("seed %d: replaying its schedule changed the run:\n%s\n%s", seed, r.Reason, again.Reason)
				}
			}
			if !found {
				t.Fatalf("the bug of %s was not found in %d seeds", ex.name, ex.limit)
			}
			fixed := prepareFile(t, "../examples/"+ex.name+"/seedfall.fixed.json")
			for seed := uint64(1); seed <= passingSeeds(); seed++ {
				r := run(t, fixed, seed, nil)
				if !r.Passed || r.History == nil || r.History.Isolation != "valid" {
					t.Fatalf("fixed %s seed %d: %v %s: %s, history %+v", ex.name, seed, r.Passed, r.Class, r.Reason, r.History)
				}
			}
		})
	}
}
