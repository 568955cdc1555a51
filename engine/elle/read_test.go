package elle

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func parse(t *testing.T, s string) *History {
	t.Helper()
	h, err := Parse(strings.NewReader(s), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestParseJSONLines(t *testing.T) {
	h := parse(t, `{"index":0,"type":"invoke","f":"txn","value":[["append",1,2],["r",1,null]],"process":0,"time":12}
{"index":1,"type":"ok","f":"txn","value":[["append",1,2],["r",1,[2]]],"process":0,"time":30}

{"type":"info","f":"start-partition","value":"majority","process":"nemesis"}
{"type":":invoke","f":":txn","value":[[":w","x",1],[":r","y"]],"process":1,"extra":{"a":[1,"]"]}}
`)
	if len(h.Ops) != 3 {
		t.Fatalf("%d ops, want 3 (the nemesis left out)", len(h.Ops))
	}
	o := h.Ops[1]
	if o.Index != 1 || o.Type != OK || o.Process != 0 || !o.HasTime || o.Time != 30 || o.Line != 2 || o.F != "txn" {
		t.Errorf("op %+v", o)
	}
	if m := o.Value[1]; m.F != Read || m.Key != Int(1) || !m.IsList || len(m.List) != 1 || m.List[0] != Int(2) {
		t.Errorf("read %+v", m)
	}
	// Without an index, an op's index is its position; keywords keep or
	// drop their colon; a read without a value is nil.
	o = h.Ops[2]
	if o.Index != 2 || o.Type != Invoke || o.Line != 5 || o.Value[0].F != Write || o.Value[0].Key != Str("x") || !o.Value[1].Nil {
		t.Errorf("op %+v", o)
	}
	if got := o.String(); got != `{"index":2,"type":"invoke","process":1,"f":"txn","value":[["w","x",1],["r","y",null]]}` {
		t.Errorf("op as JSON: %s", got)
	}
}

// The JSON array elle-cli writes, one op a line after the first.
func TestParseArray(t *testing.T) {
	h := parse(t, `[{"index":0,"process":0,"type":"invoke","value":[["append",1,1],["append",2,1]]},
 {"index":1,"process":0,"type":"ok","value":[["append",1,1],["append",2,1]]},
 {"index":2,"process":1,"type":"invoke","value":[["append",1,2],["r",2,null]]},
 {"index":3,"process":1,"type":"ok","value":[["append",1,2],["r",2,[]]]},
 {"index":4,"process":2,"type":"invoke","value":[["r",1,null]]},
 {"index":5,"process":2,"type":"ok","value":[["r",1,[1,2]]]}]
`)
	if len(h.Ops) != 6 || h.Ops[3].Line != 4 || !h.Ops[3].Value[1].IsList || len(h.Ops[3].Value[1].List) != 0 {
		t.Fatalf("ops %+v", h.Ops)
	}
	// This is elle-cli's list-append-anomaly-g-single-item.json: Elle
	// finds a G-single-item.
	r := mustLA(t, h, Options{})
	want(t, r, Invalid, strs("G-single-item"), strs("consistent-view repeatable-read"))
	if strings.Join(r.AlsoNot, " ") != "forward-consistent-view serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation update-serializable" {
		t.Errorf("also-not %v, want elle-cli's", r.AlsoNot)
	}
	// Round trip: an op written as JSON reads back the same.
	var b bytes.Buffer
	for i := range h.Ops {
		b.WriteString(h.Ops[i].String() + "\n")
	}
	h2 := parse(t, b.String())
	for i := range h.Ops {
		if h.Ops[i].String() != h2.Ops[i].String() {
			t.Errorf("%s reads back as %s", h.Ops[i].String(), h2.Ops[i].String())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		in, err string
	}{
		{`{"type":"ok","process":0,"value":[]}` + "\n" + `{"type":"okay","process":0,"value":[]}`, `^h.json:2: type: want "invoke", "ok", "fail" or "info", got "okay"$`},
		{`{:type :invoke, :f :txn, :value [[:append 1 2]], :process 0}`, `^h.json:1: this looks like EDN .*convert it to JSON`},
		{`[{:type :invoke, :f :txn}]`, `^h.json:1: this looks like EDN`},
		{`;; a comment` + "\n" + `{:type :ok}`, `^h.json:1: this looks like EDN`},
		{`{"type":"ok","process":0,"value":[["append",1,2],["incr",1,2]]}`, `^h.json:1: value\[1\]: micro-operation "incr": want "append", "r" or "w"$`},
		{`{"type":"ok","process":0,"value":[["append",1,1.5]]}`, `^h.json:1: value\[0\] value: want an integer \(a whole number within 64 bits\) or a string, got 1.5$`},
		{`{"type":"ok","process":0,"value":[["append",1,null]]}`, `^h.json:1: value\[0\]: append of nil to key 1`},
		{`{"type":"ok","value":[]}`, `^h.json:1: no "process"`},
		{`{"type":"ok","process":0}`, `^h.json:1: no "value"`},
		{`{"process":0,"value":[]}`, `^h.json:1: no "type"`},
		{`{"type":"ok","process":0,"value":[["append",1,2]]`, `^h.json:1: the file ends inside an operation`},
		{`[{"type":"ok","process":0,"value":[]}`, `^h.json:1: the JSON array of operations is not closed`},
		{`[{"type":"ok","process":0,"value":[]}] x`, `^h.json:1: 'x' after the array of operations`},
		{`[{"type":"ok","process":0,"value":[]} {"type":"ok","process":0,"value":[]}]`, `^h.json:1: want a comma between operations`},
		{`{"type":"ok","process":0,"value":[["append",1,2]`, `^h.json:1: the file ends inside an operation`},
		{`{"type":"ok","process":0,"value":3}`, `^h.json:1: value: want the transaction`},
		{`[[1,2]]`, `^h.json:1: want an operation, a JSON object .* got an array`},
		{"\n\n" + `{"type":"ok",` + "\n" + `"process":0,"value":[["r",1,[1,"x",{}]]]}`, `^h.json:4: value\[0\] value: want an integer or a string, got "\{"$`},
	} {
		_, err := Parse(strings.NewReader(c.in), "h.json")
		if err == nil || !regexp.MustCompile(c.err).MatchString(err.Error()) {
			t.Errorf("%q: error %v, want %s", c.in, err, c.err)
		}
	}
	_, err := ReadFile(filepath.Join(t.TempDir(), "missing.json"))
	if err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestParseLimits(t *testing.T) {
	op := `{"type":"ok","process":0,"value":[["r",1,[1,2,3,4,5]]]}` + "\n"
	for _, c := range []struct {
		lim Limits
		err string
	}{
		{Limits{MaxOpBytes: 20, MaxOps: 10, MaxElements: 100}, "an operation longer than 20 bytes"},
		{Limits{MaxOpBytes: 1000, MaxOps: 2, MaxElements: 100}, "more than 2 operations"},
		{Limits{MaxOpBytes: 1000, MaxOps: 10, MaxElements: 12}, "more than 12 elements"},
	} {
		_, err := ParseLimits(strings.NewReader(strings.Repeat(op, 3)), "h.json", c.lim)
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.lim, err, c.err)
		}
	}
}

// The checks refuse histories they cannot read the same way Elle would.
func TestCheckErrors(t *testing.T) {
	h := parse(t, `{"type":"ok","process":0,"value":[["append","x",1]]}
{"type":"ok","process":1,"value":[["append","x",1]]}`)
	if _, err := CheckListAppend(h, Options{}); err == nil || !regexp.MustCompile(`^h.json:2: value\[0\]: 1 is appended to key "x" a second time \(first by the transaction at h.json:1\)`).MatchString(err.Error()) {
		t.Errorf("duplicate append: %v", err)
	}
	h = parse(t, `{"type":"ok","process":0,"value":[["w","x",1]]}`)
	if _, err := CheckListAppend(h, Options{}); err == nil || !strings.Contains(err.Error(), `is this a rw-register history?`) {
		t.Errorf("w in list-append: %v", err)
	}
	h = parse(t, `{"type":"ok","process":0,"value":[["r","x",[1]]]}`)
	if _, err := CheckRWRegister(h, Options{}); err == nil || !strings.Contains(err.Error(), `is this a list-append history?`) {
		t.Errorf("list read in rw-register: %v", err)
	}
	h = parse(t, `{"type":"invoke","process":0,"value":[["r","x",null]]}
{"type":"invoke","process":0,"value":[["r","x",null]]}`)
	if _, err := CheckRWRegister(h, Options{}); err == nil || !strings.Contains(err.Error(), `h.json:2: process 0 invokes a transaction before its transaction of h.json:1 completed`) {
		t.Errorf("double invoke: %v", err)
	}
	if _, err := CheckRWRegister(h, Options{ConsistencyModels: strs("serialisable")}); err == nil || !strings.Contains(err.Error(), `unknown consistency model "serialisable" (did you mean "serializable"?)`) {
		t.Errorf("unknown model: %v", err)
	}
}

// An invocation that never completed is an info: it may have happened.
func TestOpenInvocation(t *testing.T) {
	h := parse(t, `{"type":"invoke","process":0,"value":[["append","x",1]]}
{"type":"invoke","process":1,"value":[["r","x",null]]}
{"type":"ok","process":1,"value":[["r","x",[1]]]}`)
	r := mustLA(t, h, Options{})
	want(t, r, Valid, strs(""), nil)
	if r.Transactions != 2 || r.Edges != 1 {
		t.Errorf("%d transactions, %d edges", r.Transactions, r.Edges)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"index":0,"type":"invoke","f":"txn","value":[["append",1,2],["r",1,null]],"process":0}`,
		`[{"type":"ok","process":0,"value":[["r","x",[1,2]]]},{"type":"fail","process":1,"value":[["append","x",3]]}]`,
		`{"type":"ok","process":0,"value":[["w","x",1],["r","y",2]]}` + "\n" + `{"type":"info","process":1,"value":[["w","y",2]]}`,
		`{"type":"ok","process":0,"value":[["r","x","\u00e9\n"]]}`,
		`{"type":"ok","process":0,"value":[["append","\u007f\u0000",1]]}` + "\n" + `{"type":"ok","process":1,"value":[["r","\u007f\u0000",[1,1]]]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseLimits(bytes.NewReader(data), "fuzz", Limits{MaxOpBytes: 1 << 16, MaxOps: 1000, MaxElements: 10000})
		if err != nil {
			return
		}
		for _, o := range []Options{{}, {ConsistencyModels: strs("serializable"), WFRKeys: true, SequentialKeys: true, LinearizableKeys: true}} {
			o.CycleSearchBudget = 100000
			for _, check := range []func(*History, Options) (*Result, error){CheckListAppend, CheckRWRegister} {
				r, err := check(h, o)
				if err != nil {
					continue
				}
				if r.Valid == Valid && len(r.AnomalyTypes) > 0 {
					t.Fatalf("valid with anomalies %v", r.AnomalyTypes)
				}
				if b, err := json.Marshal(r); err != nil || !json.Valid(b) {
					t.Fatalf("the result is no JSON: %v\n%s", err, b)
				}
			}
		}
	})
}
