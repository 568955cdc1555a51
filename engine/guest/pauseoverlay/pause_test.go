package pauseoverlay_test

// These tests drive a guest built with the overlay through the prototype's
// host (scripts/experiments/pause/proto: Compile, Start, Instantiate,
// Control, Resume), which imports this package: hence a package of their
// own, and a test-only dependency of the engine on scripts/.

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
	"github.com/seedfall/seedfall/scripts/experiments/pause/proto"
)

// testMain is every test's guest, its part chosen by the first argument:
// "order", or anything else for the default. Package init builds a map and
// prints. "order" prints the order in which main
// meets the keys of a map it makes and the choices of a select between
// two ready channels, which both come from the runtime's random state. The
// default prints its arguments and a sum over init's map.
const testMain = `package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

var table = build()

func build() map[string]int {
	m := map[string]int{}
	for i := 0; i < 1000; i++ {
		m[fmt.Sprint("k", i)] = i * i
	}
	fmt.Println("init: built", len(m))
	return m
}

func main() {
	switch arg := append(os.Args, "")[1]; arg {
	case "order":
		order()
	default:
		sum := 0
		for _, v := range table {
			sum += v
		}
		fmt.Printf("main: args=%s sum=%d k7=%d\n", strings.Join(os.Args[1:], ","), sum, table["k7"])
	}
}

func order() {
	m := map[int]bool{}
	for i := 0; i < 64; i++ {
		m[i] = true
	}
	var keys []string
	for k := range m {
		keys = append(keys, strconv.Itoa(k))
	}
	a, b := make(chan int, 64), make(chan int, 64)
	for i := 0; i < 64; i++ {
		a <- 1
		b <- 2
	}
	sel := make([]byte, 0, 64)
	for i := 0; i < 64; i++ {
		select {
		case <-a:
			sel = append(sel, 'a')
		case <-b:
			sel = append(sel, 'b')
		}
	}
	fmt.Println(strings.Join(keys[:16], " "), string(sel))
}
`

// guestWasm is testMain, built once with every overlay the engine applies,
// as the engine applies them.
var guestWasm []byte

func buildGuest(t testing.TB) []byte {
	t.Helper()
	if guestWasm == nil {
		net := func(goroot string) (map[string][]byte, error) { return netoverlay.Files(goroot) }
		guestWasm = proto.BuildGuest(t, pauseoverlay.Options{}, map[string]string{"main.go": testMain}, fsyncoverlay.Files, net)
	}
	return guestWasm
}

// compiled is shared by the tests' runtimes: each module compiles once.
var compiled = wazero.NewCompilationCache()

const initMainOut = "main: args=a,b sum=332833500 k7=49\n"

// host is a wazero runtime with WASI (its proc_exit the prototype's
// ProcExit) and the prototype's host module for prog.
type host struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *proto.Program
}

var (
	hostsMu sync.Mutex
	hosts   = map[string]*host{} // by module, shared by the tests: compiling takes seconds
)

func newHost(t testing.TB, wasm []byte) *host {
	t.Helper()
	hostsMu.Lock()
	defer hostsMu.Unlock()
	if h, ok := hosts[string(wasm)]; ok {
		return h
	}
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(compiled))
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	proto.ProcExit(b)
	if _, err := b.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	prog, err := proto.Compile(ctx, r, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := proto.Instantiate(ctx, r, nil, prog.Module); err != nil {
		t.Fatal(err)
	}
	h := &host{ctx: ctx, r: r, prog: prog}
	hosts[string(wasm)] = h
	return h
}

// pauseOnce answers snapshot_point with true the first time only.
func pauseOnce() *proto.Control {
	n := 0
	return &proto.Control{SnapshotPoint: func(api.Module) bool { n++; return n == 1 }}
}

func TestPauseBeforeMain(t *testing.T) {
	h := newHost(t, buildGuest(t))
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b").WithStdout(&out).WithStderr(&out)
	ctx := proto.WithControl(h.ctx, pauseOnce())
	m, err := h.prog.Start(ctx, h.r, cfg)
	if err != nil {
		t.Fatalf("_start did not return at the pause: %v\n%s", err, out.String())
	}
	if got := out.String(); got != "init: built 1000\n" {
		t.Fatalf("at the pause the guest printed %q, want only its init's line", got)
	}
	err = proto.Resume(ctx, m)
	if code, ok := proto.Exited(err); !ok || code != 0 {
		t.Fatalf("resume: %v, want exit 0\n%s", err, out.String())
	}
	m.Close(ctx)
	if got, want := out.String(), "init: built 1000\n"+initMainOut; got != want {
		t.Fatalf("after the resume: %q, want %q", got, want)
	}

	// Without a pause the same module runs as any Go program.
	out.Reset()
	m, err = h.prog.Start(h.ctx, h.r, cfg)
	if code, ok := proto.Exited(err); !ok || code != 0 {
		t.Fatalf("cold boot: %v; want an exit with status 0", err)
	}
	m.Close(h.ctx)
	if got, want := out.String(), "init: built 1000\n"+initMainOut; got != want {
		t.Fatalf("cold boot printed %q, want %q", got, want)
	}
}

