// Package history owns the operations programs record with sim.Put, sim.Get
// and sim.Invoke, the models they are checked against, and the
// linearizability check itself (porcupine, one object at a time); and the
// transactions they record with sim.Txn, checked for isolation anomalies
// with engine/elle (txn.go).
package history

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Status is where an operation stands.
type Status int

const (
	Open   Status = iota // invoked, never finished: its outcome is unknown
	Ok                   // finished with an answer
	Failed               // definitely did not take effect
)

// Op is one recorded operation.
type Op struct {
	Client string // the program incarnation that made it: "client#1"
	Model  string // "kv", "counter", "counter:NAME"
	Object string // what it acts on, for messages: `key "k3"`, `counter "hits"`
	Kind   string // kv: "put" or "get"; counter: "add" or "read"
	Key    string // kv: the key
	Value  string // put: the value; get: the value read
	Found  bool   // get: the key was there
	N      int64  // add: the amount; read: the value read
	Status Status
	// CallNs and ReturnNs are virtual times, for people. Call and Return
	// order every invocation and completion of the run as they happened:
	// two host calls at the same virtual time are still one after the
	// other, so a put that completed before a get started precedes it.
	CallNs, ReturnNs int64
	Call, Return     int64
	client           int // zero-based client id, in order of first operation
}

// History is the operations and transactions of one run, in order of
// invocation.
type History struct {
	ops     []*Op
	clients map[string]int
	seq     int64
	// ids are what an id Invoke returned stands for: an operation or a
	// transaction.
	ids []entry

	txns       []*Txn
	events     []txnEvent              // the transactions' invocations and completions, in order
	procs      map[string]*clientProcs // each client's Elle processes
	procClient []string                // the client of each process
	slots      map[*Txn]txnSlot        // the process of each transaction in flight
	written    map[dupKey]*Txn         // who first wrote each value to each key
}

// entry is an operation or a transaction.
type entry struct {
	op  *Op
	txn *Txn
}

// New returns an empty history.
func New() *History {
	return &History{clients: map[string]int{}, procs: map[string]*clientProcs{}, slots: map[*Txn]txnSlot{}, written: map[dupKey]*Txn{}}
}

// Len is the number of operations recorded.
func (h *History) Len() int { return len(h.ops) }

// Ops returns the operations in order of invocation.
func (h *History) Ops() []*Op { return h.ops }

// Invoke records an invocation by client at virtual time now: fields are the
// model and its input (sim's encoding), or a transaction's workload and its
// micro-operations. It returns the operation's id, at least 1.
func (h *History) Invoke(client string, now int64, fields []string) (int64, error) {
	if IsTxn(fields) {
		t, err := h.invokeTxn(client, now, fields)
		if err != nil {
			return 0, err
		}
		h.ids = append(h.ids, entry{txn: t})
		return int64(len(h.ids)), nil
	}
	op, err := parseInvoke(fields)
	if err != nil {
		return 0, err
	}
	id, ok := h.clients[client]
	if !ok {
		id = len(h.clients)
		h.clients[client] = id
	}
	h.seq++
	op.Client, op.client, op.CallNs, op.Call = client, id, now, h.seq
	h.ops = append(h.ops, op)
	h.ids = append(h.ids, entry{op: op})
	return int64(len(h.ids)), nil
}

// IsTxn reports whether fields, as Invoke takes them, are a transaction's.
func IsTxn(fields []string) bool {
	return len(fields) > 0 && (fields[0] == ListAppend || fields[0] == RWRegister)
}

// IsTxn reports whether id is a transaction's.
func (h *History) IsTxn(id int64) bool {
	return id >= 1 && id <= int64(len(h.ids)) && h.ids[id-1].txn != nil
}

// Return records the outcome of operation id at virtual time now: fields
// are "ok" or "fail", then the output.
func (h *History) Return(id int64, now int64, fields []string) error {
	if id < 1 || id > int64(len(h.ids)) {
		return fmt.Errorf("no operation %d was recorded", id)
	}
	if t := h.ids[id-1].txn; t != nil {
		return h.returnTxn(t, now, fields)
	}
	op := h.ids[id-1].op
	if op.Status != Open {
		return fmt.Errorf("%s finished twice", op.describe())
	}
	if len(fields) == 0 {
		return fmt.Errorf("%s finished without a status", op.describe())
	}
	switch fields[0] {
	case "fail":
		op.Status = Failed
	case "ok":
		if err := op.parseOutput(fields[1:]); err != nil {
			return err
		}
		op.Status = Ok
	default:
		return fmt.Errorf("%s finished with status %q, want ok or fail", op.describe(), fields[0])
	}
	h.seq++
	op.ReturnNs, op.Return = now, h.seq
	return nil
}

