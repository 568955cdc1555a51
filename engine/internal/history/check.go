package history

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdicts of a check.
const (
	Linearizable    = "linearizable"
	NotLinearizable = "not linearizable"
	// Unknown: the check ran out of time. It neither passes nor fails a
	// run: it depends on how fast the host is, and a verdict must not.
	Unknown = "unknown"
)

// Outcome is what checking a history found.
type Outcome struct {
	Verdict string
	Ops     int    // operations recorded
	Object  string // not linearizable: the first object (in sorted order) whose operations are not
	Reason  string // not linearizable: what went wrong, for people
	// HTML is porcupine's visualization of the failing object's history.
	HTML []byte
}

// Check checks the history for linearizability, one object at a time in
// sorted order, within limit of real time in all; explaining a failure
// takes at most limit again. Only whether it finishes in time depends on
// the host; what it finds does not.
func (h *History) Check(limit time.Duration) Outcome {
	out := Outcome{Verdict: Linearizable, Ops: len(h.ops)}
	deadline := time.Now().Add(limit)
	for _, o := range h.objects() {
		left := time.Until(deadline)
		if left <= 0 {
			out.Verdict = Unknown
			continue
		}
		m := modelFor(o.ops[0])
		switch porcupine.CheckOperationsTimeout(m, operations(o.ops), left) {
		case porcupine.Unknown:
			out.Verdict = Unknown
		case porcupine.Illegal:
			out.Verdict, out.Object = NotLinearizable, o.name
			out.Reason, out.HTML = explain(o, m, limit)
			return out
		}
	}
	return out
}

// operations turns an object's operations into porcupine's, with the op
// as metadata.
func operations(ops []*Op) []porcupine.Operation {
	out := make([]porcupine.Operation, len(ops))
	for i, op := range ops {
		out[i] = porcupine.Operation{ClientId: op.client, Input: op, Output: op, Call: op.Call, Return: op.returnSeq(), Metadata: op}
	}
	return out
}

// kvState is one key's value.
type kvState struct {
	value string
	found bool
}

// modelFor is the sequential specification of op's object. Input and output
// are both the *Op, which carries its outcome.
func modelFor(op *Op) porcupine.Model {
	describeOp := func(in, _ any) string { return in.(*Op).String() }
	describeMeta := func(m any) string { return m.(*Op).when() }
	if op.Model == "kv" {
		return porcupine.Model{
			Init: func() any { return kvState{} },
			Step: func(st, in, _ any) (bool, any) {
				s, op := st.(kvState), in.(*Op)
				if op.Kind == "put" {
					return true, kvState{op.Value, true}
				}
				return op.Found == s.found && op.Value == s.value, s
			},
			DescribeOperation: describeOp,
			DescribeState: func(st any) string {
				if s := st.(kvState); s.found {
					return strconv.Quote(s.value)
				}
				return "(none)"
			},
			DescribeOperationMetadata: describeMeta,
		}
	}
	return porcupine.Model{
		Init: func() any { return int64(0) },
		Step: func(st, in, _ any) (bool, any) {
			n, op := st.(int64), in.(*Op)
			if op.Kind == "add" {
				return true, n + op.N
			}
			return op.N == n, n
		},
		DescribeOperation:         describeOp,
		DescribeState:             func(st any) string { return strconv.FormatInt(st.(int64), 10) },
		DescribeOperationMetadata: describeMeta,
	}
}

// explain says why an object's operations are not linearizable: a named
// pattern when one fits (a stale read, a value nobody wrote), else
// porcupine's longest consistent order and the operation that cannot
// follow it. It also renders porcupine's visualization.
func explain(o object, m porcupine.Model, limit time.Duration) (string, []byte) {
	res, info := porcupine.CheckOperationsVerbose(m, operations(o.ops), limit)
	var html bytes.Buffer
	if res == porcupine.Illegal {
		if err := porcupine.Visualize(m, info, &html); err != nil {
			html.Reset()
		}
	}
	why := ""
	if o.ops[0].Model == "kv" {
		why = explainKV(o.ops)
	}
	if why == "" && res == porcupine.Illegal {
		why = explainPartial(o.ops, m, info)
	}
	if why == "" {
		why = fmt.Sprintf("no order of its %s explains every answer", plural(len(o.ops), "operation"))
	}
	return o.name + ": " + why, html.Bytes()
}

