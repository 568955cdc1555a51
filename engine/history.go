package engine

import (
	"fmt"
	"time"

	"github.com/seedfall/seedfall/engine/history"
	"github.com/seedfall/seedfall/engine/wasi"
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
	register(family{name: "history", setup: (*runner).historySetup, process: (*runner).historyProcess, crash: (*runner).historyCrash,
		check: (*runner).historyCheck, result: (*runner).historyResult})
}

// historyRun is the operations a run has recorded so far, and what the
// check found.
type historyRun struct {
	h       *history.History
	outcome *history.Outcome
}

func (r *runner) historySetup() error {
	r.hist = &historyRun{h: history.New()}
	return nil
}

// historyCrash: a program that dies with operations in flight leaves them
// open; the trace says so at the moment of the crash.
func (r *runner) historyCrash(n *node) {
	if k := r.hist.h.InFlight(n.label()); k > 0 {
		r.event(n, fmt.Sprintf("%s died with %s in flight, their outcome is unknown", n.label(), operations(k)))
	}
}

func (r *runner) historyProcess(n *node, p *wasi.Process) {
	p.History = &recorder{r: r, n: n, client: n.label()}
}

// recorder takes one incarnation's operations: a restarted program is a
// new client, since it cannot finish what its previous life started.
type recorder struct {
	r      *runner
	n      *node
	client string
}

func (c *recorder) Invoke(fields []string) int64 {
	id, err := c.r.hist.h.Invoke(c.client, c.r.s.Now(), fields)
	if err != nil {
		c.r.fail(ClassLinearizability, c.n, fmt.Sprintf("%s recorded an operation seedfall cannot check: %v", c.client, err))
		return 0
	}
	return id
}

func (c *recorder) Return(id int64, fields []string) {
	if err := c.r.hist.h.Return(id, c.r.s.Now(), fields); err != nil {
		c.r.fail(ClassLinearizability, c.n, fmt.Sprintf("%s recorded an outcome seedfall cannot check: %v", c.client, err))
	}
}

// historyCheck checks the recorded operations when the run is about to
// pass.
func (r *runner) historyCheck() (string, *node, string) {
	if r.hist.h.Len() == 0 {
		return "", nil, ""
	}
	// The check runs while the last program to finish holds the baton:
	// keep it well inside the watchdog, or a slow check would fail the run
	// as a busy loop. Explaining a failure may take as long again.
	limit := HistoryLimit
	if wd := r.w.Watchdog; wd > 0 {
		limit = min(limit, wd/4)
	}
	out := r.hist.h.Check(limit)
	r.hist.outcome = &out
	if out.Verdict != history.NotLinearizable {
		return "", nil, ""
	}
	r.worldEvent(fmt.Sprintf("the history of %s is not linearizable", operations(out.Ops)))
	return ClassLinearizability, nil, out.Reason
}

func (r *runner) historyResult(res *Result) {
	if r.hist.h.Len() == 0 {
		return
	}
	s := &HistorySummary{Ops: r.hist.h.Len()}
	if o := r.hist.outcome; o != nil {
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
