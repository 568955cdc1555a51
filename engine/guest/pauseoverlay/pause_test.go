package pauseoverlay

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/seedfall/seedfall/engine/guest"
)

func goroot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// build builds a main package of the given files with the overlay, through
// seedfall's shared cache, and exports what a pausing host needs.
func build(t testing.TB, opts Options, files map[string]string) []byte {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/pausing\n\ngo 1.21\n"
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ovl, err := Files(goroot(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	art, err := (&guest.Builder{}).Build(context.Background(), guest.Request{Node: "pausing", Pkg: dir, Overlay: ovl})
	if err != nil {
		t.Fatal(err)
	}
	wasm, err := guest.ExportPause(art.Wasm)
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

// initMain does visible work in package init and prints from main.
const initMain = `package main

import (
	"fmt"
	"os"
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
	sum := 0
	for _, v := range table {
		sum += v
	}
	fmt.Printf("main: args=%s sum=%d k7=%d\n", strings.Join(os.Args[1:], ","), sum, table["k7"])
}
`

const initMainOut = "main: args=a,b sum=332833500 k7=49\n"


// host is a wazero runtime with WASI and the overlay's host module for prog.
type host struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *Program
}

func newHost(t testing.TB, wasm []byte) *host {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	t.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	prog, err := Compile(ctx, r, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if err := Instantiate(ctx, r, prog.Module); err != nil {
		t.Fatal(err)
	}
	return &host{ctx: ctx, r: r, prog: prog}
}

// pauseOnce answers snapshot_point with true the first time only.
func pauseOnce() *Control {
	n := 0
	return &Control{SnapshotPoint: func(api.Module) bool { n++; return n == 1 }}
}

func TestPauseBeforeMain(t *testing.T) {
	h := newHost(t, build(t, Options{}, map[string]string{"main.go": initMain}))
	var out bytes.Buffer
	cfg := wazero.NewModuleConfig().WithName("").WithArgs("prog", "a", "b").WithStdout(&out).WithStderr(&out)
	ctx := WithControl(h.ctx, pauseOnce())
	m, paused, err := h.prog.Start(ctx, h.r, cfg)
	if err != nil || !paused {
		t.Fatalf("_start did not return at the pause (err %v)\n%s", err, out.String())
	}
	if got := out.String(); got != "init: built 1000\n" {
		t.Fatalf("at the pause the guest printed %q, want only its init's line", got)
	}
	err = Resume(ctx, m)
	if code, ok := Exited(err); !ok || code != 0 {
		t.Fatalf("resume: %v, want exit 0\n%s", err, out.String())
	}
	if got, want := out.String(), "init: built 1000\n"+initMainOut; got != want {
		t.Fatalf("after the resume: %q, want %q", got, want)
	}

	// Without a pause the same module runs as any Go program.
	out.Reset()
	if _, paused, err := h.prog.Start(h.ctx, h.r, cfg); err != nil || paused {
		t.Fatalf("cold boot: paused %v, err %v; want an exit with status 0", paused, err)
	}
	if got, want := out.String(), "init: built 1000\n"+initMainOut; got != want {
		t.Fatalf("cold boot printed %q, want %q", got, want)
	}
}