// before reports whether a completed before b started.
func before(a, b *Op) bool { return a.Status == Ok && a.Return < b.Call }

// explainKV looks for the shapes of a non-linearizable register that
// people recognise, read by read in order of invocation.
func explainKV(ops []*Op) string {
	for _, g := range ops {
		if g.Kind != "get" {
			continue
		}
		var writers []*Op
		for _, w := range ops {
			if w.Kind == "put" && g.Found && w.Value == g.Value {
				writers = append(writers, w)
			}
		}
		if g.Found && len(writers) == 0 {
			return fmt.Sprintf("%s, which no put wrote (%s)", g, g.when())
		}
		if g.Found && !slices.ContainsFunc(writers, func(w *Op) bool { return !before(g, w) }) {
			w := writers[0]
			return fmt.Sprintf("%s before %s started (get by %s, put by %s)", g, w, g.when(), w.when())
		}
		// Stale: every write of the value read (or, for a read that found
		// nothing, the empty start) was followed by another write that
		// completed before the read started.
		overwriter := func(w *Op) *Op {
			var best *Op
			for _, x := range ops {
				if x.Kind == "put" && (!g.Found || x.Value != g.Value) && before(x, g) && (w == nil || before(w, x)) {
					if best == nil || x.Return > best.Return {
						best = x
					}
				}
			}
			return best
		}
		if !g.Found {
			if x := overwriter(nil); x != nil {
				return fmt.Sprintf("%s after %s completed (put by %s, get by %s)", g, x, x.when(), g.when())
			}
			continue
		}
		stale := true
		for _, w := range writers {
			if overwriter(w) == nil {
				stale = false
				break
			}
		}
		if stale {
			w := slices.MaxFunc(writers, func(a, b *Op) int { return cmp.Compare(a.returnSeq(), b.returnSeq()) })
			x := overwriter(w)
			return fmt.Sprintf("%s after %s completed (put by %s, get by %s; %q was written by %s)",
				g, x, x.when(), g.when(), g.Value, w.when())
		}
	}
	return ""
}

// explainPartial summarizes porcupine's longest consistent order: where it
// ends, the state it leaves, and the earliest-finishing operation that
// cannot take effect there.
func explainPartial(ops []*Op, m porcupine.Model, info porcupine.LinearizationInfo) string {
	parts := info.PartialLinearizationsOperations()
	if len(parts) == 0 {
		return ""
	}
	// The longest order, ties broken by the operations' order, so the
	// message is the same whatever order porcupine returned them in.
	seqs := append(parts[0], nil)
	key := func(s []porcupine.Operation) []int64 {
		k := make([]int64, len(s))
		for i, o := range s {
			k[i] = o.Call
		}
		return k
	}
	best := slices.MaxFunc(seqs, func(a, b []porcupine.Operation) int {
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
		return -slices.Compare(key(a), key(b))
	})
	state := m.Init()
	done := map[*Op]bool{}
	for _, o := range best {
		_, state = m.Step(state, o.Input, o.Output)
		done[o.Input.(*Op)] = true
	}
	var stuck *Op
	for _, op := range ops {
		if done[op] {
			continue
		}
		if ok, _ := m.Step(state, op, op); ok {
			continue
		}
		if stuck == nil || op.returnSeq() < stuck.returnSeq() {
			stuck = op
		}
	}
	if stuck == nil {
		return ""
	}
	var prefix string
	if len(best) == 0 {
		prefix = "from the start"
	} else {
		last := best[len(best)-1].Input.(*Op)
		prefix = fmt.Sprintf("after %s (%s)", last, last.when())
	}
	return fmt.Sprintf("no order of its %s explains every answer: the longest that does ends %s with %s, and %s (%s) does not fit",
		plural(len(ops), "operation"), prefix, stateWord(m, state), stuck, stuck.when())
}

func stateWord(m porcupine.Model, state any) string {
	s := m.DescribeState(state)
	if s == "(none)" {
		return "no value"
	}
	return "the value " + strings.TrimSpace(s)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
