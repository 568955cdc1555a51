package elle

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"
)

// Options say what to check a history for.
type Options struct {
	// ConsistencyModels are the models the history should satisfy, by
	// Elle's names ("serializable", "snapshot-isolation", ...; see
	// KnownModels). Nil means strict-serializable, as in Elle; an empty,
	// non-nil slice means none (check for Anomalies only).
	ConsistencyModels []string
	// Anomalies are further anomalies to look for, by name ("G1",
	// "G2-item", "internal"...), with every anomaly that implies them.
	Anomalies []string
	// Deadline, when not zero, stops the check: the result holds what was
	// found by then and is Incomplete.
	Deadline time.Time
	// MaxAnomalies is how many instances of each anomaly type the result
	// keeps (Result.Counts has how many were found): 0 means
	// DefaultMaxAnomalies, a negative number no limit.
	MaxAnomalies int
	// CycleSearchBudget bounds the search for cycles in one strongly
	// connected component, in steps (edges followed): past it, the search
	// of that component stops with a "cycle-search-timeout" anomaly, as
	// Elle's search stops after a time. Steps rather than time keep the
	// result the same on every machine. 0 means DefaultCycleSearchBudget.
	CycleSearchBudget int

	// The version order of rw-register keys is inferred from the initial
	// nil state of every key; these add what Elle's options of the same
	// names add, each an assumption about the database:
	//
	// WFRKeys: within a transaction, writes follow reads (a transaction
	// that read x = 1 and wrote x = 2 put 2 after 1).
	WFRKeys bool
	// SequentialKeys: each key is sequentially consistent, so one
	// process's transactions see its versions in order.
	SequentialKeys bool
	// LinearizableKeys: each key is linearizable, so transactions ordered
	// in real time see its versions in that order.
	LinearizableKeys bool
}

// DefaultMaxAnomalies is how many instances of each anomaly type a result
// keeps by default.
const DefaultMaxAnomalies = 20

// DefaultCycleSearchBudget is the default CycleSearchBudget: some seconds
// of search in a component of a million transactions.
const DefaultCycleSearchBudget = 50_000_000

// Validity is a check's verdict: the history is valid, it is not, or the
// check cannot say.
type Validity int8

const (
	// Unknown: the check did not finish (its time limit), or could infer
	// nothing (no dependency between transactions), and found nothing that
	// the models forbid.
	Unknown Validity = iota
	// Valid: no anomaly the models forbid.
	Valid
	// Invalid: an anomaly the models forbid.
	Invalid
)

func (v Validity) String() string {
	switch v {
	case Valid:
		return "true"
	case Invalid:
		return "false"
	}
	return "unknown"
}

// MarshalJSON writes true, false or "unknown", as Elle's :valid?.
func (v Validity) MarshalJSON() ([]byte, error) {
	if v == Unknown {
		return []byte(`"unknown"`), nil
	}
	return []byte(v.String()), nil
}

// Result is what a check found.
type Result struct {
	Valid Validity `json:"valid"`
	// Incomplete says the check stopped at its deadline: there may be
	// more anomalies than these.
	Incomplete bool `json:"incomplete,omitempty"`
	// AnomalyTypes are the types of the anomalies reported, sorted by
	// name: those the models forbid, and "empty-transaction-graph" or
	// "cycle-search-timeout" when the check could not say.
	AnomalyTypes []string `json:"anomaly_types"`
	// Anomalies are instances of each type in AnomalyTypes (at most
	// Options.MaxAnomalies of each), each explained.
	Anomalies map[string][]Anomaly `json:"anomalies"`
	// Counts are how many instances of each reported type were found.
	Counts map[string]int `json:"counts,omitempty"`
	// Not are the weakest consistency models that the anomalies found
	// rule out, and AlsoNot the stronger ones they rule out too.
	Not     []string `json:"not"`
	AlsoNot []string `json:"also-not"`
	// Possible are the strongest of the models checked (those asked for
	// and those they imply) that nothing found rules out.
	Possible []string `json:"possible"`
	// Models are the models checked for, and Found every anomaly type
	// found, reported or not (a G2-item is not reported to a check for
	// read-committed, but it is in Found and rules out what it rules out).
	Models []string `json:"models"`
	Found  []string `json:"found,omitempty"`
	// Transactions is how many transactions the history has (completed or
	// not), and Edges how many dependencies between them were inferred.
	Transactions int `json:"transactions"`
	Edges        int `json:"edges"`
}

