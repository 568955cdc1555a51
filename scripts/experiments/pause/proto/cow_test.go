//go:build linux

package proto

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

const initMainOut = "main: args=a,b sum=332833500 k7=49\n"

// cowHost is a wazero runtime with WASI (its proc_exit ProcExit's) and the
// overlay's host module for prog.
type cowHost struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *Program
}

func newCOWHost(t testing.TB, wasm []byte) *cowHost {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(compiled))
	t.Cleanup(func() { r.Close(ctx) })
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	ProcExit(b)
	if _, err := b.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	prog, err := Compile(ctx, r, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := Instantiate(ctx, r, nil, prog.Module); err != nil {
		t.Fatal(err)
	}
	return &cowHost{ctx: ctx, r: r, prog: prog}
}

// bootToSnapshot boots the module until it pauses before main and copies it.
func (h *cowHost) bootToSnapshot(t testing.TB, cfg wazero.ModuleConfig) *pauseoverlay.Snapshot {
	t.Helper()
	n := 0
	ctx := WithControl(h.ctx, &Control{SnapshotPoint: func(api.Module) bool { n++; return n == 1 }})
	m, err := h.prog.Start(ctx, h.r, cfg)
	if err != nil {
		t.Fatalf("boot did not pause: %v", err)
	}
	defer m.Close(ctx)
	s, err := h.prog.Take(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Each copy-on-write restore runs main as the booted instance would have:
// init's work is in its memory, and init's output is not printed again.
func TestCOWRestore(t *testing.T) {
	h := newCOWHost(t, buildGuest(t))
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b")
	s := h.bootToSnapshot(t, cfg.WithStdout(io.Discard))
	cow, err := NewCOW(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cow.Close()
	ctx := WithCOW(h.ctx, cow)
	for i := 0; i < 3; i++ { // the second and third reuse a freed memory
		var out bytes.Buffer
		m, err := h.prog.Restore(ctx, h.r, s, cfg.WithStdout(&out).WithStderr(&out))
		if err != nil {
			t.Fatal(err)
		}
		if code, ok := Exited(Resume(ctx, m)); !ok || code != 0 {
			t.Fatalf("copy-on-write restore %d did not exit 0 (%d, %v)\n%s", i, code, ok, out.String())
		}
		m.Close(ctx)
		if got := out.String(); got != initMainOut {
			t.Fatalf("copy-on-write restore %d printed %q, want %q", i, got, initMainOut)
		}
	}
}

// A live instance of a COW memory, stopped by its exit, is put back to the
// snapshot in place (its dirty pages dropped) and runs main again.
func TestCOWReset(t *testing.T) {
	h := newCOWHost(t, buildGuest(t))
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b")
	s := h.bootToSnapshot(t, cfg.WithStdout(io.Discard))
	cow, err := NewCOW(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer cow.Close()
	ctx := WithCOW(h.ctx, cow)
	var out bytes.Buffer
	m, err := h.prog.Restore(ctx, h.r, s, cfg.WithStdout(&out))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	for i := 0; i < 3; i++ {
		if code, ok := Exited(Resume(ctx, m)); !ok || code != 0 || out.String() != initMainOut {
			t.Fatalf("run %d on one instance: exit %d (%v), printed %q, want %q", i, code, ok, out.String(), initMainOut)
		}
		out.Reset()
		if err := h.prog.Reset(ctx, m, s, m.Memory().Size()); err != nil {
			t.Fatal(err)
		}
	}
}
