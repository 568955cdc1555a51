package engine

import (
	"fmt"
	"time"

	"github.com/seedfall/seedfall/engine/internal/history"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// HistoryLimit is the real time the linearizability check of one run may
// take (a quarter of the watchdog at most), and explaining a failure as
// much again. A check that runs out of it is "unknown": the run passes as if the
// history were linearizable, and nothing in its trace or digest says
// otherwise, because whether it runs out depends on the host.
var HistoryLimit = 5 * time.Second

// HistorySummary is what a run's recorded operations came to.
type HistorySummary struct {
	Ops int `json:"ops"`
	// Verdict is "linearizable", "not linearizable", "unknown" (the check
	// ran out of time) or "" (not checked: the run failed first).
	Verdict string `json:"verdict,omitempty"`
	// Object is what the operations that are not linearizable act on:
	// `key "k3"`, `counter`.
	Object string `json:"object,omitempty"`
	// HTML is porcupine's visualization of a history that is not
	// linearizable.
	HTML []byte `json:"-"`
}

func init() {
	register(familyDef{name: "history", open: openHistory})
}

// historyFamily is the operations a run has recorded so far, and what the
// check found.
type historyFamily struct {
	*env
	h       *history.History
	outcome *history.Outcome
}

func openHistory(e *env) (family, error) {
	hf := &historyFamily{env: e, h: history.New()}
	return family{process: hf.process, crash: hf.crash, check: hf.check, result: hf.result}, nil
}

// crash: a program that dies with operations in flight leaves them open;
// the trace says so at the moment of the crash.
func (hf *historyFamily) crash(n *node) {
	if k := hf.h.InFlight(n.label()); k > 0 {
		hf.event(n, fmt.Sprintf("%s died with %s in flight, their outcome is unknown", n.label(), operations(k)))
	}
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
		c.hf.fail(ClassLinearizability, c.n, fmt.Sprintf("%s recorded an operation seedfall cannot check: %v", c.client, err))
		return 0
	}
	return id
}

func (c *recorder) Return(id int64, fields []string) {
	if err := c.hf.h.Return(id, c.hf.now(), fields); err != nil {
		c.hf.fail(ClassLinearizability, c.n, fmt.Sprintf("%s recorded an outcome seedfall cannot check: %v", c.client, err))
	}
}

// check checks the recorded operations when the run is about to
// pass.
func (hf *historyFamily) check() (string, *node, string) {
	if hf.h.Len() == 0 {
		return "", nil, ""
	}
	// The check runs while the last program to finish holds the baton:
	// keep it well inside the watchdog, or a slow check would fail the run
	// as a busy loop. Explaining a failure may take as long again.
	limit := HistoryLimit
	if wd := hf.w.Watchdog; wd > 0 {
		limit = min(limit, wd/4)
	}
	out := hf.h.Check(limit)
	hf.outcome = &out
	if out.Verdict != history.NotLinearizable {
		return "", nil, ""
	}
	hf.worldEvent(fmt.Sprintf("the history of %s is not linearizable", operations(out.Ops)))
	return ClassLinearizability, nil, out.Reason
}

func (hf *historyFamily) result(res *Result) {
	if hf.h.Len() == 0 {
		return
	}
	s := &HistorySummary{Ops: hf.h.Len()}
	if o := hf.outcome; o != nil {
		s.Verdict, s.Object, s.HTML = o.Verdict, o.Object, o.HTML
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
