// Package sched owns virtual time and the baton: which one process of a world
// runs at any moment. Every process runs on its own goroutine, but only the
// holder of the baton executes; it hands the baton back only when it blocks.
// Virtual time advances only when no process can run, and jumps straight to
// the earliest moment something can happen. The choice among processes that
// can run is drawn from the seeded `sched` stream, so a world's interleaving
// is a pure function of its seed.
package sched

import (
	"container/heap"
	"iter"
	"sync/atomic"
	"time"

	"github.com/seedfall/seedfall/engine/internal/rng"
)

// State is where a process is in its life.
type State uint8

const (
	Fresh    State = iota // created, has not run yet
	Runnable              // wants the baton
	Running               // holds the baton
	Blocked               // waiting; ReadyAt says until when
	Exited                // its body returned
)

// Never is the ReadyAt of a process that waits for something no clock can
// foresee (another process's action).
const Never int64 = -1

// Proc is one process: a node incarnation, a workload, a check.
type Proc struct {
	Name  string
	Steps uint64 // how many times it got the baton

	s     *Sched
	state State
	// The process runs as a coroutine of Run's goroutine (iter.Pull):
	// next hands it the baton, and it gives it back with yield. A hand-
	// over is a direct switch between two goroutines, which neither
	// goes through the Go scheduler's run queues nor wakes a thread for
	// an idle core.
	next    func() (struct{}, bool)
	yield   func(struct{}) bool
	killed  bool // set with the baton: die instead of continuing
	readyAt func() int64
	body    func(p *Proc)
	hold    int64 // the process may not run before this time (a pause)

	// Interrupt, if set, is called from another goroutine when the watchdog
	// finds the process running too long; it must make the body return.
	Interrupt func()
}

// State reports the process's state.
func (p *Proc) State() State { return p.state }

// Sched is one world's scheduler. It is not safe for use by more than one
// world; its methods are called either from Run's goroutine or from the
// goroutine of the process that holds the baton.
type Sched struct {
	now     int64
	procs   []*Proc
	rng     rng.Stream
	steps   uint64
	events  eventHeap
	seq     uint64
	stopped bool
	ready   []*Proc
	until   int64

	running   atomic.Pointer[Proc]
	stepStart atomic.Int64 // wall ns at which running got the baton
	overdue   atomic.Pointer[Proc]
	aborted   atomic.Bool
}

// New returns a scheduler at virtual time 0 drawing its choices from r.
func New(r rng.Stream) *Sched {
	return &Sched{rng: r}
}

// Now is the current virtual time in nanoseconds since the start of the run.
func (s *Sched) Now() int64 { return s.now }

// Steps is how many times a process has been handed the baton.
func (s *Sched) Steps() uint64 { return s.steps }

// Go creates a process that runs body once it first gets the baton. When body
// returns the process has exited.
func (s *Sched) Go(name string, body func(p *Proc)) *Proc {
	p := &Proc{Name: name, s: s, state: Fresh, body: body}
	s.procs = append(s.procs, p)
	p.next, _ = iter.Pull(func(yield func(struct{}) bool) {
		p.yield = yield
		if !p.killed {
			p.body(p)
		}
		p.state = Exited
	})
	return p
}

// Block gives the baton back until readyAt's time has come. readyAt is asked
// again after every step of the world, so it may depend on what other
// processes do; it returns Never while nothing foreseeable will wake p.
// Block returns true if the process was killed while it waited: the caller
// must then unwind without touching the world.
func (p *Proc) Block(readyAt func() int64) (killed bool) {
	p.readyAt = readyAt
	p.state = Blocked
	p.yield(struct{}{})
	return p.killed
}

// Hold keeps p from running before virtual time until, whatever it waits
// for: a paused process. What it waits for still happens (messages arrive,
// timers come due); it sees them when the hold ends. Hold(0) releases it.
// Call it from an event, not from a process.
func (p *Proc) Hold(until int64) { p.hold = until }

// Held reports whether p is held at the current time.
func (p *Proc) Held() bool { return p.hold > p.s.now }

