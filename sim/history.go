package sim

import (
	"strconv"
	"strings"
)

// Recorded operations. A client records each operation it makes on the
// system under test: the invocation when it sends the request, the outcome
// when the answer comes back. When the run is about to pass, seedfall checks
// that the recorded history is linearizable: that some order of the
// operations, each taking effect at one instant between its invocation and
// its completion, explains every answer.
//
// Models (what a correct system does, one operation at a time):
//
//   - "kv": a key-value store, through Put and Get. Each key is a register
//     of its own, checked on its own.
//   - "counter": a counter starting at 0, through Invoke("counter", "add N")
//     (N may be negative; the output is ignored) and Invoke("counter",
//     "read") whose Return is the value read, in decimal. A model name
//     "counter:NAME" is a separate counter.
//
// Transactions of several keys are recorded with Txn instead (txn.go), and
// checked for isolation anomalies rather than linearizability.
//
// An operation that is never finished stays open: a write that may have
// taken effect at any time after it started, a read that tells nothing.
// That is what a client that crashed, or gave up waiting, knows.
//
// Outside seedfall every call records nothing.
//
// Host ABI: op_invoke(buf_ptr i32, buf_len i32) -> id i64 records an
// invocation whose fields (model, then the input) are netstrings in guest
// memory; op_return(id i64, buf_ptr i32, buf_len i32) records its outcome
// ("ok" or "fail", then the output).

// PutOp is a Put in flight.
type PutOp struct{ id int64 }

// GetOp is a Get in flight.
type GetOp struct{ id int64 }

// Op is an operation of another model (Invoke) in flight.
type Op struct{ id int64 }

// Put records the invocation of a write of value to key, now.
func Put(key, value string) *PutOp { return &PutOp{invoke("kv", "put", key, value)} }

// Ok records that the write took effect.
func (o *PutOp) Ok() { finish(&o.id, "ok") }

// Fail records that the write definitely did not take effect (the server
// refused it). When the outcome is unknown (a timeout), leave the op open.
func (o *PutOp) Fail() { finish(&o.id, "fail") }

// Get records the invocation of a read of key, now.
func Get(key string) *GetOp { return &GetOp{invoke("kv", "get", key)} }

// Ok records what the read returned: the value, and whether the key was
// there at all.
func (o *GetOp) Ok(value string, found bool) {
	if !found {
		value = ""
	}
	finish(&o.id, "ok", value, strconv.FormatBool(found))
}

// Fail records that the read returned no answer worth checking (an error).
// A read that failed constrains nothing; it is the same as leaving it open.
func (o *GetOp) Fail() { finish(&o.id, "fail") }

// Invoke records the invocation of an operation of model with input, now.
// It panics on a model or input it does not know (see the models above).
func Invoke(model, input string) *Op {
	if err := checkInvoke(model, input); err != nil {
		panic("sim.Invoke: " + err.Error())
	}
	return &Op{invoke(model, input)}
}

// Return records the operation's output (the value read, for a counter's
// read; anything for an add).
func (o *Op) Return(output string) { finish(&o.id, "ok", output) }

// Fail records that the operation definitely did not take effect.
func (o *Op) Fail() { finish(&o.id, "fail") }

// checkInvoke says what is wrong with an Invoke, if anything.
func checkInvoke(model, input string) error {
	name, _, _ := strings.Cut(model, ":")
	if name != "counter" {
		return &invokeError{"unknown model " + strconv.Quote(model) + ": use \"counter\" (or \"counter:NAME\"), or Put and Get for \"kv\""}
	}
	if input == "read" {
		return nil
	}
	if n, ok := strings.CutPrefix(input, "add "); ok {
		if _, err := strconv.ParseInt(n, 10, 64); err == nil {
			return nil
		}
	}
	return &invokeError{"counter input " + strconv.Quote(input) + ": want \"add N\" or \"read\""}
}

type invokeError struct{ s string }

func (e *invokeError) Error() string { return e.s }

// invoke records an invocation; 0 means not recorded (outside seedfall).
func invoke(fields ...string) int64 {
	if !Enabled() {
		return 0
	}
	return opInvoke(encodeFields(fields))
}

// finish records an outcome once: a second Ok or Fail on the same op is a
// bug in the client, and panics so that it is found.
func finish(id *int64, fields ...string) {
	if *id < 0 {
		panic("sim: operation finished twice")
	}
	if *id > 0 {
		opReturn(*id, encodeFields(fields))
	}
	*id = -1
}

// encodeFields joins fields as netstrings ("3:put,1:k,1:v,"), which any
// byte string survives.
func encodeFields(fields []string) []byte {
	var b []byte
	for _, f := range fields {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
		b = append(b, ',')
	}
	return b
}
