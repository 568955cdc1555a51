package history

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/elle"
)

// Transactions recorded with sim.Txn: Elle's list-append and rw-register
// workloads, checked with engine/elle for the anomalies the world's
// consistency models forbid.

// The workloads, as sim names them in the invocation's first field.
const (
	ListAppend = "list-append"
	RWRegister = "rw-register"
)

// Verdicts of a check of transactions, besides Unknown.
const (
	Valid    = "valid"
	NotValid = "not valid"
)

// Txn is one recorded transaction.
type Txn struct {
	Client   string // the program incarnation that ran it: "client#1"
	Workload string // ListAppend or RWRegister
	// Process is the transaction's Elle process: a logical client that
	// runs one transaction at a time (see process).
	Process int64
	// Mops are the micro-operations as invoked, reads not done (Nil);
	// Done are the same with what the reads returned, once it committed.
	Mops, Done []elle.Mop
	Status     Status
	// Lost says its program crashed with the transaction open: its
	// outcome is unknown (Elle's info), as is that of one still open when
	// the run ends.
	Lost             bool
	CallNs, ReturnNs int64 // virtual times; ReturnNs is when it was lost, for a lost one
}

// txnEvent is an invocation or a completion, in the order they happened.
type txnEvent struct {
	t   *Txn
	typ elle.OpType
	ns  int64
}

// clientProcs are the processes of one program incarnation, lowest first,
// and whether each has a transaction in flight.
type clientProcs struct {
	ids  []int64
	busy []bool
}

// process gives a new transaction of client the lowest process of the
// client's that has no transaction in flight, or a new one. A transaction
// left open keeps its process busy for good, so that no later transaction
// runs on it: Jepsen's rule after an info, which keeps every process's
// order sound. Processes are numbered in order of first use.
func (h *History) process(client string) (int64, *clientProcs, int) {
	cp := h.procs[client]
	if cp == nil {
		cp = &clientProcs{}
		h.procs[client] = cp
	}
	for i, b := range cp.busy {
		if !b {
			cp.busy[i] = true
			return cp.ids[i], cp, i
		}
	}
	id := int64(len(h.procClient))
	h.procClient = append(h.procClient, client)
	cp.ids = append(cp.ids, id)
	cp.busy = append(cp.busy, true)
	return id, cp, len(cp.ids) - 1
}

// txnSlot is where a transaction's process is, to free it when the
// transaction completes.
type txnSlot struct {
	cp *clientProcs
	i  int
}

// Txns returns the transactions in order of invocation.
func (h *History) Txns() []*Txn { return h.txns }

// TxnsInFlight counts client's transactions that are still open.
func (h *History) TxnsInFlight(client string) int {
	n := 0
	for _, t := range h.txns {
		if t.Client == client && t.Status == Open && !t.Lost {
			n++
		}
	}
	return n
}

// Crashed records that client's program crashed at virtual time now: its
// open transactions are lost, their outcome unknown (Elle's info).
func (h *History) Crashed(client string, now int64) {
	for _, t := range h.txns {
		if t.Client == client && t.Status == Open && !t.Lost {
			t.Lost, t.ReturnNs = true, now
			h.events = append(h.events, txnEvent{t, elle.Info, now})
		}
	}
}

// dupKey is a value written to a key of a workload.
type dupKey struct {
	workload   string
	key, value int64
}

// invokeTxn records the invocation of a transaction: f are sim's fields,
// the workload then its micro-operations.
func (h *History) invokeTxn(client string, now int64, f []string) (*Txn, error) {
	t := &Txn{Client: client, Workload: f[0], CallNs: now}
	text := strings.Join(f[1:], "")
	if text == "" {
		return nil, fmt.Errorf("a %s transaction without micro-operations", t.Workload)
	}
	for i, s := range strings.Split(text, ";") {
		m, err := parseMop(t.Workload, s)
		if err != nil {
			return nil, fmt.Errorf("%s transaction, micro-operation %d: %v", t.Workload, i, err)
		}
		t.Mops = append(t.Mops, m)
	}
	// Elle orders the writes to a key by their values: each must be
	// unique, or the check cannot tell which one a read saw.
	for _, m := range t.Mops {
		if m.F == elle.Read {
			continue
		}
		k := dupKey{t.Workload, m.Key.Int64(), m.Value.Int64()}
		if first, dup := h.written[k]; dup {
			verb := "appended"
			if m.F == elle.Write {
				verb = "written"
			}
			who := "this transaction"
			if first != t {
				who = first.when()
			}
			return nil, fmt.Errorf("%d is %s to key %d a second time (first by %s): the check orders a key's values by who wrote them, so each value %s to a key must be unique: draw them from a counter",
				m.Value.Int64(), verb, m.Key.Int64(), who, verb)
		}
		h.written[k] = t
	}
	var slot txnSlot
	t.Process, slot.cp, slot.i = h.process(client)
	h.slots[t] = slot
	h.txns = append(h.txns, t)
	h.events = append(h.events, txnEvent{t, elle.Invoke, now})
	return t, nil
}

