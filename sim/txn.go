package sim

import (
	"strconv"
	"strings"
)

// Transactions. A client of a transactional store records each transaction
// it runs with Txn: its micro-operations when it begins, then, once the
// store answered, what each read returned (Ok), that it certainly did not
// commit (Fail), or nothing when the outcome is unknown. When the run is
// about to pass, seedfall checks the transactions the way Jepsen's Elle
// does: it infers which transaction must have come before which from what
// they read, and fails the run (class "isolation") on a cycle or another
// anomaly that the world's "consistency" models forbid (strict-serializable
// unless the world says otherwise).
//
// A transaction belongs to one of Elle's two workloads, whose keys and
// values are integers:
//
//   - list-append: Append(key, v) appends v to the list at key, and
//     ReadList(key) reads the whole list, whose result is List(...).
//   - rw-register: Write(key, v) sets the register at key to v, and
//     Read(key) reads it, whose result is Value(v), or None() for a
//     register never written.
//
// The check infers the order of writes from the values, so every value
// appended (or written) to a key must be unique for that key across the
// run: draw them from a counter. A transaction mixes only one workload's
// micro-operations (Txn panics otherwise); both workloads may be used in
// one run, and are checked separately.
//
// Host ABI: a transaction goes through op_invoke and op_return like Put.
// The invocation's fields are the workload ("list-append" or
// "rw-register"), then the micro-operations, "append K V", "r K" or "w K
// V", joined by ";", the text cut into fields of at most 64 KiB that the
// host concatenates again. The outcome's fields are "fail", or "ok" then
// the reads' results in order, packed the same way: a list as its
// elements separated by spaces ("" for an empty one), a register's value,
// or "nil".

// Mop is one micro-operation of a transaction: make it with Append,
// ReadList, Write or Read.
type Mop struct {
	kind       mopKind
	key, value int
}

type mopKind uint8

const (
	mopAppend mopKind = iota + 1
	mopReadList
	mopWrite
	mopRead
)

// Append appends value to the list at key (list-append).
func Append(key, value int) Mop { return Mop{mopAppend, key, value} }

// ReadList reads the list at key (list-append); its result is a List.
func ReadList(key int) Mop { return Mop{kind: mopReadList, key: key} }

// Write sets the register at key to value (rw-register).
func Write(key, value int) Mop { return Mop{mopWrite, key, value} }

// Read reads the register at key (rw-register); its result is a Value, or
// None.
func Read(key int) Mop { return Mop{kind: mopRead, key: key} }

// workload is the Elle workload the micro-operation belongs to.
func (m Mop) workload() string {
	switch m.kind {
	case mopAppend, mopReadList:
		return "list-append"
	case mopWrite, mopRead:
		return "rw-register"
	}
	return ""
}

func (m Mop) isRead() bool { return m.kind == mopReadList || m.kind == mopRead }

// String is the call that made m: "Append(3, 7)", "Read(4)".
func (m Mop) String() string {
	k := strconv.Itoa(m.key)
	switch m.kind {
	case mopAppend:
		return "Append(" + k + ", " + strconv.Itoa(m.value) + ")"
	case mopReadList:
		return "ReadList(" + k + ")"
	case mopWrite:
		return "Write(" + k + ", " + strconv.Itoa(m.value) + ")"
	case mopRead:
		return "Read(" + k + ")"
	}
	return "Mop{}"
}

// encode is m as the host reads it: "append 3 7", "r 4", "w 1 2".
func (m Mop) encode(b []byte) []byte {
	switch m.kind {
	case mopAppend:
		b = append(b, "append "...)
	case mopWrite:
		b = append(b, "w "...)
	default:
		b = append(b, "r "...)
	}
	b = strconv.AppendInt(b, int64(m.key), 10)
	if !m.isRead() {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(m.value), 10)
	}
	return b
}

// ReadResult is what one read of a transaction returned: a List for a
// ReadList, a Value or None for a Read.
type ReadResult struct {
	kind  resultKind
	list  []int
	value int
}

type resultKind uint8

const (
	resultList resultKind = iota + 1
	resultValue
	resultNone
)

// List is the result of a ReadList: the list's elements in order (none for
// an empty or missing list).
func List(values ...int) ReadResult {
	return ReadResult{kind: resultList, list: append([]int(nil), values...)}
}

// Value is the result of a Read that found v.
func Value(v int) ReadResult { return ReadResult{kind: resultValue, value: v} }

// None is the result of a Read of a register that was never written.
func None() ReadResult { return ReadResult{kind: resultNone} }

func (r ReadResult) String() string {
	switch r.kind {
	case resultList:
		s := make([]string, len(r.list))
		for i, v := range r.list {
			s[i] = strconv.Itoa(v)
		}
		return "List(" + strings.Join(s, ", ") + ")"
	case resultValue:
		return "Value(" + strconv.Itoa(r.value) + ")"
	case resultNone:
		return "None()"
	}
	return "ReadResult{}"
}