// bootToSnapshot boots the module until it pauses before main and copies it.
func (h *host) bootToSnapshot(t testing.TB, cfg wazero.ModuleConfig) *pauseoverlay.Snapshot {
	t.Helper()
	ctx := proto.WithControl(h.ctx, pauseOnce())
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

// runRestored restores s under cfg (pauseoverlay.Program.Restore) and runs
// it to its exit; it returns what it printed.
func (h *host) runRestored(t testing.TB, s *pauseoverlay.Snapshot, cfg wazero.ModuleConfig) string {
	t.Helper()
	var out bytes.Buffer
	ctx := h.ctx
	m, err := h.prog.Program.Restore(ctx, h.r, s, cfg.WithStdout(&out).WithStderr(&out))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if code, ok := proto.Exited(proto.Resume(ctx, m)); !ok || code != 0 {
		t.Fatalf("restored instance did not exit 0 (%d, %v)\n%s", code, ok, out.String())
	}
	return out.String()
}

func TestSnapshotRestore(t *testing.T) {
	h := newHost(t, buildGuest(t))
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b")
	s := h.bootToSnapshot(t, cfg.WithStdout(&out))
	if out.String() != "init: built 1000\n" {
		t.Fatalf("boot printed %q", out.String())
	}
	if len(s.Memory) == 0 || len(s.Globals) < len(guest.GoGlobals) {
		t.Fatalf("snapshot of %d bytes and %d globals", len(s.Memory), len(s.Globals))
	}
	// Each copy runs main as the booted instance would have: init's work is
	// in its memory, and init's output is not printed again.
	for i := 0; i < 3; i++ {
		if got := h.runRestored(t, s, cfg); got != initMainOut {
			t.Fatalf("restore %d printed %q, want %q", i, got, initMainOut)
		}
	}
	// The arguments were read during init: they are the snapshot's, whatever
	// the new instance is given.
	if got := h.runRestored(t, s, cfg.WithArgs("prog", "other")); got != initMainOut {
		t.Fatalf("restored with other arguments: %q, want the snapshot's %q", got, initMainOut)
	}
}

// stream is a reader of random bytes from seed.
func stream(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	s[0], s[1] = byte(seed), byte(seed>>8)
	return rand.NewChaCha8(s)
}

func TestReseedAfterRestore(t *testing.T) {
	h := newHost(t, buildGuest(t))
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "order")
	s := h.bootToSnapshot(t, cfg.WithRandSource(stream(0)).WithStdout(io.Discard))
	// Each restore reads its own stream when it is resumed.
	got := map[string]uint64{}
	for seed := uint64(1); seed <= 4; seed++ {
		out := h.runRestored(t, s, cfg.WithRandSource(stream(seed)))
		if again := h.runRestored(t, s, cfg.WithRandSource(stream(seed))); again != out {
			t.Fatalf("two restores with stream %d differ:\n%s%s", seed, out, again)
		}
		if prev, dup := got[out]; dup {
			t.Fatalf("streams %d and %d gave the same map order and select choices:\n%s", prev, seed, out)
		}
		got[out] = seed
	}
}

// A live instance, stopped by its exit, is put back to the snapshot in
// place and runs main again: a restart without a new instance.
func TestResetReusesInstance(t *testing.T) {
	h := newHost(t, buildGuest(t))
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b")
	s := h.bootToSnapshot(t, cfg.WithStdout(io.Discard))
	ctx := h.ctx
	var out bytes.Buffer
	m, err := h.prog.Program.Restore(ctx, h.r, s, cfg.WithStdout(&out))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if code, ok := proto.Exited(proto.Resume(ctx, m)); !ok || code != 0 || out.String() != initMainOut {
			t.Fatalf("run %d on one instance: exit %d (%v), printed %q, want %q", i, code, ok, out.String(), initMainOut)
		}
		out.Reset()
		if err := h.prog.Program.Reset(ctx, m, s, m.Memory().Size()); err != nil {
			t.Fatal(err)
		}
	}
	m.Close(ctx)
}