// parseMop reads one micro-operation: "append K V", "r K", "w K V".
func parseMop(workload, s string) (elle.Mop, error) {
	w := strings.Fields(s)
	num := func(x string) (elle.Value, error) {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return elle.Value{}, fmt.Errorf("%q is not an integer", x)
		}
		return elle.Int(n), nil
	}
	write, name := elle.Append, "append"
	if workload == RWRegister {
		write, name = elle.Write, "w"
	}
	switch {
	case len(w) == 2 && w[0] == "r":
		k, err := num(w[1])
		return elle.Mop{F: elle.Read, Key: k, Nil: true}, err
	case len(w) == 3 && w[0] == name:
		k, err := num(w[1])
		if err != nil {
			return elle.Mop{}, err
		}
		v, err := num(w[2])
		return elle.Mop{F: write, Key: k, Value: v}, err
	}
	return elle.Mop{}, fmt.Errorf("%q: want %q or \"r K\"", s, name+" K V")
}

// returnTxn records a transaction's outcome: "fail", or "ok" and what
// its reads returned.
func (h *History) returnTxn(t *Txn, now int64, f []string) error {
	if t.Status != Open || t.Lost {
		return fmt.Errorf("%s finished twice", t.describe())
	}
	if len(f) == 0 {
		return fmt.Errorf("%s finished without a status", t.describe())
	}
	switch f[0] {
	case "fail":
		t.Status = Failed
	case "ok":
		done, err := t.parseReads(f[1:])
		if err != nil {
			return err
		}
		t.Done, t.Status = done, Ok
	default:
		return fmt.Errorf("%s finished with status %q, want ok or fail", t.describe(), f[0])
	}
	t.ReturnNs = now
	s := h.slots[t]
	s.cp.busy[s.i] = false
	delete(h.slots, t)
	typ := elle.OK
	if t.Status == Failed {
		typ = elle.Fail
	}
	h.events = append(h.events, txnEvent{t, typ, now})
	return nil
}

// parseReads is the transaction's micro-operations with the results of
// its reads filled in from f.
func (t *Txn) parseReads(f []string) ([]elle.Mop, error) {
	n := 0
	for _, m := range t.Mops {
		if m.F == elle.Read {
			n++
		}
	}
	var results []string
	if n > 0 && len(f) > 0 {
		results = strings.Split(strings.Join(f, ""), ";")
	}
	if len(results) != n {
		return nil, fmt.Errorf("%s returned %d results for its %s", t.describe(), len(results), plural(n, "read"))
	}
	done := make([]elle.Mop, len(t.Mops))
	r := 0
	for i, m := range t.Mops {
		done[i] = m
		if m.F != elle.Read {
			continue
		}
		s := results[r]
		r++
		m.Nil = false
		if t.Workload == ListAppend {
			m.IsList = true
			for _, x := range strings.Fields(s) {
				v, err := strconv.ParseInt(x, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("%s: the read of key %d returned %q, not a list of integers", t.describe(), m.Key.Int64(), s)
				}
				m.List = append(m.List, elle.Int(v))
			}
		} else if s == "nil" {
			m.Nil = true
		} else {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: the read of key %d returned %q, not an integer or nil", t.describe(), m.Key.Int64(), s)
			}
			m.Value = elle.Int(v)
		}
		done[i] = m
	}
	return done, nil
}

func (t *Txn) describe() string { return fmt.Sprintf("%s's %s transaction", t.Client, t.Workload) }

// when says who ran the transaction and when, as op.when does.
func (t *Txn) when() string {
	call, ret := micros(t.CallNs), micros(t.ReturnNs)
	switch {
	case t.Status == Open:
		return fmt.Sprintf("%s from %v, never finished", t.Client, call)
	case call == ret:
		return fmt.Sprintf("%s at %v", t.Client, call)
	}
	return fmt.Sprintf("%s at %v-%v", t.Client, call, ret)
}

// whenProcess is when with the transaction's process, which tells apart
// the transactions one client runs at once: "client#1 (process 2) at
// 1.2s-1.3s".
func (t *Txn) whenProcess() string {
	w := t.when()
	return fmt.Sprintf("%s (process %d)%s", t.Client, t.Process, strings.TrimPrefix(w, t.Client))
}

