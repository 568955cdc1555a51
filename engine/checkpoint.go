package engine

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/sched"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Checkpoints and forks (issue 15). A run asked for checkpoints (RunOptions.Checkpoints)
// records a tape of every program's host calls (wasi.Tape) and, at each
// checkpoint's moment, copies the memory and globals of every guest, all
// of them paused then (wasi/pause.go). A fork (RunOptions.From) runs the
// same world and seed with a schedule that agrees with the run's before
// the moment: it plays the tapes back through the host instead of running
// the guests, which rebuilds the world's host state (disks, network,
// scheduler, faults, trace) as it was, at the cost of the host's own work;
// at the moment, each guest's copy takes its tape's place and the fork
// runs on. A fork's trace is the trace of the same run from scratch, to
// the byte (TestForkIsARunFromScratch).

// Checkpoint is a moment of a run from which forks can start.
type Checkpoint struct {
	At time.Duration
	// Reason says why no fork can start here ("" when one can).
	Reason string

	p        *Prepared
	seed     uint64
	moments  []time.Duration // every checkpoint of the run
	schedule *faults.Schedule
	tapes    map[incKey]*wasi.Tape // every incarnation of the run
	guests   map[string]guestAt    // by program, the live incarnations
	bytes    int                   // memory held by the copies
	taken    bool                  // the run reached the moment
	kept     []any                 // what the families keep (family.keep)
}

// Bytes is the memory the checkpoint's copies of the guests added to the
// run's earlier checkpoints' (pages that did not change are shared).
func (c *Checkpoint) Bytes() int { return c.bytes }

type incKey struct {
	node string
	inc  int
}

// guestAt is one program at a checkpoint: its incarnation, how far its
// tape had played, and the copy of its guest (nil: not started yet).
type guestAt struct {
	inc  int
	pos  int
	snap *pagedGuest
}

// pagedGuest is a copy of a guest's memory and globals in 64 KiB pages: a
// page that reads zero is nil, and one unchanged since the node's previous
// checkpoint is that checkpoint's, shared (at its first, one unchanged
// since the post-init snapshot it started from is the snapshot's; no one
// writes into a page once it is in a copy). Between two checkpoints a
// guest changes a fifth of its pages or less (kvlog: 25 of 114 MiB over
// 15 checkpoints).
type pagedGuest struct {
	size    int
	pages   [][]byte
	globals []uint64
	// grown is the size its memory_limit counts (memGuard.size): a guest
	// in a reused instance has a memory larger than it grew it.
	grown uint64
}

const pageSize = 65536

// maxCheckpointBytes bounds the memory a run's checkpoints hold; later
// checkpoints are not taken (their Reason says so).
const maxCheckpointBytes = 1 << 30

// pages copies the memory and globals of m, paused, sharing what has not
// changed since prev (nil for none); it returns the bytes it copied.
func pages(m api.Module, globals []string, prev *pagedGuest) (*pagedGuest, int, error) {
	mem := m.Memory()
	buf, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, 0, fmt.Errorf("cannot read the memory")
	}
	g := &pagedGuest{size: len(buf), pages: make([][]byte, (len(buf)+pageSize-1)/pageSize), globals: make([]uint64, len(globals))}
	for i, name := range globals {
		gl := m.ExportedGlobal(name)
		if gl == nil {
			return nil, 0, fmt.Errorf("the instance does not export global %s", name)
		}
		g.globals[i] = gl.Get()
	}
	copied := 0
	for i := range g.pages {
		pg := buf[i*pageSize : min(len(buf), (i+1)*pageSize)]
		switch {
		case prev != nil && i < len(prev.pages) && prev.pages[i] != nil && bytes.Equal(prev.pages[i], pg):
			g.pages[i] = prev.pages[i]
		case allZero(pg):
		default:
			g.pages[i] = bytes.Clone(pg)
			copied += len(pg)
		}
	}
	return g, copied, nil
}

func allZero(b []byte) bool { return bytes.Equal(b, zeroPage[:len(b)]) }

var zeroPage [pageSize]byte

// fill writes the copy's memory into mem, which may hold anything.
func (g *pagedGuest) fill(mem []byte) {
	for i, pg := range g.pages {
		at := mem[i*pageSize : min(len(mem), (i+1)*pageSize)]
		if pg == nil {
			clear(at)
		} else {
			copy(at, pg)
		}
	}
}

