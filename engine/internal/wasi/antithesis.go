package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"
)

// AssertEvent is not a property: an Assertion of this kind is an event
// the program names for the run's trace (the Antithesis SDK's
// lifecycle.SendEvent, or one of its diagnostics), with Message its name
// and Details its JSON. It reaches Process.Assert like a property, and
// never stops the guest.
const AssertEvent = 100

func init() {
	// event(name_ptr, name_len, details_ptr, details_len): the bridge that
	// seedfall's build overlay gives the Antithesis SDK
	// (engine/guest/compat/antithesis.go) calls it for
	// lifecycle.SendEvent(name, details); details is JSON or empty.
	seedfallFuncs = append(seedfallFuncs, hostFunc{name: "event", params: vt(i32, i32, i32, i32),
		fn: func(ctx context.Context, m api.Module, s []uint64) {
			p := proc(ctx)
			if p.Assert == nil {
				return
			}
			mem := m.Memory()
			name, ok1 := readText(mem, uint32(s[0]), uint32(s[1])) // cut to MaxPayload
			details, ok2 := readText(mem, uint32(s[2]), uint32(s[3]))
			if !ok1 || !ok2 {
				return
			}
			p.Assert(Assertion{Kind: AssertEvent, Cond: true, Message: name, Details: details})
		}})
}
