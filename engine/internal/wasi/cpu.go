package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/internal/rng"
)

// CPU makes a guest's work take virtual time. A guest built with
// guest.CountCalls counts down a global at every function entry (and loop
// iteration with preempt.loops); every host call reads how far it went
// since the last one and charges the node NsPerCall for each count, scaled
// by the node's slowdown and by a jitter drawn for each stretch of work.
// The charge is a debt: the clock the guest reads already includes it, and
// the node pays it (gives the baton back until its clock has caught up)
// before any host call that others could see, before it waits, and
// whenever it reaches Quantum.
type CPU struct {
	NsPerCall float64    // virtual ns per counted call, above 0
	Jitter    float64    // each stretch costs NsPerCall times 1-Jitter to 1+Jitter
	Stream    rng.Stream // draws the jitter, one draw per stretch
	Quantum   int64      // the largest debt a node runs on with, ns
}

// cpuState is a process's running account.
type cpuState struct {
	counter api.MutableGlobal // guest.CallsGlobal, nil until found
	seen    uint32            // the counter's value at the last look
	debt    float64           // virtual ns of work not yet paid
	factor  float64           // the jitter of the stretch of work in progress
	// paidFrom and paidTo are the virtual times the last payment ran
	// between, until noteArrivals has looked at them (paidTo 0: nothing
	// to look at).
	paidFrom, paidTo int64
}

// account charges the calls the guest counted since the last host call.
func (p *Process) account(m api.Module) {
	c := &p.cpu
	if c.counter == nil {
		g, ok := m.ExportedGlobal(guest.CallsGlobal).(api.MutableGlobal)
		if !ok {
			p.CPU = nil // not a counting module: CPU stays free
			return
		}
		c.counter, c.seen, c.factor = g, 1, p.drawFactor()
	}
	cur := uint32(c.counter.Get())
	if cur >= c.seen {
		return
	}
	n := c.seen - cur
	c.seen = cur
	rate := p.CPU.NsPerCall * c.factor
	if p.Slow != nil {
		if f := p.Slow(); f > 1 {
			rate *= f
		}
	}
	c.debt += float64(n) * rate
}

// counterLoaded tells the account that the host loaded a new count.
func (p *Process) counterLoaded() {
	if c := &p.cpu; c.counter != nil {
		c.seen = uint32(c.counter.Get())
	}
}

func (p *Process) drawFactor() float64 {
	if j := p.CPU.Jitter; j > 0 {
		return 1 + j*(2*p.CPU.Stream.Float64()-1)
	}
	return 1
}

// cpuDebt is the whole nanoseconds of work the node has not paid yet: what
// its clocks run ahead of the world's.
func (p *Process) cpuDebt() int64 {
	if p.CPU == nil {
		return 0
	}
	return int64(p.cpu.debt)
}

// payCPU gives the baton back until the world's clock has caught up with
// the node's work, if the debt is at least min nanoseconds (and at least 1).
// Meanwhile other nodes run, messages arrive and timers fire: the node was
// busy computing. When nothing else can happen meanwhile the clock just
// moves on; otherwise, if pausable, the guest pauses (pause.go) and payCPU
// returns true: the call is issued again once the debt is paid.
func (p *Process) payCPU(ctx context.Context, m api.Module, min int64, pausable bool) (paused bool) {
	c := &p.cpu
	d := int64(c.debt)
	if d < max(min, 1) {
		return false
	}
	c.debt -= float64(d)
	c.factor = p.drawFactor()
	until := p.Now() + d
	if p.Arrived != nil && p.Net != nil {
		c.paidFrom, c.paidTo = p.Now(), until
	}
	if pausable && p.canPause(m) {
		if p.Proc.SleepQuietly(until) {
			return false
		}
		return p.pauseFor(m, func() int64 { return until })
	}
	if p.Proc.Sleep(until) {
		p.killed = true
		kill(ctx, m)
	}
	return false
}

// noteArrivals tells Arrived, once the node has paid for its work, whether
// a segment or a connection reached its sockets while it computed: on
// Linux another core would take that request up at once. A payment that
// paused the guest is looked at when the guest issues its call again.
func (p *Process) noteArrivals(m api.Module) {
	c := &p.cpu
	if c.paidTo == 0 {
		return
	}
	from, to := c.paidFrom, c.paidTo
	c.paidTo = 0
	if p.Arrived != nil && p.Net != nil && p.Net.ArrivedBetween(p.Host, from, to) {
		p.Arrived(m)
		p.counterLoaded() // Arrived may have loaded a new count
	}
}