// HeldUntil is the end of the hold in force, or 0.
func (p *Proc) HeldUntil() int64 {
	if p.Held() {
		return p.hold
	}
	return 0
}

// Sleep gives the baton back until virtual time until, as Block with a
// fixed time does, but cheaply when nothing else can happen before then:
// no event is due by until, no other process can run by until, the run is
// not stopping and until is within the horizon. Then Run would hand the
// baton straight back to p at until, so Sleep moves the clock there itself
// and counts the step as Run would, without the two goroutine switches.
// The watchdog still counts real time from p's last real hand-over: a
// process that only sleeps on its own, with nobody else to run, has not
// given anything up, and a guest that floods the host stays bounded.
// Call it only from p while it holds the baton.
func (p *Proc) Sleep(until int64) (killed bool) {
	if p.SleepQuietly(until) {
		return false
	}
	return p.Block(func() int64 { return until })
}

// SleepQuietly is Sleep's cheap case alone: if nothing else can happen
// before until (or until has passed), it moves the clock there as Sleep
// does and returns true; otherwise it does nothing and returns false, and
// the caller must wait as Sleep would (Block until then).
func (p *Proc) SleepQuietly(until int64) bool {
	s := p.s
	if until <= s.now {
		return true
	}
	if s.quietUntil(p, until) {
		s.now = until
		p.Steps++
		s.steps++
		return true
	}
	return false
}

// quietUntil reports whether, with p blocked until t, Run's next step would
// be p's at t: nothing stops the run, no event comes due and no other
// process becomes ready by t, and t is within the horizon.
func (s *Sched) quietUntil(p *Proc, t int64) bool {
	if s.stopped || s.aborted.Load() || t > s.until || p.hold > s.now {
		return false
	}
	if len(s.events) > 0 && s.events[0].at <= t {
		return false
	}
	for _, q := range s.procs {
		if q == p {
			continue
		}
		switch q.state {
		case Fresh, Runnable:
			if max(q.hold, s.now) <= t {
				return false
			}
		case Blocked:
			r := q.readyAt()
			if r == Never {
				continue
			}
			if max(r, q.hold) <= t {
				return false
			}
		}
	}
	return true
}

// Yield lets other processes that can run at this instant run first.
func (p *Proc) Yield() (killed bool) {
	now := p.s.now
	return p.Block(func() int64 { return now })
}

// Rekey replaces the stream that picks among runnable processes (a branch
// of the run). Call it from an event.
func (s *Sched) Rekey(r rng.Stream) { s.rng = r }

// At runs fn on the scheduler when virtual time reaches t, before any process
// runs at t. Events at the same time run in the order they were added.
func (s *Sched) At(t int64, fn func()) {
	if t < s.now {
		t = s.now
	}
	s.seq++
	heap.Push(&s.events, event{at: t, seq: s.seq, fn: fn})
}

// Kill ends a process that is not running. It must be called from an event
// (Run's goroutine), never from a process. It returns once the process's
// goroutine has exited.
func (s *Sched) Kill(p *Proc) {
	switch p.state {
	case Fresh, Blocked, Runnable:
		p.killed = true
		p.next()
	}
	p.state = Exited
	s.remove(p)
}

func (s *Sched) remove(p *Proc) {
	for i, q := range s.procs {
		if q == p {
			s.procs = append(s.procs[:i], s.procs[i+1:]...)
			return
		}
	}
}

// ExtendHorizon moves the virtual-time horizon of the current Run to t, if
// that is later.
func (s *Sched) ExtendHorizon(t int64) {
	if t > s.until {
		s.until = t
	}
}

// Stop makes Run return after the current step.
func (s *Sched) Stop() { s.stopped = true }

// Outcome is why Run returned.
type Outcome int

const (
	Stopped  Outcome = iota // Stop was called
	Horizon                 // virtual time reached the limit
	Idle                    // no process left and nothing scheduled
	Stuck                   // processes are left, all blocked on nothing foreseeable
	Watchdog                // a process ran longer than the watchdog allows
	Aborted                 // Abort was called
)

