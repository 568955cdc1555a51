package guest

import (
	"fmt"
)

// CallsGlobal is the exported mutable i32 global that CountCalls adds. Every
// function entry of the guest (and, when asked, every loop iteration)
// decrements it; when it reaches zero the guest calls its sched_yield import
// and the host, seeing it at zero, may preempt the running goroutine and
// loads the next count. Its initial value is 1, so the host is asked for
// the first count at the guest's first function entry.
const CallsGlobal = "seedfall_calls"

// CountCalls returns a copy of a module that carries the loop budget
// (Instrument) which also counts calls in CallsGlobal: at every function
// entry, and with loops at every loop header too. Modules without a count
// pay nothing for it, which is why it is a separate step: the engine asks
// for it only for worlds that preempt. Entering a function again to resume
// it after a goroutine switch counts as an entry, as Go's wasm port enters
// it again.
func CountCalls(wasm []byte, loops bool) ([]byte, error) {
	if !Instrumented(wasm) {
		return nil, fmt.Errorf("%w: the module has no loop budget", errUnsupported)
	}
	if Counted(wasm) {
		return nil, fmt.Errorf("%w: the module already counts calls", errUnsupported)
	}
	return addCounter(wasm, CallsGlobal, 1, true, loops)
}

// Counted reports whether a module counts calls (CountCalls).
func Counted(wasm []byte) bool { return exportsGlobal(wasm, CallsGlobal) }
