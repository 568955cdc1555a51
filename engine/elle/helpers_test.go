package elle

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// txnOps parses the notation of Elle's tests: "ax1ry12" is append 1 to x,
// then read y = [1 2]; "wx1rx_" is write 1 to x, then read x = nil.
// Digits are single elements; keys are the letters x y z t u (strings).
// With list, reads are lists (list-append), else single values.
func txnOps(s string, list bool) []Mop {
	var mops []Mop
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 'a' || c == 'r' || c == 'w':
			m := Mop{F: map[byte]MopKind{'a': Append, 'r': Read, 'w': Write}[c], Nil: c == 'r'}
			i++
			m.Key = Str(string(s[i]))
			if m.F == Read && list {
				m.IsList = true
			}
			mops = append(mops, m)
		case c == '_':
			// nil: already so
		default:
			n, _ := strconv.Atoi(string(c))
			m := &mops[len(mops)-1]
			switch {
			case m.F == Read && list:
				m.List = append(m.List, Int(int64(n)))
				m.Nil = false
			default:
				m.Value, m.Nil = Int(int64(n)), false
			}
		}
	}
	for i := range mops {
		if mops[i].F == Read && list && mops[i].List == nil {
			mops[i].List, mops[i].Nil, mops[i].IsList = nil, true, false
		}
	}
	return mops
}

// top is an op in Elle's test notation: process 0, ok, unless given.
func top(s string, list bool) Op {
	return Op{Type: OK, F: "txn", Value: txnOps(s, list)}
}

func laOp(s string) Op { return top(s, true) }
func rwOp(s string) Op { return top(s, false) }

func with(o Op, process int64, t OpType) Op {
	o.Process, o.Type = process, t
	return o
}

// pairOf is Elle's pair: an invocation (reads nil) and the completion.
func pairOf(o Op) []Op {
	inv := o
	inv.Type = Invoke
	inv.Value = slices.Clone(o.Value)
	for i, m := range inv.Value {
		if m.F == Read {
			inv.Value[i] = Mop{F: Read, Key: m.Key, Nil: true}
		}
	}
	return []Op{inv, o}
}

// hist makes a history of ops, indexed 0, 1, ... as Elle's h/history does.
func hist(ops ...Op) *History {
	h := &History{Name: "test"}
	for i, o := range ops {
		o.Index = int64(i)
		h.Ops = append(h.Ops, o)
	}
	return h
}

func pairs(ops ...Op) *History {
	var all []Op
	for _, o := range ops {
		all = append(all, pairOf(o)...)
	}
	return hist(all...)
}

func models(ms ...string) []string {
	if ms == nil {
		return []string{}
	}
	return ms
}

// want checks a result's verdict, anomaly types and models ruled out.
func want(t *testing.T, r *Result, valid Validity, types []string, not []string) {
	t.Helper()
	if r.Valid != valid || !slices.Equal(r.AnomalyTypes, types) || (not != nil && !slices.Equal(r.Not, not)) {
		b, _ := json.MarshalIndent(r, "", "  ")
		t.Fatalf("got valid %v, types %v, not %v; want %v, %v, %v\n%s", r.Valid, r.AnomalyTypes, r.Not, valid, types, not, b)
	}
}

func mustLA(t *testing.T, h *History, o Options) *Result {
	t.Helper()
	r, err := CheckListAppend(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustRW(t *testing.T, h *History, o Options) *Result {
	t.Helper()
	r, err := CheckRWRegister(h, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func strs(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Fields(s)
}