// Options limit a Run.
type Options struct {
	Until    int64         // virtual-time horizon
	Watchdog time.Duration // real time one process may hold the baton; 0: no limit
	// OnExit is called on Run's goroutine after a process's body returned.
	OnExit func(p *Proc)
	// Advance is called on Run's goroutine when virtual time is about to
	// move on from now, every process parked: what ran at now is done.
	Advance func(now int64)
}

// Run drives the world until Stop, the horizon, or until nothing can happen.
// When it returns Watchdog, Overdue names the process.
func (s *Sched) Run(opt Options) Outcome {
	s.until = opt.Until
	if opt.Watchdog > 0 {
		done := make(chan struct{})
		defer close(done)
		go s.watch(opt.Watchdog, done)
	}
	for {
		if s.stopped {
			return Stopped
		}
		if s.aborted.Load() {
			return Aborted
		}
		// Events due now run first: a crash at t lands before anyone runs at t.
		if len(s.events) > 0 && s.events[0].at <= s.now {
			e := heap.Pop(&s.events).(event)
			e.fn()
			continue
		}
		s.ready = s.ready[:0]
		next := int64(Never)
		for _, p := range s.procs {
			switch p.state {
			case Fresh, Runnable:
				if p.hold > s.now {
					if next == Never || p.hold < next {
						next = p.hold
					}
					continue
				}
				s.ready = append(s.ready, p)
			case Blocked:
				t := p.readyAt()
				if t == Never {
					continue
				}
				if t < p.hold {
					t = p.hold // held: what it waits for waits too
				}
				if t <= s.now {
					s.ready = append(s.ready, p)
				} else if next == Never || t < next {
					next = t
				}
			}
		}
		if len(s.ready) == 0 {
			if len(s.events) > 0 && (next == Never || s.events[0].at < next) {
				next = s.events[0].at
			}
			if next == Never {
				if len(s.procs) == 0 {
					return Idle
				}
				return Stuck
			}
			if next > s.until {
				s.now = s.until
				return Horizon
			}
			if opt.Advance != nil {
				opt.Advance(s.now)
			}
			s.now = next
			continue
		}
		p := s.ready[0]
		if len(s.ready) > 1 {
			p = s.ready[s.rng.Intn(len(s.ready))]
		}
		p.state = Running
		p.Steps++
		s.steps++
		if opt.Watchdog > 0 {
			s.stepStart.Store(time.Now().UnixNano())
			s.running.Store(p)
		}
		p.killed = false
		p.next()
		if opt.Watchdog > 0 {
			s.running.Store(nil)
			if s.overdue.Load() == p {
				if p.state == Exited {
					s.remove(p)
				}
				return Watchdog
			}
		}
		if p.state == Exited {
			s.remove(p)
			if opt.OnExit != nil {
				opt.OnExit(p)
			}
		}
	}
}

// Abort makes Run return Aborted soon: after the current step, and a
// process running with a watchdog set is interrupted as the watchdog would.
// It is the one method safe to call from any goroutine (a user's Ctrl-C).
func (s *Sched) Abort() {
	s.aborted.Store(true)
	if p := s.running.Load(); p != nil && p.Interrupt != nil {
		p.Interrupt()
	}
}

// Overdue is the process the watchdog stopped, if any.
func (s *Sched) Overdue() *Proc { return s.overdue.Load() }

// watch is the one place wall-clock time is read: it can only end a run,
// never steer one.
func (s *Sched) watch(limit time.Duration, done chan struct{}) {
	tick := limit / 4
	if tick > time.Second {
		tick = time.Second
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			p := s.running.Load()
			if p == nil || time.Now().UnixNano()-s.stepStart.Load() < int64(limit) {
				continue
			}
			if s.overdue.CompareAndSwap(nil, p) && p.Interrupt != nil {
				p.Interrupt()
			}
		}
	}
}

// Shutdown kills every process left, so that no goroutine outlives the world.
func (s *Sched) Shutdown() {
	for len(s.procs) > 0 {
		s.Kill(s.procs[len(s.procs)-1])
	}
}

type event struct {
	at  int64
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
