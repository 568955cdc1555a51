package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/internal/sched"
)

// Assertion is one evaluation of a sim property (sim.Always and its
// kin): Kind as the ABI numbers it (AssertAlways...), the condition, the
// property's message, the call site "file:line" and its details as JSON
// ("" for none).
type Assertion struct {
	Kind    int
	Cond    bool
	Message string
	Site    string
	Details string
}

// Property kinds of the assert ABI (see package sim).
const (
	AssertAlways = iota
	AssertAlwaysOrUnreachable
	AssertSometimes
	AssertReachable
	AssertUnreachable
)

func init() {
	// assert(kind, cond, msg_ptr, msg_len, site_ptr, site_len, details_ptr,
	// details_len): one evaluation of a property. When Process.Assert says
	// the evaluation failed the run, the guest never returns: it waits
	// until the run ends and is killed with the rest.
	seedfallFuncs = append(seedfallFuncs, hostFunc{name: "assert", params: vt(i32, i32, i32, i32, i32, i32, i32, i32),
		fn: func(ctx context.Context, m api.Module, s []uint64) {
			p := proc(ctx)
			if p.Assert == nil {
				return
			}
			mem := m.Memory()
			// Each text is cut to MaxPayload (limits.go): the run keeps
			// them, so a guest's 64 MB message must not become the host's.
			msg, ok1 := readText(mem, uint32(s[2]), uint32(s[3]))
			site, ok2 := readText(mem, uint32(s[4]), uint32(s[5]))
			details, ok3 := readText(mem, uint32(s[6]), uint32(s[7]))
			if !ok1 || !ok2 || !ok3 {
				return
			}
			a := Assertion{Kind: int(uint32(s[0])), Cond: uint32(s[1]) != 0, Message: msg, Site: site, Details: details}
			if p.Assert(a) {
				// Paused or not, it never runs again: the run ends.
				p.block(ctx, m, func() int64 { return sched.Never })
			}
		}})
}
