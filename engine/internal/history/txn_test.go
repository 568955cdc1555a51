package history

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// txn invokes a transaction as sim encodes it: the workload, then the
// micro-operations joined by ";".
func txn(ms int64, client, workload, mops string) step { return inv(ms, client, workload, mops) }

// ok completes transaction op with its reads' results joined by ";".
func ok(ms int64, op int, reads string) step { return ret(ms, op, "ok", reads) }

// writeSkew is two withdrawals from one snapshot, each appending to the
// account the other did not: a G2-item, which snapshot isolation allows.
var writeSkew = []step{
	txn(0, "c#1", ListAppend, "r 1;r 2;append 1 11"),
	txn(1, "c#2", ListAppend, "r 1;r 2;append 2 21"),
	ok(10, 1, ";"),
	ok(11, 2, ";"),
	txn(20, "c#1", ListAppend, "r 1;r 2"), ok(30, 3, "11;21"),
}

// halfApplied is a transaction that appended to two lists, lost in a
// crash, of which a later read sees one: a G-single-item (a fractured
// read). (Elle infers no wr edge from a crashed rw-register write.)
var halfApplied = []step{
	txn(0, "c#1", ListAppend, "append 1 1;append 2 1"),
	txn(10, "c#2", ListAppend, "r 1;r 2"), ok(20, 2, "1;"),
}

func TestCheckTxns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []step
		models  []string
		verdict string
		types   []string
		reason  string
	}{
		{"write skew is not serializable", writeSkew, []string{"serializable"}, NotValid, []string{"G2-item"},
			"the transactions are not serializable: G2-item (1 found); G2-item: T1 (c#1 at 0s-10ms) rw→ T2 (c#2 at 1ms-11ms) rw→ T1"},
		{"write skew is snapshot isolation", writeSkew, []string{"snapshot-isolation"}, Valid, nil, ""},
		{"a half-applied transaction", halfApplied, nil, NotValid, []string{"G-single-item"},
			"the transactions are not strict-serializable: G-single-item (1 found); G-single-item: T1 (c#2 at 10ms-20ms) rw→ T2 (c#1 from 0s, never finished) wr→ T1"},
		{"a failed write read", []step{
			txn(0, "c#1", RWRegister, "w 1 5"), ret(10, 1, "fail"),
			txn(20, "c#2", RWRegister, "r 1;w 2 1"), ok(30, 2, "5"),
			txn(40, "c#2", RWRegister, "r 2"), ok(50, 3, "1"),
		}, nil, NotValid, []string{"G1a"},
			"the transactions are not strict-serializable: G1a (1 found); G1a: the transaction at index 3 (c#2 at 20ms-30ms) read key 1 = 5, written by a transaction that failed (an aborted read): index 1"},
		{"serial transactions", []step{
			txn(0, "c#1", ListAppend, "append 1 1;r 1"), ok(10, 1, "1"),
			txn(20, "c#2", ListAppend, "append 1 2;r 2"), ok(30, 2, ""),
			txn(40, "c#1", ListAppend, "r 1;r 2"), ok(50, 3, "1 2;"),
		}, nil, Valid, nil, ""},
		{"nothing read: nothing inferred", []step{
			txn(0, "c#1", RWRegister, "w 1 1"), ok(10, 1, ""),
		}, nil, Unknown, nil, ""},
		{"the workloads are checked apart", append([]step{
			txn(100, "c#3", RWRegister, "w 1 1"), ok(110, 1, ""),
			txn(120, "c#3", RWRegister, "r 1"), ok(130, 2, "1"),
		}, shift(writeSkew, 2)...), []string{"serializable"}, NotValid, []string{"G2-item"}, "G2-item (1 found)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := build(t, tc.steps).CheckTxns(tc.models, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if out.Verdict != tc.verdict || strings.Join(out.AnomalyTypes, " ") != strings.Join(tc.types, " ") {
				t.Fatalf("verdict %q %v (%s), want %q %v", out.Verdict, out.AnomalyTypes, out.Reason, tc.verdict, tc.types)
			}
			if !strings.Contains(out.Reason, tc.reason) || (tc.reason == "") != (out.Reason == "") {
				t.Errorf("reason\n  %s\nwant it to contain\n  %s", out.Reason, tc.reason)
			}
			if tc.verdict != NotValid {
				return
			}
			if len(out.Anomalies) != len(tc.types) || len(out.Anomalies[0].Explanation) < 2 {
				t.Errorf("anomalies %+v: want each type explained", out.Anomalies)
			}
			again, _ := build(t, tc.steps).CheckTxns(tc.models, 5*time.Second)
			if strings.Join(again.Anomalies[0].Explanation, "\n") != strings.Join(out.Anomalies[0].Explanation, "\n") || again.Reason != out.Reason {
				t.Errorf("a second check explains differently:\n%s\n%s", again.Reason, out.Reason)
			}
		})
	}
}