// InFlight counts client's operations that are still open.
func (h *History) InFlight(client string) int {
	n := 0
	for _, op := range h.ops {
		if op.Client == client && op.Status == Open {
			n++
		}
	}
	return n
}

func parseInvoke(f []string) (*Op, error) {
	if len(f) == 0 {
		return nil, fmt.Errorf("an operation without a model")
	}
	model, name, _ := strings.Cut(f[0], ":")
	switch {
	case f[0] == "kv" && len(f) == 4 && f[1] == "put":
		return &Op{Model: "kv", Object: "key " + strconv.Quote(f[2]), Kind: "put", Key: f[2], Value: f[3]}, nil
	case f[0] == "kv" && len(f) == 3 && f[1] == "get":
		return &Op{Model: "kv", Object: "key " + strconv.Quote(f[2]), Kind: "get", Key: f[2]}, nil
	case model == "counter" && len(f) == 2:
		obj := "counter"
		if name != "" {
			obj += " " + strconv.Quote(name)
		}
		if f[1] == "read" {
			return &Op{Model: f[0], Object: obj, Kind: "read"}, nil
		}
		if s, ok := strings.CutPrefix(f[1], "add "); ok {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return &Op{Model: f[0], Object: obj, Kind: "add", N: n}, nil
			}
		}
		return nil, fmt.Errorf("counter input %q: want \"add N\" or \"read\"", f[1])
	}
	return nil, fmt.Errorf("unknown operation %q (models: kv through sim.Put and sim.Get, counter through sim.Invoke, list-append and rw-register through sim.Txn)", strings.Join(f, " "))
}

func (op *Op) parseOutput(f []string) error {
	switch op.Kind {
	case "get":
		if len(f) != 2 {
			return fmt.Errorf("%s returned %d fields, want a value and found", op.describe(), len(f))
		}
		op.Value, op.Found = f[0], f[1] == "true"
	case "read":
		if len(f) != 1 {
			return fmt.Errorf("%s returned %d fields, want the value read", op.describe(), len(f))
		}
		n, err := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		if err != nil {
			return fmt.Errorf("%s returned %q: a counter's read returns a decimal number", op.describe(), f[0])
		}
		op.N = n
	}
	return nil
}

// partition is the object an operation acts on, as a sortable key.
func (op *Op) partition() string { return op.Model + "\x00" + op.Key }

// isWrite reports whether the operation changes the object: an open write
// may have taken effect, an open read tells nothing.
func (op *Op) isWrite() bool { return op.Kind == "put" || op.Kind == "add" }

// String describes the operation with its outcome, for messages.
func (op *Op) String() string {
	switch op.Kind {
	case "put":
		return "put " + strconv.Quote(op.Value)
	case "get":
		if op.Status == Ok && !op.Found {
			return "get found nothing"
		}
		if op.Status == Ok {
			return "get returned " + strconv.Quote(op.Value)
		}
		return "get"
	case "add":
		return fmt.Sprintf("add %d", op.N)
	}
	if op.Status == Ok {
		return fmt.Sprintf("read returned %d", op.N)
	}
	return "read"
}

// when says who made the operation and when: "client#1 at 1.2s-1.3s",
// "client#1 from 1.2s, never finished".
func (op *Op) when() string {
	call, ret := micros(op.CallNs), micros(op.ReturnNs)
	switch {
	case op.Status == Open:
		return fmt.Sprintf("%s from %v, never finished", op.Client, call)
	case call == ret:
		return fmt.Sprintf("%s at %v", op.Client, call)
	}
	return fmt.Sprintf("%s at %v-%v", op.Client, call, ret)
}

// micros rounds a virtual time to the microsecond: enough to tell operations
// apart, short enough to read.
func micros(ns int64) time.Duration { return time.Duration(ns).Round(time.Microsecond) }

func (op *Op) describe() string { return fmt.Sprintf("%s %s of %s", op.Client, op.Kind, op.Object) }

// checked are the operations of one object the check uses: failed ones
// never took effect and open reads tell nothing; open writes stay, and
// may take effect at any time after they started.
type object struct {
	name string // Op.Object
	ops  []*Op
}

func (h *History) objects() []object {
	byKey := map[string]*object{}
	var keys []string
	for _, op := range h.ops {
		if op.Status == Failed || (op.Status == Open && !op.isWrite()) {
			continue
		}
		k := op.partition()
		o := byKey[k]
		if o == nil {
			o = &object{name: op.Object}
			byKey[k] = o
			keys = append(keys, k)
		}
		o.ops = append(o.ops, op)
	}
	slices.Sort(keys)
	out := make([]object, len(keys))
	for i, k := range keys {
		out[i] = *byKey[k]
	}
	return out
}

// returnSeq is when an operation completed, in the check's order: never,
// for an open write.
func (op *Op) returnSeq() int64 {
	if op.Status == Open {
		return math.MaxInt64
	}
	return op.Return
}
