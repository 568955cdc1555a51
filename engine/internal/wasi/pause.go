package wasi

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/guest"
)

// Guests that pause (issue 15). A guest made by guest.HostPauses does not
// wait inside a host call: where the host would give the baton back in the
// middle of a call (paying its CPU debt, in poll_oneoff, in a slow fsync,
// at a yield, after a failed Always), it records what the guest waits for,
// sets Go's PAUSE global and returns; the guest unwinds every WebAssembly
// frame and the export the host called returns. Run then waits on the
// scheduler, outside any guest call, and resumes the guest, which issues
// the same call again: the host finds there what it decided the first time
// (the poll's deadline, the fsync in flight, the yield done) and goes on as
// if the call had blocked. A run that pauses is the run that blocks, step
// for step: the tests compare their digests (NoPause).
//
// While it waits, a paused guest is its memory, its globals and the
// Process: nothing of it is on a goroutine's stack.

// pauser holds what pausing needs of an instance: Go's globals and the
// window HostPauses added.
type pauser struct {
	sp, pause, lo, hi, loopSP, calls api.MutableGlobal
	resume                           api.Function
}

// waiting is what a paused guest waits for, and the window of frames its
// resume enters again.
type waiting struct {
	readyAt func() int64
	lo, hi  uint32
}

// reissue is what a host call decided before it paused, for the call the
// guest issues again after the resume.
type reissue struct {
	yielded bool // sched_yield: the yield is done
	// poll_oneoff: its subscriptions and the deadline their timeouts gave
	// at the first issue (a relative timeout counts from then).
	poll         []byte
	pollDeadline int64
	sync         *waitOp // fd_sync and fd_datasync: the fsync in flight
}

// canPause reports whether the guest in m can pause here, finding what it
// needs on first use.
func (p *Process) canPause(m api.Module) bool {
	if p.NoPause || p.Boot != nil || p.Proc == nil {
		return false
	}
	if p.pz == nil {
		p.pz = &pauser{}
		pz := p.pz
		g := func(name string) api.MutableGlobal {
			mg, _ := m.ExportedGlobal(name).(api.MutableGlobal)
			return mg
		}
		pz.sp, pz.pause = g(guest.GoGlobals[0]), g(guest.GoGlobals[7])
		pz.lo, pz.hi, pz.loopSP, pz.calls = g(guest.WindowLoGlobal), g(guest.WindowHiGlobal), g(guest.LoopSPGlobal), g(guest.CallsGlobal)
		pz.resume = m.ExportedFunction(guest.ResumeExport)
		if pz.sp == nil || pz.pause == nil || pz.lo == nil || pz.hi == nil || pz.loopSP == nil || pz.calls == nil || pz.resume == nil {
			pz.resume = nil
		}
	}
	return p.pz.resume != nil
}

// pauseFor pauses the guest, which calls this host function from a
// wrapper, until readyAt's time (as sched.Proc.Block), if it can pause;
// the host function must then return at once. It returns false, having
// done nothing, if the guest cannot pause.
func (p *Process) pauseFor(m api.Module, readyAt func() int64) bool {
	if !p.canPause(m) {
		return false
	}
	pz := p.pz
	w := &waiting{readyAt: readyAt, lo: uint32(pz.sp.Get()), hi: uint32(pz.loopSP.Get())}
	if uint32(pz.lo.Get()) != 0 {
		// Frames an earlier pause unwound are still to be entered again.
		w.hi = uint32(pz.hi.Get())
	}
	p.waiting = w
	pz.pause.Set(1)
	p.Pauses++
	return true
}

// Parked returns the instance of a guest that is paused and waiting in
// Run, and whether it is.
func (p *Process) Parked() (api.Module, bool) { return p.parked, p.parked != nil }

// Run takes a guest on from the return of the export that started or
// resumed it, with that call's error: while the guest is paused, it waits
// on the scheduler for what the guest waits for and resumes it. It returns
// once the guest has exited, trapped or been killed, with the instance it
// ended in and the error the guest's _start would have ended with had it
// blocked in its host calls.
func (p *Process) Run(ctx context.Context, m api.Module, err error) (api.Module, error) {
	for err == nil && p.waiting != nil {
		w := p.waiting
		p.waiting = nil
		p.parked = m
		killed := p.Proc.Block(w.readyAt)
		p.parked = nil
		if killed {
			p.killed = true
			if p.Play != nil {
				// A fork past its moment dies as its guest's copy, not
				// as the tape, which goes on as the checkpointed run
				// went: its mappings and its last global are the copy's.
				to, serr := p.switchFromTape(ctx)
				if serr != nil {
					return m, serr
				}
				if to != nil {
					m = to
				}
			}
			p.detachMappings() // played back too: it takes in the guest's stores
			if m != nil {
				p.close(ctx, m, ExitKilled)
			}
			return m, sys.NewExitError(ExitKilled)
		}
		if p.Play != nil {
			to, serr := p.switchFromTape(ctx)
			if serr != nil {
				return m, serr
			}
			if to == nil {
				err = p.playUntilPause(ctx)
				continue
			}
			m = to
		}
		if p.Relocate != nil && len(p.maps) == 0 {
			to, rerr := p.Relocate(ctx, m)
			if rerr != nil {
				return m, rerr
			}
			if to != m {
				_ = m.Close(ctx)
				m = to
				p.rebind(m)
			}
		}
		pz := p.pz
		pz.lo.Set(uint64(w.lo))
		pz.hi.Set(uint64(w.hi))
		// Entering wasm_pc_f_loop counts a call; a guest that blocked
		// would not have made it.
		pz.calls.Set(uint64(uint32(pz.calls.Get()) + 1))
		_, err = pz.resume.Call(ctx)
	}
	return m, err
}

// rebind points the handles the process keeps into its instance at m, a
// copy of the instance the guest paused in.
func (p *Process) rebind(m api.Module) {
	p.pz, p.inst = nil, m
	if !p.canPause(m) {
		panic("seedfall: a paused guest was moved into an instance that cannot pause")
	}
	if c := &p.cpu; c.counter != nil {
		c.counter, _ = m.ExportedGlobal(guest.CallsGlobal).(api.MutableGlobal)
	}
}

// takeReissue returns what the host call that paused decided, once.
func (p *Process) takeReissue() *reissue {
	r := p.again
	p.again = nil
	return r
}

// samePoll checks that a poll_oneoff issued again asks what the first did.
func samePoll(r *reissue, raw []byte) {
	if !bytes.Equal(r.poll, raw) {
		panic(fmt.Sprintf("seedfall: poll_oneoff issued again after a pause with other subscriptions (%d bytes, were %d)", len(raw), len(r.poll)))
	}
}