// Anomaly is one instance of an anomaly, with the fields its type uses
// (Elle's names) and an explanation in words.
type Anomaly struct {
	Type string `json:"type"`
	// A cycle: its transactions in order, the first again at the end, and
	// why each precedes the next.
	Cycle []*Op  `json:"cycle,omitempty"`
	Steps []Step `json:"steps,omitempty"`
	// An anomaly in one transaction, or a read: the transaction, the
	// micro-operation, and the transaction that wrote what it read.
	Op     *Op    `json:"op,omitempty"`
	Mop    *Mop   `json:"mop,omitempty"`
	Writer *Op    `json:"writer,omitempty"`
	Elem   *Value `json:"element,omitempty"`
	// Expected is what an internal read should have seen.
	Expected json.RawMessage `json:"expected,omitempty"`
	Key      *Value          `json:"key,omitempty"`
	// Value is the value two transactions both read (lost-update).
	Value json.RawMessage `json:"value,omitempty"`
	// Values are two reads no one order explains (incompatible-order), or
	// the versions a dirty update spans (dirty-update).
	Values json.RawMessage `json:"values,omitempty"`
	// Txns are the transactions of a lost update, or the aborted and the
	// committed writer of a dirty update.
	Txns []*Op `json:"txns,omitempty"`
	// Duplicates are elements read more than once, with their counts.
	Duplicates []Duplicate `json:"duplicates,omitempty"`
	// For a <model>-cycle-exists anomaly: the model it rules out, the
	// relationships of the subgraph, and the transactions (indices) of
	// the smallest cycle-holding component; for cyclic-versions, the
	// versions in a cycle and what inferred the order.
	Not      string          `json:"not,omitempty"`
	Subgraph string          `json:"subgraph,omitempty"`
	SCCSize  int             `json:"scc-size,omitempty"`
	SCC      json.RawMessage `json:"scc,omitempty"`
	Sources  []string        `json:"sources,omitempty"`
	// For a cycle-search-timeout: the type searched for when the budget
	// ran out, and the types already searched for and not there.
	SpecType       string   `json:"anomaly-spec-type,omitempty"`
	DoesNotContain []string `json:"does-not-contain,omitempty"`
	// Explanation says what happened, in words.
	Explanation string `json:"explanation"`

	// fill makes Explanation (and a cycle's Steps), for those kept (see
	// checker.keep).
	fill func(a *Anomaly)
}

// Duplicate is an element a read returned Count times.
type Duplicate struct {
	Element Value `json:"element"`
	Count   int   `json:"count"`
}

// Step is one edge of a cycle: why one transaction precedes the next.
type Step struct {
	// Type is the relationship: "ww", "wr", "rw", "process" or "realtime".
	Type string
	// For data relationships: the key, the value or version of the first
	// transaction (Nil: the initial state), that of the second (for ww
	// and rw), and the positions of the micro-operations in each.
	Key       Value
	Value     Value
	ValueNil  bool
	Value2    Value
	HasValue2 bool
	AMop      int
	BMop      int
	// Process is the process of a process step.
	Process int64
	// AIndex is the completion of the first transaction and BIndex the
	// invocation of the second (realtime).
	AIndex, BIndex int64
	// Explanation says why, naming the transactions as the cycle does.
	Explanation string

	render func(a, b string) string
}

// MarshalJSON writes a step with Elle's field names (value' among them).
func (s Step) MarshalJSON() ([]byte, error) {
	b := []byte(`{"type":"` + s.Type + `"`)
	switch s.Type {
	case "process":
		b = fmt.Appendf(b, `,"process":%d`, s.Process)
	case "realtime":
		b = fmt.Appendf(b, `,"a-index":%d,"b-index":%d`, s.AIndex, s.BIndex)
	default:
		kb, _ := s.Key.MarshalJSON()
		b = append(append(b, `,"key":`...), kb...)
		b = append(b, `,"value":`...)
		if s.ValueNil {
			b = append(b, "null"...)
		} else {
			vb, _ := s.Value.MarshalJSON()
			b = append(b, vb...)
		}
		if s.HasValue2 {
			vb, _ := s.Value2.MarshalJSON()
			b = append(append(b, `,"value'":`...), vb...)
		}
		b = fmt.Appendf(b, `,"a-mop-index":%d,"b-mop-index":%d`, s.AMop, s.BMop)
	}
	eb, _ := json.Marshal(s.Explanation)
	b = append(append(b, `,"explanation":`...), eb...)
	return append(b, '}'), nil
}

