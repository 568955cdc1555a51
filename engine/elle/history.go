package elle

import (
	"encoding/json"
	"strconv"
)

// OpType is what an operation is in Jepsen's model: the invocation of a
// transaction, or how it completed.
type OpType uint8

const (
	// Invoke is a transaction beginning.
	Invoke OpType = iota
	// OK is a transaction that committed: everything in it happened.
	OK
	// Fail is a transaction that certainly did not happen (it aborted).
	Fail
	// Info is a transaction whose outcome is unknown (a timeout, a crash):
	// it may or may not have happened, and its reads are unknown.
	Info
)

func (t OpType) String() string {
	switch t {
	case Invoke:
		return "invoke"
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return "?"
}

// MopKind is what a micro-operation does.
type MopKind uint8

const (
	// Read is ["r", k, v]: a read of key k that returned v (a list for
	// list-append, a value for rw-register, nil when unknown or empty).
	Read MopKind = iota
	// Append is ["append", k, v]: appends v to the list at key k.
	Append
	// Write is ["w", k, v]: sets register k to v.
	Write
)

func (k MopKind) String() string {
	switch k {
	case Read:
		return "r"
	case Append:
		return "append"
	case Write:
		return "w"
	}
	return "?"
}

// Mop is one micro-operation of a transaction: [f, key, value].
type Mop struct {
	F   MopKind
	Key Value
	// Value is what an append or a write adds, or what a register read
	// returned (when Nil is false).
	Value Value
	// List is what a list-append read returned (when Nil is false).
	List []Value
	// Nil says that a read returned nil: the register's initial state, an
	// empty list, or, in an invocation, a read not done yet.
	Nil bool
	// IsList says that the read's value was a JSON array (list-append).
	IsList bool
}

// MarshalJSON writes m as the history has it: ["append",1,2].
func (m Mop) MarshalJSON() ([]byte, error) {
	b := []byte(`["` + m.F.String() + `",`)
	kb, _ := m.Key.MarshalJSON()
	b = append(append(b, kb...), ',')
	switch {
	case m.Nil:
		b = append(b, "null"...)
	case m.F == Read && m.IsList:
		b = appendList(b, m.List)
	default:
		vb, _ := m.Value.MarshalJSON()
		b = append(b, vb...)
	}
	return append(b, ']'), nil
}

func appendList(b []byte, l []Value) []byte {
	b = append(b, '[')
	for i, v := range l {
		if i > 0 {
			b = append(b, ',')
		}
		vb, _ := v.MarshalJSON()
		b = append(b, vb...)
	}
	return append(b, ']')
}

// Op is one line of a history: an invocation or a completion.
type Op struct {
	// Index is the op's index in the history: its "index" field, else its
	// position (0, 1, ...).
	Index   int64
	Process int64
	Type    OpType
	// F is the op's function, "txn" in these histories ("" when absent).
	F     string
	Value []Mop
	// Time is the op's "time" in nanoseconds, when HasTime.
	Time    int64
	HasTime bool
	// Line is where the op begins in the file it was read from (0 when it
	// was not read from a file).
	Line int
}

// MarshalJSON writes o as a JSON object in the form histories use, so
// that explanations quote transactions as they were written.
func (o *Op) MarshalJSON() ([]byte, error) {
	b := []byte(`{"index":`)
	b = strconv.AppendInt(b, o.Index, 10)
	if o.HasTime {
		b = append(b, `,"time":`...)
		b = strconv.AppendInt(b, o.Time, 10)
	}
	b = append(b, `,"type":"`+o.Type.String()+`","process":`...)
	b = strconv.AppendInt(b, o.Process, 10)
	if o.F != "" {
		fb, _ := json.Marshal(o.F)
		b = append(append(b, `,"f":`...), fb...)
	}
	b = append(b, `,"value":[`...)
	for i, m := range o.Value {
		if i > 0 {
			b = append(b, ',')
		}
		mb, _ := m.MarshalJSON()
		b = append(b, mb...)
	}
	return append(b, "]}"...), nil
}

// String is o as its JSON object.
func (o *Op) String() string {
	b, _ := o.MarshalJSON()
	return string(b)
}

// History is a sequence of operations in the order they happened (the
// order of the file).
type History struct {
	// Name is where the history was read from, for messages.
	Name string
	Ops  []Op
}
