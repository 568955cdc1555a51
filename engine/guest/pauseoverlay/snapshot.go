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

// Start instantiates p.Module with cfg, which runs _start, until the guest
// pauses (paused is true and m is live) or exits (m is closed, and err is
// nil for exit status 0, as wazero reports it, else the *sys.ExitError).
func (p *Program) Start(ctx context.Context, r wazero.Runtime, cfg wazero.ModuleConfig) (m api.Module, paused bool, err error) {
	m, err = r.InstantiateModule(ctx, p.Module, cfg)
	if err != nil {
		return nil, false, err
	}
	return m, !m.IsClosed(), nil
}

// Snapshot is a paused guest: a copy of its linear memory and of the values
// of its exported mutable globals, in Program.Globals order.
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
// When ctx carries the allocator of a COW image of s
// (experimental.WithMemoryAllocator with COW.Allocator), the memory
// already holds the snapshot and is not copied.
func (p *Program) Restore(ctx context.Context, r wazero.Runtime, s *Snapshot, cfg wazero.ModuleConfig) (api.Module, error) {
	m, err := r.InstantiateModule(ctx, p.Bare, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if err := p.load(ctx, m, s); err != nil {
		m.Close(ctx)
		return nil, err
	}
	return m, nil
}

func (p *Program) load(ctx context.Context, m api.Module, s *Snapshot) error {
	mem := m.Memory()
	if mem == nil {
		return errors.New("pause: the module has no memory")
	}
	size := uint32(len(s.Memory))
	if have := mem.Size(); have < size {
		if _, ok := mem.Grow((size - have) / 65536); !ok {
			return fmt.Errorf("pause: cannot grow the memory from %d to %d bytes", have, size)
		}
	} else if have > size {
		return fmt.Errorf("pause: the new instance's memory (%d bytes) is larger than the snapshot's (%d)", have, size)
	}
	if !cowLoaded(ctx, s) {
		buf, ok := mem.Read(0, size)
		if !ok {
			return errors.New("pause: cannot write the memory")
		}
		copy(buf, s.Memory)
	}
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
// then the error is the *sys.ExitError, or whatever stopped it.
func Resume(ctx context.Context, m api.Module) error {
	f := m.ExportedFunction(guest.ResumeExport)
	if f == nil {
		return errors.New("pause: the instance has no " + guest.ResumeExport + " export")
	}
	_, err := f.Call(ctx)
	return err
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

// cowLoaded reports whether ctx carries the allocator of a COW image of s.
func cowLoaded(ctx context.Context, s *Snapshot) bool {
	a, ok := ctx.Value(cowKey{}).(*COW)
	return ok && a.snap == s
}

type cowKey struct{}

// WithCOW returns a context under which instances get their memory from c
// (already holding c's snapshot), for Program.Restore.
func WithCOW(ctx context.Context, c *COW) context.Context {
	ctx = context.WithValue(ctx, cowKey{}, c)
	return experimental.WithMemoryAllocator(ctx, c)
}