// text is the transaction's micro-operations, with what its reads
// returned when it committed: "r 2 [1 4], append 2 9"; "r 3 ?" for a read
// whose result is not known.
func (t *Txn) text() string {
	mops := t.Mops
	if t.Status == Ok {
		mops = t.Done
	}
	s := make([]string, len(mops))
	for i, m := range mops {
		switch {
		case m.F != elle.Read:
			s[i] = fmt.Sprintf("%s %d %d", m.F, m.Key.Int64(), m.Value.Int64())
		case t.Status != Ok:
			s[i] = fmt.Sprintf("r %d ?", m.Key.Int64())
		case m.IsList:
			vs := make([]string, len(m.List))
			for j, v := range m.List {
				vs[j] = strconv.FormatInt(v.Int64(), 10)
			}
			s[i] = fmt.Sprintf("r %d [%s]", m.Key.Int64(), strings.Join(vs, " "))
		case m.Nil:
			s[i] = fmt.Sprintf("r %d nil", m.Key.Int64())
		default:
			s[i] = fmt.Sprintf("r %d %d", m.Key.Int64(), m.Value.Int64())
		}
	}
	return strings.Join(s, ", ")
}

// TxnOutcome is what checking the transactions found.
type TxnOutcome struct {
	// Verdict is Valid, NotValid or Unknown: the check ran out of time,
	// or could infer nothing (no transaction read another's write), or its
	// search for cycles stopped at its budget, and found nothing forbidden.
	Verdict string
	Txns    int      // transactions recorded, of both workloads
	Models  []string // the consistency models checked for
	// AnomalyTypes are the types of the anomalies found, sorted by name,
	// those of list-append first.
	AnomalyTypes []string
	// Anomalies are the first instance of each of AnomalyTypes, explained.
	Anomalies []TxnAnomaly
	Reason    string // not valid: the anomaly types and the first one's cycle, in a line
}

// TxnAnomaly is one anomaly, explained in terms of the clients.
type TxnAnomaly struct {
	Type     string `json:"type"`
	Workload string `json:"workload"`
	// Summary is the anomaly in a line: a cycle's transactions and the
	// dependencies between them, "T1 (client#1 at 1.2s-1.21s) rw→ T2
	// (client#2 at ...) rw→ T1"; or what happened.
	Summary string `json:"summary"`
	// Explanation is the anomaly in a few lines: each transaction, with
	// its client, times and micro-operations, then why each precedes the
	// next.
	Explanation []string `json:"explanation"`
}

// CheckTxns checks the transactions for the anomalies that models forbid
// (Elle's names; nil: strict-serializable), list-append and rw-register
// apart, within limit of real time in all. A check that runs out of time
// is Unknown, even if it found an anomaly by then: whether it does
// depends on the host, and a verdict must not.
func (h *History) CheckTxns(models []string, limit time.Duration) (TxnOutcome, error) {
	out := TxnOutcome{Verdict: Valid, Txns: len(h.txns), Models: models}
	if models == nil {
		out.Models = []string{"strict-serializable"}
	}
	deadline := time.Now().Add(limit)
	unknown := false
	first := -1 // the first anomaly that is not an inconclusive one
	counts := map[string]int{}
	for _, wl := range []string{ListAppend, RWRegister} {
		eh, evs := h.elleHistory(wl)
		if eh == nil {
			continue
		}
		if !time.Now().Before(deadline) {
			unknown = true
			continue
		}
		check := elle.CheckListAppend
		if wl == RWRegister {
			check = elle.CheckRWRegister
		}
		r, err := check(eh, elle.Options{ConsistencyModels: models, Deadline: deadline})
		if err != nil {
			return out, fmt.Errorf("checking the %s transactions: %v", wl, err)
		}
		if r.Incomplete || r.Valid == elle.Unknown {
			unknown = true
			continue
		}
		if r.Valid != elle.Invalid {
			continue
		}
		out.Verdict = NotValid
		for _, typ := range r.AnomalyTypes {
			as := r.Anomalies[typ]
			if len(as) == 0 {
				continue
			}
			out.AnomalyTypes = append(out.AnomalyTypes, typ)
			counts[typ] += r.Counts[typ]
			a := h.explainAnomaly(wl, &as[0], evs)
			out.Anomalies = append(out.Anomalies, a)
			if first < 0 && typ != "empty-transaction-graph" && typ != "cycle-search-timeout" {
				first = len(out.Anomalies) - 1
			}
		}
	}
	switch {
	case out.Verdict == NotValid && unknown:
		// What the rest of the check would have found is not known: the
		// verdict must not depend on how far it got.
		out.Verdict, out.AnomalyTypes, out.Anomalies = Unknown, nil, nil
	case out.Verdict == NotValid:
		types := make([]string, len(out.AnomalyTypes))
		for i, t := range out.AnomalyTypes {
			types[i] = fmt.Sprintf("%s (%d found)", t, counts[t])
		}
		a := out.Anomalies[max(first, 0)]
		out.Reason = fmt.Sprintf("the transactions are not %s: %s; %s: %s",
			strings.Join(out.Models, ", "), strings.Join(types, ", "), a.Type, a.Summary)
	case unknown:
		out.Verdict = Unknown
	}
	return out, nil
}