// shift renumbers the operations a list of steps completes by n, for
// steps that come after n invocations.
func shift(steps []step, n int) []step {
	out := make([]step, len(steps))
	for i, s := range steps {
		if s.in == nil {
			s.op += n
		}
		out[i] = s
	}
	return out
}

func TestTxnExplanation(t *testing.T) {
	out, err := build(t, writeSkew).CheckTxns([]string{"serializable"}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"T1 = c#1 (process 0) at 0s-10ms: r 1 [], r 2 [], append 1 11",
		"T2 = c#2 (process 1) at 1ms-11ms: r 1 [], r 2 [], append 2 21",
		"T1 < T2: T1 read key 2 = [] and did not see T2's append of 21, which came next (rw: 21 is the first element of the longest read of key 2)",
		"T2 < T1: T2 read key 1 = [] and did not see T1's append of 11, which came next (rw: 11 is the first element of the longest read of key 1)",
	}
	if got := out.Anomalies[0].Explanation; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("explanation\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Each transaction runs on the lowest process of its client with nothing
// in flight; a transaction left open keeps its process for good, and
// another client never shares one.
func TestTxnProcesses(t *testing.T) {
	h := build(t, []step{
		txn(0, "c#1", RWRegister, "w 1 1"), // p0
		txn(0, "c#1", RWRegister, "w 1 2"), // p1, left open
		ok(1, 1, ""),
		txn(2, "c#1", RWRegister, "w 1 3"), // p0 again
		txn(3, "c#1", RWRegister, "w 1 4"), // p0 and p1 are busy: p2
		txn(3, "c#2", RWRegister, "r 1"),   // another client: p3
		ok(4, 3, ""), ok(4, 4, ""), ok(4, 5, "4"),
		txn(5, "c#1", RWRegister, "w 1 5"), // p0
		txn(5, "c#1", RWRegister, "w 1 6"), // p2: p1 stays with its open transaction
		txn(6, "c#2", RWRegister, "r 1"),   // p3
	})
	var got []int64
	for _, x := range h.Txns() {
		got = append(got, x.Process)
	}
	if want := []int64{0, 1, 0, 2, 3, 0, 2, 3}; !slicesEqual(got, want) {
		t.Errorf("processes %v, want %v", got, want)
	}
	if n := h.TxnsInFlight("c#1"); n != 3 {
		t.Errorf("c#1 has %d transactions in flight, want 3", n)
	}
	h.Crashed("c#1", 7)
	if n := h.TxnsInFlight("c#1"); n != 0 {
		t.Errorf("after the crash c#1 has %d transactions in flight, want 0", n)
	}
	if n := h.TxnsInFlight("c#2"); n != 1 {
		t.Errorf("c#2 has %d transactions in flight, want 1", n)
	}
	eh, _ := h.elleHistory(RWRegister)
	var infos []int64
	for _, op := range eh.Ops {
		if op.Type.String() == "info" {
			infos = append(infos, op.Process)
		}
	}
	// c#1's three lost at the crash, then c#2's left open at the end.
	if want := []int64{1, 0, 2, 3}; !slicesEqual(infos, want) {
		t.Errorf("infos on processes %v, want %v", infos, want)
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTxnRecordingMistakes(t *testing.T) {
	h := New()
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{ListAppend}, "a list-append transaction without micro-operations"},
		{[]string{ListAppend, "w 1 2"}, `list-append transaction, micro-operation 0: "w 1 2": want "append K V" or "r K"`},
		{[]string{RWRegister, "r 1;append 1 2"}, `rw-register transaction, micro-operation 1: "append 1 2": want "w K V" or "r K"`},
		{[]string{RWRegister, "w x 2"}, `"x" is not an integer`},
		{[]string{ListAppend, "append 1 2;append 1 2"}, "2 is appended to key 1 a second time (first by this transaction)"},
	} {
		if _, err := h.Invoke("c#1", 0, tc.fields); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Invoke(%q) = %v, want an error with %q", tc.fields, err, tc.want)
		}
	}
	id, err := h.Invoke("c#1", 0, []string{RWRegister, "w 1 2;r 1", ""})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Invoke("c#2", 5*int64(time.Millisecond), []string{RWRegister, "w 1 2"}); err == nil ||
		!strings.Contains(err.Error(), "2 is written to key 1 a second time (first by c#1 from 0s, never finished): the check orders a key's values by who wrote them, so each value written to a key must be unique: draw them from a counter") {
		t.Errorf("a value written twice: %v", err)
	}
	if err := h.Return(id, 1, []string{"ok"}); err == nil || !strings.Contains(err.Error(), "returned 0 results for its 1 read") {
		t.Errorf("no result: %v", err)
	}
	if err := h.Return(id, 1, []string{"ok", "x"}); err == nil || !strings.Contains(err.Error(), `returned "x", not an integer or nil`) {
		t.Errorf("a bad result: %v", err)
	}
	if err := h.Return(id, 1, []string{"maybe"}); err == nil || !strings.Contains(err.Error(), `status "maybe"`) {
		t.Errorf("a bad status: %v", err)
	}
	if err := h.Return(id, 1, []string{"ok", "2"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Return(id, 1, []string{"fail"}); err == nil || !strings.Contains(err.Error(), "finished twice") {
		t.Errorf("finished twice: %v", err)
	}
	if !h.IsTxn(id) || h.Len() != 0 || len(h.Txns()) != 1 {
		t.Errorf("IsTxn %v, Len %d, Txns %d: want a transaction and no operation", h.IsTxn(id), h.Len(), len(h.Txns()))
	}
}

// Results cut into several fields join back, as sim packs them.
func TestTxnResultsAcrossFields(t *testing.T) {
	h := New()
	id, err := h.Invoke("c#1", 0, []string{ListAppend, "r 1;r", " 2;append 1 5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Return(id, 1, []string{"ok", "1 2", "3;4"}); err != nil {
		t.Fatal(err)
	}
	if got := h.Txns()[0].text(); got != "r 1 [1 23], r 2 [4], append 1 5" {
		t.Errorf("text %q", got)
	}
}

// A check out of time is unknown, even when it found an anomaly by then.
func TestCheckTxnsOutOfTimeIsUnknown(t *testing.T) {
	out, err := build(t, writeSkew).CheckTxns([]string{"serializable"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != Unknown || out.Reason != "" || out.Anomalies != nil {
		t.Errorf("CheckTxns with no time = %+v, want unknown", out)
	}
}

// A long cycle's summary names its first and last transactions and says
// how long it is; its explanation still has every one.
func TestLongCycleSummary(t *testing.T) {
	const n = 7
	var steps []step
	// T_k appends to key k, then to key k-1 after T_{k-1} did: a write
	// cycle through every transaction, which a read of every key shows.
	for k := 0; k < n; k++ {
		steps = append(steps, txn(int64(k), "c#1", ListAppend, fmt.Sprintf("append %d %d;append %d %d", k, 100+k, (k+n-1)%n, 200+(k+n-1)%n)))
	}
	for k := 0; k < n; k++ {
		steps = append(steps, ok(int64(10+k), k+1, ""))
	}
	var reads, results []string
	for k := 0; k < n; k++ {
		reads = append(reads, fmt.Sprintf("r %d", k))
		results = append(results, fmt.Sprintf("%d %d", 100+k, 200+k))
	}
	steps = append(steps, txn(20, "c#2", ListAppend, strings.Join(reads, ";")), ok(30, n+1, strings.Join(results, ";")))
	out, err := build(t, steps).CheckTxns(nil, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != NotValid || len(out.Anomalies) == 0 || out.Anomalies[0].Type != "G0" {
		t.Fatalf("%+v, want a G0", out)
	}
	a := out.Anomalies[0]
	if !strings.Contains(a.Summary, "T3 (c#1 at ") || !strings.Contains(a.Summary, "ww→ … T7 (c#1 at ") || !strings.HasSuffix(a.Summary, "ww→ T1 (a cycle of 7 transactions)") || strings.Contains(a.Summary, "T4 (") {
		t.Errorf("summary %q", a.Summary)
	}
	if len(a.Explanation) != 2*n {
		t.Errorf("%d lines of explanation, want %d", len(a.Explanation), 2*n)
	}
}
