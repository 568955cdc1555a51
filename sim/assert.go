package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
)

// Properties, in the style of Antithesis's Go SDK (same names, same
// meaning). A property is named by its message, which must be a constant
// string: seedfall counts every evaluation of the same (kind, message)
// together wherever it happens, and reports the call site of its first
// hit. details describe the state at the call; they are encoded as JSON
// with sorted keys for the trace and the failure reason.
//
// Inside seedfall a false Always or AlwaysOrUnreachable, or a reached
// Unreachable, fails the run at once (class "property"); Sometimes and
// Reachable never fail a run, but `seedfall run` reports across a sweep
// the ones that never held. Outside seedfall (a native build, or SEEDFALL
// unset) a property that fails prints one line to stderr, the first time
// for each property in the process, and the program goes on: production
// code must not die of an assertion. Sometimes and Reachable do nothing.
//
// Host ABI (the "seedfall" wasm import module):
//
//	assert(kind i32, cond i32, msg_ptr i32, msg_len i32, site_ptr i32, site_len i32, details_ptr i32, details_len i32)
//
// kind is 0 Always, 1 AlwaysOrUnreachable, 2 Sometimes, 3 Reachable,
// 4 Unreachable; site is "file:line"; details is JSON or empty. The call
// does not return when it fails the run.

// Kinds of property, as the host ABI numbers them.
const (
	kindAlways = iota
	kindAlwaysOrUnreachable
	kindSometimes
	kindReachable
	kindUnreachable
)

// Always asserts that cond is true every time this line is reached, and
// that it is reached at least once across a sweep.
func Always(cond bool, message string, details map[string]any) {
	assert(kindAlways, cond, message, details)
}

// AlwaysOrUnreachable asserts that cond is true every time this line is
// reached; never reaching it is fine.
func AlwaysOrUnreachable(cond bool, message string, details map[string]any) {
	assert(kindAlwaysOrUnreachable, cond, message, details)
}

// Sometimes asserts that cond is true at least once across a sweep: the
// tests reach the interesting case (a resend, a failover, a full disk).
// It never fails a run.
func Sometimes(cond bool, message string, details map[string]any) {
	assert(kindSometimes, cond, message, details)
}

// Reachable asserts that this line is reached at least once across a
// sweep. It never fails a run.
func Reachable(message string, details map[string]any) {
	assert(kindReachable, true, message, details)
}

// Unreachable asserts that this line is never reached: reaching it fails
// the run.
func Unreachable(message string, details map[string]any) {
	assert(kindUnreachable, true, message, details)
}

// assert names its caller's caller as the call site: -trimpath builds make
// the name the same on every machine.
func assert(kind int, cond bool, message string, details map[string]any) {
	site := "?"
	if _, file, line, ok := runtime.Caller(2); ok {
		site = file + ":" + strconv.Itoa(line)
	}
	if Enabled() && assertHost(kind, cond, message, site, encodeDetails(details)) {
		return
	}
	if failed(kind, cond) {
		assertLocal(kind, message, site, details)
	}
}

// failed reports whether an evaluation breaks its property in this run.
func failed(kind int, cond bool) bool {
	switch kind {
	case kindAlways, kindAlwaysOrUnreachable:
		return !cond
	case kindUnreachable:
		return true
	}
	return false
}

// Outside seedfall: one line per failing property, to stderr.
var (
	localMu   sync.Mutex
	localSeen           = map[string]bool{}
	localOut  io.Writer = os.Stderr
)

func assertLocal(kind int, message, site string, details map[string]any) {
	localMu.Lock()
	defer localMu.Unlock()
	key := strconv.Itoa(kind) + "\x00" + message
	if localSeen[key] {
		return
	}
	localSeen[key] = true
	what := "failed"
	if kind == kindUnreachable {
		what = "was reached"
	}
	line := fmt.Sprintf("sim: property %q %s at %s", message, what, site)
	if d := encodeDetails(details); d != "" {
		line += ": details " + d
	}
	fmt.Fprintln(localOut, line)
}

// encodeDetails writes details as a JSON object with sorted keys; a value
// that JSON cannot encode (a channel, a NaN) is written as its %v string
// instead of losing the others. No details encode as "".
func encodeDetails(details map[string]any) string {
	if len(details) == 0 {
		return ""
	}
	keys := make([]string, 0, len(details))
	for k := range details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		vb, err := json.Marshal(details[k])
		if err != nil {
			vb, _ = json.Marshal(fmt.Sprintf("%v", details[k]))
		}
		b = append(b, vb...)
	}
	return string(append(b, '}'))
}
