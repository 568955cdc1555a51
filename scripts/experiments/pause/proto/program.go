// Package proto is what is left of the prototype of guests that pause
// (issue 15) once the engine took the snapshot point
// (engine/guest/pauseoverlay): the host side that boots a guest built with
// the pause overlay under wazero's own WASI (Compile, Program.Start,
// Instantiate, Control), runs it on (Resume), maps snapshots copy-on-write
// (COW), and World, a toy world that runs guests which pause when idle
// (pauseoverlay.Options.Idle) on one host goroutine, and forks itself.
// Only scripts/experiments/pause, and pauseoverlay's tests (to drive a
// guest), use it; the engine does not.
//
// The host ABI of the overlay, and how a guest pauses, are in
// pauseoverlay's package comment; what the host must keep equal between a
// snapshot and its copies, and the measurements, are in ../README.md.
package proto

import (
	"context"
	"errors"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// Program is one pausable module compiled for one runtime, twice: Module
// as built, to boot from _start; and the engine's pauseoverlay.Program,
// whose Bare has no data segments, to restore snapshots into (its memory
// comes whole from the snapshot, so writing the segments first would be
// wasted work). Its Restore and Reset map the memory copy-on-write under a
// context from WithCOW.
type Program struct {
	Module wazero.CompiledModule
	*pauseoverlay.Program
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
	return &Program{Module: boot, Program: &pauseoverlay.Program{Bare: restore, Globals: globals}}, nil
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

// Restore is pauseoverlay.Program.Restore, except that under a context
// from WithCOW for s the new memory is a copy-on-write mapping of the
// snapshot and nothing is copied. Resume runs it on.
func (p *Program) Restore(ctx context.Context, r wazero.Runtime, s *pauseoverlay.Snapshot, cfg wazero.ModuleConfig) (api.Module, error) {
	if _, ok := ctx.Value(cowKey{}).(*COW); !ok {
		return p.Program.Restore(ctx, r, s, cfg)
	}
	m, err := r.InstantiateModule(ctx, p.Bare, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	if err := p.Reset(ctx, m, s, 0); err != nil {
		m.Close(ctx)
		return nil, err
	}
	return m, nil
}

// Reset is pauseoverlay.Program.Reset, except that under a context from
// WithCOW for s a memory of that COW is reset by dropping the pages the
// instance touched; any other memory is copied over. Resume runs it on.
func (p *Program) Reset(ctx context.Context, m api.Module, s *pauseoverlay.Snapshot, used uint32) error {
	c, ok := ctx.Value(cowKey{}).(*COW)
	mem := m.Memory()
	if !ok || c.snap != s || mem == nil {
		return p.Program.Reset(ctx, m, s, used)
	}
	// The memory grows to the snapshot's size first, as Reset does; a COW
	// memory keeps its base address when it grows.
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
	cm := c.memory(&buf[0])
	if cm == nil {
		return p.Program.Reset(ctx, m, s, used)
	}
	if err := cm.reset(); err != nil {
		return fmt.Errorf("pause: resetting the memory: %v", err)
	}
	// The memory reads the snapshot again: only the globals are left to set.
	return p.RestoreInto(m, size, size, func([]byte) {}, s.Globals)
}

// Resume runs a paused instance on until it pauses again (nil) or exits:
// then the error is the *sys.ExitError, or whatever stopped it. It looks
// the export up, which makes wazero set up a new call stack: a host that
// resumes an instance many times calls the api.Function of
// pauseoverlay.ResumeFunc.
func Resume(ctx context.Context, m api.Module) error {
	f, err := pauseoverlay.ResumeFunc(m)
	if err != nil {
		return err
	}
	_, err = f.Call(ctx)
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

type cowKey struct{}

// WithCOW returns a context under which instances get their memory from c
// (already holding c's snapshot), for Program.Restore and Program.Reset.
func WithCOW(ctx context.Context, c *COW) context.Context {
	ctx = context.WithValue(ctx, cowKey{}, c)
	return experimental.WithMemoryAllocator(ctx, c)
}