// txn is a transaction: its completion (an ok, fail or info op; an info
// made up for an invocation that never completed) and its invocation.
type txn struct {
	op     *Op
	inv    *Op // nil when the history has no invocation for it
	pos    int // where it completed in the history
	invPos int // where it was invoked (-1: unknown)
}

// checker holds one check's state.
type checker struct {
	h    *History
	opts Options
	// all are the transactions in the order they completed; vtx maps a
	// graph vertex to its transaction (the ok and info ones: a failed
	// transaction did not happen and depends on nothing), vof back (-1
	// for failed ones).
	all []txn
	vtx []int32
	vof []int32

	b     builder
	g     *graph
	found map[string][]Anomaly // the instances kept, at most max a type
	count map[string]int       // the instances found
	max   int
	// explainData explains a data relationship between two vertices.
	explainData func(a, b int32, rel uint8) Step

	// priority is the order in which relationships explain an edge.
	priority []uint8

	models     []string
	prohibited map[string]bool
	incomplete bool
}

// CheckListAppend checks a list-append history: transactions of appends
// ["append", k, v] and reads ["r", k, [v1 v2 ...]] of lists, every
// appended value unique per key.
func CheckListAppend(h *History, opts Options) (*Result, error) {
	c, err := newChecker(h, opts, Append)
	if err != nil {
		return nil, err
	}
	c.priority = []uint8{relWW, relWR, relRW, relProcess, relRealtime}
	if err := c.listAppend(); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

// CheckRWRegister checks a read-write register history: transactions of
// writes ["w", k, v] and reads ["r", k, v] of registers that start nil,
// every written value unique per key.
func CheckRWRegister(h *History, opts Options) (*Result, error) {
	c, err := newChecker(h, opts, Write)
	if err != nil {
		return nil, err
	}
	c.priority = []uint8{relWR, relWW, relRW, relProcess, relRealtime}
	if err := c.rwRegister(); err != nil {
		return nil, err
	}
	return c.finish(), nil
}

func newChecker(h *History, opts Options, write MopKind) (*checker, error) {
	models := opts.ConsistencyModels
	if models == nil {
		models = []string{"strict-serializable"}
	}
	if err := ValidateModels(models); err != nil {
		return nil, err
	}
	c := &checker{h: h, opts: opts, models: models, found: map[string][]Anomaly{}, count: map[string]int{}, max: opts.MaxAnomalies}
	if c.max == 0 {
		c.max = DefaultMaxAnomalies
	}
	// Elle's prohibited anomaly types: those the models forbid, and
	// those asked for with every anomaly that implies them.
	c.prohibited = anomaliesProhibitedBy(models)
	for a := range reach(impliedAnomalies.in, opts.Anomalies) {
		c.prohibited[a] = true
	}
	if err := c.pair(); err != nil {
		return nil, err
	}
	if err := c.validate(write); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *checker) where(op *Op) string {
	if op.Line > 0 {
		return fmt.Sprintf("%s:%d", c.h.Name, op.Line)
	}
	return fmt.Sprintf("%s: op %d", c.h.Name, op.Index)
}

// pair matches each invocation with its process's next completion, as
// Jepsen does, and makes the transactions.
func (c *checker) pair() error {
	ops := c.h.Ops
	pending := map[int64]int{} // process -> position of its open invocation
	for i := range ops {
		op := &ops[i]
		if op.Type == Invoke {
			if j, ok := pending[op.Process]; ok {
				return fmt.Errorf("%s: process %d invokes a transaction before its transaction of %s completed: a process runs one transaction at a time (give the first an ok, fail or info completion)",
					c.where(op), op.Process, c.where(&ops[j]))
			}
			pending[op.Process] = i
			continue
		}
		t := txn{op: op, pos: i, invPos: -1}
		if j, ok := pending[op.Process]; ok {
			t.inv, t.invPos = &ops[j], j
			delete(pending, op.Process)
		}
		c.all = append(c.all, t)
	}
	// An invocation that never completed may or may not have happened:
	// an info, as Jepsen takes it.
	var open []int
	for _, j := range pending {
		open = append(open, j)
	}
	sort.Ints(open)
	for k, j := range open {
		inv := &ops[j]
		info := *inv
		info.Type = Info
		c.all = append(c.all, txn{op: &info, inv: inv, pos: len(ops) + k, invPos: j})
	}
	c.vof = make([]int32, len(c.all))
	for i, t := range c.all {
		c.vof[i] = -1
		if t.op.Type != Fail {
			c.vof[i] = int32(len(c.vtx))
			c.vtx = append(c.vtx, int32(i))
		}
	}
	return nil
}

// validate checks that the transactions hold only the micro-operations of
// the workload, with values of the right shape.
func (c *checker) validate(write MopKind) error {
	other := map[MopKind]string{Append: "rw-register", Write: "list-append"}[write]
	for _, t := range c.all {
		for i, m := range t.op.Value {
			field := fmt.Sprintf("value[%d]", i)
			switch {
			case m.F != Read && m.F != write:
				return fmt.Errorf("%s: %s: %q is not a %s micro-operation (want %q or \"r\"): is this a %s history?",
					c.where(t.op), field, m.F.String(), map[MopKind]string{Append: "list-append", Write: "rw-register"}[write], write.String(), other)
			case m.F == Read && !m.Nil && write == Append && !m.IsList:
				return fmt.Errorf("%s: %s: a read of key %v returned %v, not a list: is this an rw-register history?", c.where(t.op), field, m.Key, m.Value)
			case m.F == Read && !m.Nil && write == Write && m.IsList:
				return fmt.Errorf("%s: %s: a read of key %v returned a list: is this a list-append history?", c.where(t.op), field, m.Key)
			}
		}
	}
	return nil
}

// txnOf is the transaction of a vertex.
func (c *checker) txnOf(v int32) *txn { return &c.all[c.vtx[v]] }

// keep counts an instance of anomaly type t, and says whether the result
// keeps it: a history can hold a great many, and only those kept are
// worth explaining.
func (c *checker) keep(t string) bool {
	c.count[t]++
	return c.max < 0 || len(c.found[t]) < c.max
}

// put records an anomaly keep said to keep.
func (c *checker) put(a Anomaly) {
	if a.fill != nil {
		a.fill(&a)
		a.fill = nil
	}
	c.found[a.Type] = append(c.found[a.Type], a)
}

// add counts and records an anomaly.
func (c *checker) add(a Anomaly) {
	if c.keep(a.Type) {
		c.put(a)
	}
}

// timeNow is time.Now, but for tests.
var timeNow = time.Now

// expired says whether the deadline has passed, and notes it.
func (c *checker) expired() bool {
	if !c.incomplete && !c.opts.Deadline.IsZero() && timeNow().After(c.opts.Deadline) {
		c.incomplete = true
	}
	return c.incomplete
}

// orderGraphs adds the process or realtime order, as Elle does: the
// realtime one when the models forbid an anomaly with realtime edges
// (processes are covered then: a process's transactions are in real-time
// order), else the process one when they forbid one with process edges.
func (c *checker) orderGraphs() {
	realtime, process := false, false
	for a := range c.prohibited {
		for _, t := range cycleTypes {
			if t.name == a {
				realtime = realtime || t.variant == relRealtime
				process = process || t.variant == relProcess
			}
		}
	}
	switch {
	case realtime:
		c.realtimeOrder()
	case process:
		c.processOrder()
	}
}

// processOrder links each process's committed transactions in order.
func (c *checker) processOrder() {
	last := map[int64]int32{}
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type != OK {
			continue
		}
		if u, ok := last[t.op.Process]; ok {
			c.b.add(u, int32(v), relProcess)
		}
		last[t.op.Process] = int32(v)
	}
}