// checkpointRun is a run's part in checkpoints and forks.
type checkpointRun struct {
	tapes map[incKey]*wasi.Tape
	cps   []*Checkpoint
	last  map[string]*pagedGuest // each program's copy at the last checkpoint
	// recorded: the run has reached its every checkpoint; the tapes are
	// closed (wasi.Tape.Close) and new incarnations have none.
	recorded bool
	bytes    int         // what the checkpoints hold
	from     *Checkpoint // a fork's checkpoint
	// switched: the fork has reached its checkpoint's moment; every
	// played program takes its guest's copy the next time it resumes.
	switched bool
	copies   uint64 // guests that took their copy

	// What the run gives its checkpoints: its clock, events and nodes
	// (port.go), each program as compiled, and the families' hook for a
	// guest that now runs as its copy.
	run      port
	compiled func(prog *Program) *compiled
	copied   func(n *node, m api.Module)
	// keep and resume carry the families' state from a checkpoint to its
	// forks (family.keep).
	keep   func() []any
	resume func([]any)
}

// openCheckpoints prepares a run of p for opt's checkpoints or fork,
// before any event: a checkpoint sees the world as every step before its
// moment left it, before anything else due then. It returns nil when opt
// asks for neither.
func openCheckpoints(p *Prepared, opt RunOptions, run port, compiled func(prog *Program) *compiled, copied func(n *node, m api.Module)) (*checkpointRun, error) {
	if len(opt.Checkpoints) == 0 && opt.From == nil {
		return nil, nil
	}
	f := &checkpointRun{run: run, compiled: compiled, copied: copied}
	if c := opt.From; c != nil {
		if err := c.agrees(p, opt); err != nil {
			return nil, err
		}
		f.from = c
		// The run's other checkpoints before this one were events too:
		// one due while a program pays its CPU time makes it wait
		// rather than move the clock on itself (sched.Proc.Sleep), and
		// the tapes record which.
		for _, at := range c.moments {
			if at < c.At {
				run.at(int64(at), func() {})
			}
		}
		run.at(int64(c.At), func() {
			f.switched = true
			if f.resume != nil {
				f.resume(c.kept)
			}
		})
		return f, nil
	}
	f.tapes = map[incKey]*wasi.Tape{}
	for _, at := range opt.Checkpoints {
		c := &Checkpoint{At: at, p: p, seed: opt.Seed, schedule: opt.Schedule, tapes: f.tapes, moments: opt.Checkpoints}
		f.cps = append(f.cps, c)
		run.at(int64(at), func() { f.take(c) })
	}
	return f, nil
}

// agrees checks that a fork's run is the checkpointed run until the
// checkpoint: same world, seed, duration and faults and branches before
// it, and no fault at an operation the run did not have
// (faults.Schedule.Keeps).
func (c *Checkpoint) agrees(p *Prepared, opt RunOptions) error {
	if c.Reason != "" {
		return fmt.Errorf("no fork can start at %v: %s", c.At, c.Reason)
	}
	if p != c.p || opt.Seed != c.seed {
		return fmt.Errorf("a fork must run the seed and world of its checkpoint (seed %d)", c.seed)
	}
	if c.schedule == nil || opt.Schedule == nil {
		return fmt.Errorf("a fork at %v must keep its checkpoint's schedule before then (its faults, branches and duration)", c.At)
	}
	if !opt.Schedule.Keeps(c.schedule, c.At) {
		return fmt.Errorf("a fork at %v must keep its checkpoint's schedule before then (its faults, branches and duration, and the faults that fire at an operation)", c.At)
	}
	return nil
}

