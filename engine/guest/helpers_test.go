package guest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// fixtureRoot holds modules shared by several tests, so that the one raw Go
// build they need happens once per test binary.
var fixtureRoot string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "seedfall-build-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fixtureRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const helloMain = `package main

import "fmt"

func main() { fmt.Println("hello from a node") }
`

// writeFiles creates files (slash paths relative to root) with their contents.
func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newModule writes a module with the given files plus a go.mod unless one
// is among them, and returns its directory.
func newModule(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["go.mod"]; !ok {
		writeFiles(t, dir, map[string]string{"go.mod": "module example.com/app\n\ngo 1.21\n"})
	}
	writeFiles(t, dir, files)
	return dir
}

// rawHello is a Go wasip1 binary straight from go build, not merged.
var rawHello = sync.OnceValues(func() ([]byte, error) {
	dir := filepath.Join(fixtureRoot, "hello")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, content := range map[string]string{"go.mod": "module example.com/hello\n\ngo 1.21\n", "main.go": helloMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(dir, "hello.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v\n%s", err, b)
	}
	return os.ReadFile(out)
})

func mustRawHello(t testing.TB) []byte {
	t.Helper()
	b, err := rawHello()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// segmentCount counts the data segments of a module.
func segmentCount(t testing.TB, bin []byte) int {
	t.Helper()
	secs, err := splitSections(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secs {
		if s.id == sectionData {
			segs, err := parseDataSection(s.payload)
			if err != nil {
				t.Fatal(err)
			}
			return len(segs)
		}
	}
	return 0
}

// newRuntime returns a wazero runtime with WASI, using the interpreter: it
// compiles a Go binary ten times faster than the compiler, and these tests
// run little guest code.
func newRuntime(t testing.TB) (context.Context, wazero.Runtime) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { r.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, r)
	return ctx, r
}

// initialMemory instantiates bin without running _start and returns a copy
// of its linear memory: what the data segments put there.
func initialMemory(t testing.TB, bin []byte) []byte {
	t.Helper()
	ctx, r := newRuntime(t)
	mod, err := r.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	mem := mod.Memory()
	if mem == nil {
		t.Fatal("module has no memory")
	}
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		t.Fatal("cannot read memory")
	}
	return bytes.Clone(b)
}