// rtEvent is a transaction's invocation or completion, at its place in the
// history.
type rtEvent struct {
	pos    int
	v      int32
	invoke bool
}

// realtimeEvents are the invocations and the completions of committed
// transactions, in the history's order: what real-time order is made of.
func (c *checker) realtimeEvents() []rtEvent {
	var events []rtEvent
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.invPos >= 0 {
			events = append(events, rtEvent{t.invPos, int32(v), true})
		}
		if t.op.Type == OK {
			events = append(events, rtEvent{t.pos, int32(v), false})
		}
	}
	slices.SortFunc(events, func(a, b rtEvent) int { return a.pos - b.pos })
	return events
}

// realtimeOrder links each committed transaction to those invoked after it
// completed: not to all (that is quadratic) but, as Elle, to those invoked
// before a transaction that follows it completes, which implies the rest.
func (c *checker) realtimeOrder() {
	events := c.realtimeEvents()
	var buffer []int32           // completed transactions not implied by a later one
	preds := map[int32][]int32{} // what each transaction was linked from
	inBuffer := make([]bool, len(c.vtx))
	for _, e := range events {
		if e.invoke {
			for _, u := range buffer {
				c.b.add(u, e.v, relRealtime)
			}
			if len(buffer) > 0 {
				preds[e.v] = slices.Clone(buffer)
			}
			continue
		}
		for _, u := range preds[e.v] {
			inBuffer[u] = false
		}
		delete(preds, e.v)
		buffer = slices.DeleteFunc(buffer, func(u int32) bool { return !inBuffer[u] })
		buffer = append(buffer, e.v)
		inBuffer[e.v] = true
	}
}