// take copies every live guest, all of them paused or not started. After
// the run's last checkpoint, the tapes close: a fork plays a tape only up
// to its checkpoint (and reads a guest's last global from its end).
func (f *checkpointRun) take(c *Checkpoint) {
	c.taken = true
	if f.keep != nil {
		c.kept = f.keep()
	}
	defer func() {
		if !slices.ContainsFunc(f.cps, func(c *Checkpoint) bool { return !c.taken }) {
			f.recorded = true
			for _, t := range f.tapes {
				t.Close()
			}
		}
	}()
	if f.bytes > maxCheckpointBytes {
		c.Reason = fmt.Sprintf("the run's checkpoints hold %d MiB already, the most seedfall keeps", f.bytes>>20)
		return
	}
	if f.last == nil {
		f.last = map[string]*pagedGuest{}
	}
	c.guests = map[string]guestAt{}
	for _, n := range f.run.nodeList() {
		if n.proc == nil || n.wp == nil || n.proc.State() == sched.Exited || !n.up {
			continue
		}
		if n.proc.State() == sched.Fresh {
			c.guests[n.prog.Name] = guestAt{inc: n.inc}
			continue
		}
		m, ok := n.wp.Parked()
		comp := f.compiled(n.running())
		switch {
		case !ok:
			c.Reason = fmt.Sprintf("%s is waiting inside a host call", n.label())
		case comp.pa == nil:
			c.Reason = fmt.Sprintf("%s cannot be copied (it has no snapshot support)", n.label())
		}
		if c.Reason != "" {
			c.guests = nil
			return
		}
		prev := f.last[n.prog.Name]
		if prev == nil && n.img != nil && n.img.snap != nil {
			prev = n.img.base()
		}
		snap, copied, err := pages(m, comp.pa.prog.Globals, prev)
		if err != nil {
			c.Reason, c.guests = fmt.Sprintf("%s: %v", n.label(), err), nil
			return
		}
		snap.grown = n.mem.size
		f.last[n.prog.Name] = snap
		c.bytes += copied
		f.bytes += copied
		c.guests[n.prog.Name] = guestAt{inc: n.inc, pos: n.wp.Tape.Len(), snap: snap}
	}
}

// process sets up an incarnation's tape: recorded in a run with
// checkpoints, played back in a fork before its moment.
func (f *checkpointRun) process(n *node, wp *wasi.Process) {
	if f == nil {
		return
	}
	key := incKey{n.prog.Name, n.inc}
	if f.from == nil {
		if f.recorded {
			return
		}
		wp.Tape = &wasi.Tape{}
		f.tapes[key] = wp.Tape
		return
	}
	t := f.from.tapes[key]
	if f.switched || t == nil {
		return
	}
	wp.Play = &wasi.Playback{Tape: t}
}

// playing reports whether an incarnation starts by playing its tape: a
// fork's incarnation that started before the moment and has not run yet
// when the moment came runs its guest from the start instead.
func (f *checkpointRun) playing(wp *wasi.Process) bool {
	if f == nil {
		return false
	}
	if wp.Play != nil && f.switched {
		wp.Play = nil
	}
	return wp.Play != nil
}

// switcher is a played incarnation's Playback.Switch: once the fork has
// reached its moment, it makes the guest's copy, as it was at this point
// of the tape, in a new instance.
func (f *checkpointRun) switcher(n *node, c *compiled, start func(ctx context.Context, g *pagedGuest) (api.Module, error)) func(ctx context.Context) (api.Module, error) {
	return func(ctx context.Context) (api.Module, error) {
		if !f.switched {
			return nil, nil
		}
		g, ok := f.from.guests[n.prog.Name]
		if !ok || g.inc != n.inc || g.snap == nil || g.pos != n.wp.Play.Pos() {
			return nil, fmt.Errorf("seedfall: fork at %v: %s is not where the checkpoint left it (%+v, tape at %d)", f.from.At, n.label(), g, n.wp.Play.Pos())
		}
		if c.pa == nil {
			return nil, fmt.Errorf("seedfall: fork at %v: %s cannot be restored", f.from.At, n.label())
		}
		m, err := start(ctx, g.snap)
		if err != nil {
			return nil, err
		}
		f.copies++
		// What the families keep of the played guest now reads the copy.
		f.copied(n, m)
		return m, nil
	}
}

// checkpoints returns the run's checkpoints for its result; a run that
// ended at end did not reach those after it.
func (f *checkpointRun) checkpoints(end time.Duration) []*Checkpoint {
	if f == nil {
		return nil
	}
	for _, c := range f.cps {
		if !c.taken && c.Reason == "" {
			c.Reason = fmt.Sprintf("the run ended at %v, before this moment", end)
		}
	}
	return slices.Clone(f.cps)
}