// elleHistory is the transactions of workload wl as an Elle history, in
// the order their invocations and completions happened, with an info for
// each still open, and the event of each op (nil when there are none).
func (h *History) elleHistory(wl string) (*elle.History, []txnEvent) {
	var evs []txnEvent
	for _, e := range h.events {
		if e.t.Workload == wl {
			evs = append(evs, e)
		}
	}
	if len(evs) == 0 {
		return nil, nil
	}
	for _, t := range h.txns {
		if t.Workload == wl && t.Status == Open && !t.Lost {
			evs = append(evs, txnEvent{t, elle.Info, -1})
		}
	}
	eh := &elle.History{Name: wl + " transactions", Ops: make([]elle.Op, len(evs))}
	for i, e := range evs {
		op := elle.Op{Index: int64(i), Process: e.t.Process, Type: e.typ, F: "txn", Value: e.t.Mops, Time: e.ns, HasTime: e.ns >= 0}
		if e.typ == elle.OK {
			op.Value = e.t.Done
		}
		eh.Ops[i] = op
	}
	return eh, evs
}

// explainAnomaly says what an Elle anomaly is in terms of the clients
// whose transactions it involves; evs maps the history's indices to them.
func (h *History) explainAnomaly(wl string, a *elle.Anomaly, evs []txnEvent) TxnAnomaly {
	out := TxnAnomaly{Type: a.Type, Workload: wl}
	txnOf := func(op *elle.Op) *Txn { return evs[op.Index].t }
	if n := len(a.Cycle) - 1; n > 0 && len(a.Steps) == n {
		var sum strings.Builder
		for i := 0; i < n; i++ {
			t := txnOf(a.Cycle[i])
			// A long cycle's summary keeps its ends: the line is a reason.
			switch {
			case n <= summaryCycle || i < summaryCycle-2 || i >= n-1:
				fmt.Fprintf(&sum, "T%d (%s) %s→ ", i+1, t.when(), a.Steps[i].Type)
			case i == summaryCycle-2:
				sum.WriteString("… ")
			}
			out.Explanation = append(out.Explanation, fmt.Sprintf("T%d = %s: %s", i+1, t.whenProcess(), t.text()))
		}
		sum.WriteString("T1")
		if n > summaryCycle {
			fmt.Fprintf(&sum, " (a cycle of %d transactions)", n)
		}
		out.Summary = sum.String()
		for i, st := range a.Steps {
			out.Explanation = append(out.Explanation, fmt.Sprintf("T%d < T%d: %s", i+1, (i+1)%n+1, h.clientNames(st.Explanation, evs)))
		}
		return out
	}
	out.Summary = h.clientNames(a.Explanation, evs)
	out.Explanation = []string{out.Summary}
	// The transactions the explanation names by index, with their clients.
	seen := map[int64]bool{}
	named := append([]*elle.Op{a.Op, a.Writer}, a.Txns...)
	for _, op := range named {
		if op == nil || seen[op.Index] {
			continue
		}
		seen[op.Index] = true
		t := txnOf(op)
		out.Explanation = append(out.Explanation, fmt.Sprintf("index %d = %s: %s", op.Index, t.whenProcess(), t.text()))
	}
	return out
}

// summaryCycle is the longest cycle a summary names every transaction of.
const summaryCycle = 5

var (
	opJSON       = regexp.MustCompile(`\{"index":(\d+),[^{}]*\}`)
	txnAtIndex   = regexp.MustCompile(`the transaction at index (\d+) \(process (\d+)\)`)
	processOrder = regexp.MustCompile(`process (\d+) ran`)
)

// clientNames rewrites an Elle explanation in the clients' terms: a
// transaction it quotes becomes its index, and a process its client.
func (h *History) clientNames(s string, evs []txnEvent) string {
	s = opJSON.ReplaceAllString(s, "index $1")
	s = txnAtIndex.ReplaceAllStringFunc(s, func(m string) string {
		sub := txnAtIndex.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[1])
		if i < 0 || i >= len(evs) {
			return m
		}
		return fmt.Sprintf("the transaction at index %s (%s)", sub[1], evs[i].t.when())
	})
	return processOrder.ReplaceAllStringFunc(s, func(m string) string {
		sub := processOrder.FindStringSubmatch(m)
		p, _ := strconv.Atoi(sub[1])
		if p < 0 || p >= len(h.procClient) {
			return m
		}
		return fmt.Sprintf("%s (process %d) ran", h.procClient[p], p)
	})
}