// explain is why vertex a precedes b by relationship rel.
func (c *checker) explain(a, b int32, rel uint8) Step {
	ta, tb := c.txnOf(a), c.txnOf(b)
	switch rel {
	case relProcess:
		p := ta.op.Process
		return Step{Type: "process", Process: p, render: func(an, bn string) string {
			return fmt.Sprintf("process %d ran %s before %s (process order)", p, an, bn)
		}}
	case relRealtime:
		ai, bi := ta.op.Index, tb.inv.Index
		gap := ""
		if ta.op.HasTime && tb.inv.HasTime {
			if d := tb.inv.Time - ta.op.Time; d > 0 {
				gap = fmt.Sprintf(", %s earlier", time.Duration(d))
			}
		}
		return Step{Type: "realtime", AIndex: ai, BIndex: bi, render: func(an, bn string) string {
			return fmt.Sprintf("%s completed (index %d) before %s was invoked (index %d)%s (real-time order)", an, ai, bn, bi, gap)
		}}
	}
	return c.explainData(a, b, rel)
}

// finish finds the cycles and makes the result.
func (c *checker) finish() *Result {
	if !c.expired() {
		c.orderGraphs()
	}
	c.g = c.b.build(len(c.vtx))
	c.b = builder{}
	if c.g.edges() == 0 && !c.incomplete {
		// Elle's: with no dependency at all, the check could infer
		// nothing, which almost always means something is wrong.
		c.add(Anomaly{Type: "empty-transaction-graph",
			Explanation: "no transaction depends on another: the check inferred nothing (are there reads of what was written?)"})
	}
	if !c.expired() {
		c.cycles()
	}
	return c.result()
}

// result is Elle's result map: the verdict, the anomalies the models
// forbid (and those that make it unknown), and the models ruled out.
func (c *checker) result() *Result {
	r := &Result{Transactions: len(c.all), Edges: c.g.edges(), Incomplete: c.incomplete,
		Anomalies: map[string][]Anomaly{}, Counts: map[string]int{}}
	r.Models = slices.Clone(c.models)
	// A <model>-cycle-exists anomaly only stands in for the cycles a
	// search did not name: drop those whose model the other anomalies
	// already rule out.
	var all, others []string
	for t := range c.count {
		all = append(all, t)
		if !isCycleExists(t) {
			others = append(others, t)
		}
	}
	sort.Strings(all)
	ruledOut := impossibleModels(others)
	var types []string
	for _, t := range all {
		if !isCycleExists(t) || !ruledOut[cycleExistsModel(t)] {
			types = append(types, t)
		}
	}
	r.Found = types
	reportable := func(t string) bool {
		return c.prohibited[t] || t == "empty-transaction-graph" || t == "cycle-search-timeout"
	}
	bad := false
	for _, t := range types {
		if reportable(t) {
			r.AnomalyTypes = append(r.AnomalyTypes, t)
			bad = bad || c.prohibited[t]
		}
	}
	for _, t := range r.AnomalyTypes {
		r.Counts[t] = c.count[t]
		r.Anomalies[t] = c.found[t]
	}
	switch {
	case bad:
		r.Valid = Invalid
	case len(r.AnomalyTypes) > 0 || c.incomplete:
		r.Valid = Unknown
	default:
		r.Valid = Valid
	}
	if r.AnomalyTypes == nil {
		r.AnomalyTypes = []string{}
	}
	if len(r.AnomalyTypes) > 0 {
		r.Not, r.AlsoNot = boundary(types)
	}
	if r.Not == nil {
		r.Not = []string{}
	}
	if r.AlsoNot == nil {
		r.AlsoNot = []string{}
	}
	if !c.incomplete {
		r.Possible = strongestPossible(c.models, types)
	}
	if r.Possible == nil {
		r.Possible = []string{}
	}
	return r
}

// rawJSON marshals v, which cannot fail for the types used here.
func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// listJSON is a list of values as JSON.
func listJSON(l []Value) json.RawMessage { return appendList(nil, l) }

// valueJSON is a value, or null, as JSON.
func valueJSON(v Value, isNil bool) json.RawMessage {
	if isNil {
		return json.RawMessage("null")
	}
	b, _ := v.MarshalJSON()
	return b
}
