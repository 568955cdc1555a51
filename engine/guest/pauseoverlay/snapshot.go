package pauseoverlay

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/guest"
)

// Program is one pausable module compiled for one runtime, twice: Boot as
// built, to boot from _start; Restore without data segments, to restore
// snapshots into (its memory comes whole from the snapshot, so writing the
// segments first would be wasted work).
type Program struct {
	Module, Bare wazero.CompiledModule
	// Globals are the module's exported mutable globals (guest.MutableGlobals):
	// with the memory, the whole state of a paused guest.
	Globals []string
}

// Compile compiles wasm, a module that went through guest.ExportPause, into
// r. Close the compiled modules with the runtime.
func Compile(ctx context.Context, r wazero.Runtime, wasm []byte) (*Program, error) {
	if !guest.Pausable(wasm) {
		return nil, errors.New("pause: the module has no " + guest.ResumeExport + " export; run it through guest.ExportPause")
	}
	globals, err := guest.MutableGlobals(wasm)
	if err != nil {
		return nil, err
	}
	stripped, err := guest.StripData(wasm)
	if err != nil {
		return nil, err
	}
	boot, err := r.CompileModule(ctx, wasm)
	if err != nil {
		return nil, err
	}
	restore, err := r.CompileModule(ctx, stripped)
	if err != nil {
		return nil, err
	}
	return &Program{Module: boot, Bare: restore, Globals: globals}, nil
}

// Start instantiates p.Module with cfg (its start functions are dropped)
// and calls _start, until the guest pauses (err is nil) or stops: err is
// then the *sys.ExitError of its exit (see Exited), or whatever else
// stopped it. m is returned either way, unless instantiation failed:
// wazero's proc_exit closes it, ProcExit's does not.
func (p *Program) Start(ctx context.Context, r wazero.Runtime, cfg wazero.ModuleConfig) (m api.Module, err error) {
	m, err = r.InstantiateModule(ctx, p.Module, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	_, err = m.ExportedFunction("_start").Call(ctx)
	return m, err
}

// Snapshot is a paused guest: a copy of its linear memory and of the values
// of its exported mutable globals, in Program.Globals order. Nothing may
// change it once a COW image was made of it.
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
// makes its memory the snapshot's and sets its globals. Resume runs it on.
// Under a context from WithCOW for s, the new memory is a copy-on-write
// mapping of the snapshot and nothing is copied.
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
// new instance. Resume runs it on. A memory larger than s's keeps its size,
// the pages past the snapshot zeroed (Go reads the memory's size only
// during init, and takes new pages from memory.grow as zeroed). used says
// how far the instance's guest used its memory: the bytes past it are zero
// already (a Go guest touches only what its runtime grew to), so only
// those between the snapshot's end and used are cleared; pass
// m.Memory().Size() when unknown. Under a context from WithCOW, a memory of
// that COW is reset by dropping the pages the instance touched; any other
// memory is copied over.
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
	if c, ok := ctx.Value(cowKey{}).(*COW); ok && c.snap == s {
		if cm := c.memory(&buf[0]); cm != nil {
			if err := cm.reset(); err != nil {
				return fmt.Errorf("pause: resetting the memory: %v", err)
			}
			return p.setGlobals(m, s)
		}
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

// Resume runs a paused instance on until it pauses again (nil) or exits:
// then the error is the *sys.ExitError, or whatever stopped it. It looks
// the export up, which makes wazero set up a new call stack: a host that
// resumes an instance many times calls the api.Function of ResumeFunc.
func Resume(ctx context.Context, m api.Module) error {
	f, err := ResumeFunc(m)
	if err != nil {
		return err
	}
	_, err = f.Call(ctx)
	return err
}

// ResumeFunc returns m's guest.ResumeExport: calling it is Resume.
func ResumeFunc(m api.Module) (api.Function, error) {
	f := m.ExportedFunction(guest.ResumeExport)
	if f == nil {
		return nil, errors.New("pause: the instance has no " + guest.ResumeExport + " export")
	}
	return f, nil
}

// Exited reports whether err, from Resume or from instantiating with
// _start, is the guest's exit, and its code.
func Exited(err error) (uint32, bool) {
	var e *sys.ExitError
	if errors.As(err, &e) {
		return e.ExitCode(), true
	}
	return 0, false
}

type cowKey struct{}

// WithCOW returns a context under which instances get their memory from c
// (already holding c's snapshot), for Program.Restore.
func WithCOW(ctx context.Context, c *COW) context.Context {
	ctx = context.WithValue(ctx, cowKey{}, c)
	return experimental.WithMemoryAllocator(ctx, c)
}