// encode is r as the host reads it: "1 2 7", "" (an empty list), "5",
// "nil".
func (r ReadResult) encode(b []byte) []byte {
	switch r.kind {
	case resultList:
		for i, v := range r.list {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendInt(b, int64(v), 10)
		}
	case resultValue:
		b = strconv.AppendInt(b, int64(r.value), 10)
	default:
		b = append(b, "nil"...)
	}
	return b
}

// TxnOp is a transaction in flight.
type TxnOp struct {
	id   int64
	mops []Mop
}

// Txn records the beginning of a transaction of mops, now: call it before
// the first request of the transaction goes out. It panics, natively too,
// on a transaction without micro-operations or one that mixes list-append
// (Append, ReadList) and rw-register (Write, Read) ones.
func Txn(mops ...Mop) *TxnOp {
	if err := checkTxn(mops); err != nil {
		panic("sim.Txn: " + err.Error())
	}
	t := &TxnOp{mops: append([]Mop(nil), mops...)}
	if Enabled() {
		fields, err := packFields(mops[0].workload(), len(mops), func(i int, b []byte) []byte { return mops[i].encode(b) })
		if err != nil {
			panic("sim.Txn: " + err.Error())
		}
		t.id = opInvoke(encodeFields(fields))
	}
	return t
}

// Ok records that the transaction committed, with what its reads returned,
// one result for each ReadList or Read in the order of the micro-operations:
// List(...) for a ReadList, Value(v) or None() for a Read. It panics,
// natively too, when the results do not match the reads.
func (t *TxnOp) Ok(reads ...ReadResult) {
	if t.id < 0 {
		panic("sim: operation finished twice")
	}
	if err := checkReads(t.mops, reads); err != nil {
		panic("sim: (*TxnOp).Ok: " + err.Error())
	}
	if t.id > 0 {
		fields, err := packFields("ok", len(reads), func(i int, b []byte) []byte { return reads[i].encode(b) })
		if err != nil {
			panic("sim: (*TxnOp).Ok: " + err.Error())
		}
		opReturn(t.id, encodeFields(fields))
	}
	t.id = -1
}

// Fail records that the transaction certainly did not commit (the store
// aborted it, or refused it). When the outcome is unknown (a timeout, a
// connection lost while committing), leave the transaction open: it may or
// may not have taken effect.
func (t *TxnOp) Fail() { finish(&t.id, "fail") }

// checkTxn says what is wrong with a transaction's micro-operations, if
// anything.
func checkTxn(mops []Mop) error {
	if len(mops) == 0 {
		return &invokeError{"a transaction without micro-operations: give Append and ReadList, or Write and Read"}
	}
	for i, m := range mops {
		if m.kind == 0 {
			return &invokeError{"micro-operation " + strconv.Itoa(i) + " is a zero Mop: make it with Append, ReadList, Write or Read"}
		}
		if w := m.workload(); w != mops[0].workload() {
			return &invokeError{mops[0].String() + " is " + mops[0].workload() + " and " + m.String() + " is " + w +
				": a transaction mixes only one workload's micro-operations (Append and ReadList, or Write and Read)"}
		}
	}
	return nil
}

// checkReads says what is wrong with a transaction's results, if anything.
func checkReads(mops []Mop, reads []ReadResult) error {
	var rs []Mop
	for _, m := range mops {
		if m.isRead() {
			rs = append(rs, m)
		}
	}
	if len(reads) != len(rs) {
		return &invokeError{"the transaction has " + plural(len(rs), "read") + " and Ok got " + plural(len(reads), "result") +
			": give one result per ReadList or Read, in their order"}
	}
	for i, m := range rs {
		r := reads[i]
		switch {
		case m.kind == mopReadList && r.kind != resultList:
			return &invokeError{"result " + strconv.Itoa(i) + " is " + r.String() + " for " + m.String() + ", which returns a list: give List(...)"}
		case m.kind == mopRead && r.kind != resultValue && r.kind != resultNone:
			return &invokeError{"result " + strconv.Itoa(i) + " is " + r.String() + " for " + m.String() + ", which returns a register: give Value(v) or None()"}
		}
	}
	return nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// txnChunk is the most bytes one field of micro-operations or results
// holds: the host keeps up to 64 KiB of a field and cuts the rest.
// txnFields is how many such fields a record holds besides its first,
// under the host's limit of 64 fields a record.
const (
	txnChunk  = 64 << 10
	txnFields = 63
)

// packFields is first, then the n items (each encoded by enc) joined by
// ";" and cut into fields of at most txnChunk bytes, which the host
// concatenates again: at least one field when n > 0, so that a lone empty
// list is still there.
func packFields(first string, n int, enc func(i int, b []byte) []byte) ([]string, error) {
	fields := []string{first}
	if n == 0 {
		return fields, nil
	}
	var b []byte
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ';')
		}
		b = enc(i, b)
	}
	if len(b) > txnFields*txnChunk {
		return nil, &invokeError{"the transaction takes " + strconv.Itoa(len(b)) + " bytes to record, more than the " +
			strconv.Itoa(txnFields*txnChunk) + " seedfall takes: use fewer micro-operations, or read shorter lists"}
	}
	for len(b) > txnChunk {
		fields = append(fields, string(b[:txnChunk]))
		b = b[txnChunk:]
	}
	return append(fields, string(b)), nil
}
