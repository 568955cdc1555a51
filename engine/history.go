package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/internal/history"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// HistoryLimit is the real time the linearizability check of one run may
// take (a quarter of the watchdog at most), explaining a failure as much
// again, and the check of its transactions as much again. A check that runs
// out of it is "unknown": the run passes as if the history were
// linearizable (or the transactions valid), and nothing in its trace or
// digest says otherwise, because whether it runs out depends on the host.
var HistoryLimit = 5 * time.Second

// HistorySummary is what a run's recorded operations and transactions
// came to.
type HistorySummary struct {
	Ops int `json:"ops"`
	// Verdict is "linearizable", "not linearizable", "unknown" (the check
	// ran out of time) or "" (not checked: the run failed first, or no
	// operation was recorded).
	Verdict string `json:"verdict,omitempty"`
	// Object is what the operations that are not linearizable act on:
	// `key "k3"`, `counter`.
	Object string `json:"object,omitempty"`
	// HTML is porcupine's visualization of a history that is not
	// linearizable.
	HTML []byte `json:"-"`

	// Txns is how many transactions sim.Txn recorded, and Isolation what
	// checking them for the Consistency models found: "valid", "not
	// valid", "unknown" (the check ran out of time, could infer nothing,
	// or its search for cycles stopped at its budget), or "" (not
	// checked: the run failed first).
	Txns        int      `json:"txns,omitempty"`
	Isolation   string   `json:"isolation,omitempty"`
	Consistency []string `json:"consistency,omitempty"`
	// AnomalyTypes are the types of the anomalies found, in Elle's names
	// ("G2-item", "G-single-item", "G1a", ...), and Anomalies the first
	// of each, explained.
	AnomalyTypes []string     `json:"anomaly_types,omitempty"`
	Anomalies    []TxnAnomaly `json:"anomalies,omitempty"`
}

// TxnAnomaly is an anomaly the transactions show, in terms of the clients
// that ran them.
type TxnAnomaly struct {
	Type     string `json:"type"`
	Workload string `json:"workload"` // "list-append" or "rw-register"
	// Summary is the anomaly in a line: a cycle's transactions and the
	// dependencies between them, "T1 (client#1 at 1.2s-1.21s) rw→ T2
	// (client#2 at ...) rw→ T1"; or what happened.
	Summary string `json:"summary"`
	// Explanation is the anomaly in a few lines: each transaction of a
	// cycle with its client, times and micro-operations, then why each
	// precedes the next.
	Explanation []string `json:"explanation"`
}

func init() {
	register(familyDef{name: "history", open: openHistory})
	Implemented["consistency"] = true // the models of the transactions' check, below
}

// historyFamily is the operations a run has recorded so far, and what the
// check found.
type historyFamily struct {
	*env
	h       *history.History
	outcome *history.Outcome
	txns    *history.TxnOutcome
}

func openHistory(e *env) (family, error) {
	hf := &historyFamily{env: e, h: history.New()}
	return family{process: hf.process, crash: hf.crash, check: hf.check, result: hf.result}, nil
}

// crash: a program that dies with operations or transactions in flight
// leaves them open; the trace says so at the moment of the crash.
func (hf *historyFamily) crash(n *node) {
	client := n.label()
	var what []string
	if k := hf.h.InFlight(client); k > 0 {
		what = append(what, operations(k))
	}
	if k := hf.h.TxnsInFlight(client); k > 0 {
		what = append(what, transactions(k))
	}
	if len(what) > 0 {
		hf.event(n, fmt.Sprintf("%s died with %s in flight, their outcome is unknown", client, strings.Join(what, " and ")))
	}
	hf.h.Crashed(client, hf.now())
}

func (hf *historyFamily) process(n *node, p *wasi.Process) {
	p.History = &recorder{hf: hf, n: n, client: n.label()}
}

// recorder takes one incarnation's operations: a restarted program is a
// new client, since it cannot finish what its previous life started.
type recorder struct {
	hf     *historyFamily
	n      *node
	client string
}

func (c *recorder) Invoke(fields []string) int64 {
	id, err := c.hf.h.Invoke(c.client, c.hf.now(), fields)
	if err != nil {
		class, what := ClassLinearizability, "an operation"
		if history.IsTxn(fields) {
			class, what = ClassIsolation, "a transaction"
		}
		c.hf.fail(class, c.n, fmt.Sprintf("%s recorded %s seedfall cannot check: %v", c.client, what, err))
		return 0
	}
	return id
}

func (c *recorder) Return(id int64, fields []string) {
	if err := c.hf.h.Return(id, c.hf.now(), fields); err != nil {
		class := ClassLinearizability
		if c.hf.h.IsTxn(id) {
			class = ClassIsolation
		}
		c.hf.fail(class, c.n, fmt.Sprintf("%s recorded an outcome seedfall cannot check: %v", c.client, err))
	}
}

// check checks the recorded operations, then the transactions, when the
// run is about to pass.
func (hf *historyFamily) check() (string, *node, string) {
	// The check runs while the last program to finish holds the baton:
	// keep it well inside the watchdog, or a slow check would fail the run
	// as a busy loop. Explaining a failure may take as long again; the
	// transactions get as long as the operations.
	limit := HistoryLimit
	if wd := hf.w.Watchdog; wd > 0 {
		limit = min(limit, wd/4)
	}
	if hf.h.Len() > 0 {
		out := hf.h.Check(limit)
		hf.outcome = &out
		if out.Verdict == history.NotLinearizable {
			hf.worldEvent(fmt.Sprintf("the history of %s is not linearizable", operations(out.Ops)))
			return ClassLinearizability, nil, out.Reason
		}
	}
	if len(hf.h.Txns()) == 0 {
		return "", nil, ""
	}
	out, err := hf.h.CheckTxns(hf.w.Consistency, limit)
	if err != nil {
		// The recording refuses what the check cannot take: this is
		// seedfall's bug, but say what failed rather than pass.
		return ClassIsolation, nil, fmt.Sprintf("seedfall cannot check the transactions: %v", err)
	}
	hf.txns = &out
	if out.Verdict != history.NotValid {
		return "", nil, ""
	}
	hf.worldEvent(fmt.Sprintf("the history of %s is not %s: %s", transactions(out.Txns), strings.Join(out.Models, ", "), strings.Join(out.AnomalyTypes, ", ")))
	return ClassIsolation, nil, out.Reason
}

func (hf *historyFamily) result(res *Result) {
	if hf.h.Len() == 0 && len(hf.h.Txns()) == 0 {
		return
	}
	s := &HistorySummary{Ops: hf.h.Len(), Txns: len(hf.h.Txns())}
	if o := hf.outcome; o != nil {
		s.Verdict, s.Object, s.HTML = o.Verdict, o.Object, o.HTML
	}
	if o := hf.txns; o != nil {
		s.Isolation, s.Consistency, s.AnomalyTypes = o.Verdict, o.Models, o.AnomalyTypes
		for _, a := range o.Anomalies {
			s.Anomalies = append(s.Anomalies, TxnAnomaly(a))
		}
	}
	res.History = s
}

// operations says "1 operation", "3 operations".
func operations(n int) string {
	if n == 1 {
		return "1 operation"
	}
	return fmt.Sprintf("%d operations", n)
}

// transactions says "1 transaction", "3 transactions".
func transactions(n int) string {
	if n == 1 {
		return "1 transaction"
	}
	return fmt.Sprintf("%d transactions", n)
}
