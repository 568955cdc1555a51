package pauseoverlay

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/guest"
)

// Program is one pausable module compiled for one runtime without its data
// segments (guest.StripData), to restore snapshots into: its memory comes
// whole from the snapshot, so writing the segments first would be wasted
// work.
type Program struct {
	Bare wazero.CompiledModule
	// Globals are the module's exported mutable globals (guest.MutableGlobals):
	// with the memory, the whole state of a paused guest.
	Globals []string
}

// Snapshot is a paused guest: a copy of its linear memory and of the values
// of its exported mutable globals, in Program.Globals order. Restores read
// it; the prototype's copy-on-write image (scripts/experiments/pause/proto)
// maps it, so nothing may change it once it is taken.
type Snapshot struct {
	Memory  []byte
	Globals []uint64
}

// Take copies the state of m, an instance of p paused by the overlay.
func (p *Program) Take(m api.Module) (*Snapshot, error) {
	mem := m.Memory()
	if mem == nil {
		return nil, errors.New("pause: the module has no memory")
	}
	buf, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, errors.New("pause: cannot read the memory")
	}
	s := &Snapshot{Memory: append([]byte(nil), buf...), Globals: make([]uint64, len(p.Globals))}
	for i, name := range p.Globals {
		g := m.ExportedGlobal(name)
		if g == nil {
			return nil, fmt.Errorf("pause: the instance does not export global %s", name)
		}
		s.Globals[i] = g.Get()
	}
	return s, nil
}

// Restore instantiates p.Bare with cfg (its start functions are dropped),
// makes its memory the snapshot's and sets its globals. Calling its
// ResumeFunc runs it on.
func (p *Program) Restore(ctx context.Context, r wazero.Runtime, s *Snapshot, cfg wazero.ModuleConfig) (api.Module, error) {
	m, err := r.InstantiateModule(ctx, p.Bare, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if err := p.load(ctx, m, s, 0); err != nil {
		m.Close(ctx)
		return nil, err
	}
	return m, nil
}

// RestoreFrom is Restore for a paused guest held in another form than a
// Snapshot: fill writes the whole memory, of size bytes (whole 64 KiB
// pages), which may hold anything before; globals are in p.Globals order.
// made, if set, is called with the new instance before its memory grows
// to size.
func (p *Program) RestoreFrom(ctx context.Context, r wazero.Runtime, cfg wazero.ModuleConfig, size uint32, fill func(mem []byte), globals []uint64, made func(api.Module)) (api.Module, error) {
	m, err := r.InstantiateModule(ctx, p.Bare, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if made != nil {
		made(m)
	}
	mem := m.Memory()
	if len(globals) != len(p.Globals) || size%65536 != 0 || mem == nil {
		m.Close(ctx)
		return nil, fmt.Errorf("pause: a copy of %d globals and %d bytes is not one of this program's (%d globals, whole 64 KiB pages)", len(globals), size, len(p.Globals))
	}
	if have := mem.Size(); have < size {
		if _, ok := mem.Grow((size - have) / 65536); !ok {
			m.Close(ctx)
			return nil, fmt.Errorf("pause: cannot grow the memory from %d to %d bytes", have, size)
		}
	}
	buf, ok := mem.Read(0, size)
	if !ok {
		m.Close(ctx)
		return nil, errors.New("pause: cannot write the memory")
	}
	fill(buf)
	if err := p.setGlobals(m, &Snapshot{Globals: globals}); err != nil {
		m.Close(ctx)
		return nil, err
	}
	return m, nil
}

// RestoreInto puts a copy of a paused guest into m, a live instance of p
// (paused, or ended; not closed), in place: RestoreFrom without making an
// instance, which is mostly wazero filling the function table. fill writes
// the copy's size bytes of memory; m's memory must hold them, and its
// bytes past size up to used are cleared, as Reset clears them.
func (p *Program) RestoreInto(m api.Module, size, used uint32, fill func(mem []byte), globals []uint64) error {
	mem := m.Memory()
	if len(globals) != len(p.Globals) || size%65536 != 0 || mem == nil {
		return fmt.Errorf("pause: a copy of %d globals and %d bytes is not one of this program's (%d globals, whole 64 KiB pages)", len(globals), size, len(p.Globals))
	}
	buf, ok := mem.Read(0, mem.Size())
	if !ok || len(buf) < int(size) {
		return fmt.Errorf("pause: a memory of %d bytes cannot take a copy of %d", mem.Size(), size)
	}
	fill(buf[:size])
	if used > size {
		clear(buf[size:min(int(used), len(buf))])
	}
	return p.setGlobals(m, &Snapshot{Globals: globals})
}

// Reset puts m, a live instance of p (paused, or stopped by an error from a
// host function; not closed), back to s in place: a restart that costs no
// new instance. Calling its ResumeFunc runs it on. A memory larger than s's keeps its size,
// the pages past the snapshot zeroed (Go reads the memory's size only
// during init, and takes new pages from memory.grow as zeroed). used says
// how far the instance's guest used its memory: the bytes past it are zero
// already (a Go guest touches only what its runtime grew to), so only
// those between the snapshot's end and used are cleared; pass
// m.Memory().Size() when unknown.
func (p *Program) Reset(ctx context.Context, m api.Module, s *Snapshot, used uint32) error {
	return p.load(ctx, m, s, used)
}

func (p *Program) load(ctx context.Context, m api.Module, s *Snapshot, used uint32) error {
	if len(s.Globals) != len(p.Globals) || len(s.Memory)%65536 != 0 {
		return fmt.Errorf("pause: a snapshot of %d globals and %d bytes is not one of this program's (%d globals, whole 64 KiB pages)",
			len(s.Globals), len(s.Memory), len(p.Globals))
	}
	mem := m.Memory()
	if mem == nil {
		return errors.New("pause: the module has no memory")
	}
	size := uint32(len(s.Memory))
	if have := mem.Size(); have < size {
		if _, ok := mem.Grow((size - have) / 65536); !ok {
			return fmt.Errorf("pause: cannot grow the memory from %d to %d bytes", have, size)
		}
	}
	buf, ok := mem.Read(0, mem.Size())
	if !ok || len(buf) == 0 {
		return errors.New("pause: cannot write the memory")
	}
	copy(buf, s.Memory)
	if used > size {
		clear(buf[size:min(int(used), len(buf))])
	}
	return p.setGlobals(m, s)
}

func (p *Program) setGlobals(m api.Module, s *Snapshot) error {
	for i, name := range p.Globals {
		g, ok := m.ExportedGlobal(name).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("pause: the instance does not export mutable global %s", name)
		}
		g.Set(s.Globals[i])
	}
	return nil
}

// ResumeFunc returns m's guest.ResumeExport: calling it runs a paused
// instance on until it pauses again (nil) or exits: then the error is the
// *sys.ExitError, or whatever stopped it. Look it up once per instance:
// each lookup makes wazero set up a new call stack.
func ResumeFunc(m api.Module) (api.Function, error) {
	f := m.ExportedFunction(guest.ResumeExport)
	if f == nil {
		return nil, errors.New("pause: the instance has no " + guest.ResumeExport + " export")
	}
	return f, nil
}
