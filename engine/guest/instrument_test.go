package guest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

const spinMain = `package main

import "fmt"

func main() {
	x := uint64(0)
	for i := uint64(0); i < 5<<20; i++ {
		x = x*31 + i
	}
	fmt.Println("sum", x)
}
`

// runCounting runs bin under wazero's WASI, with sched_yield replaced by a
// counter that resets the budget as seedfall's host does.
func runCounting(t *testing.T, bin []byte) (stdout string, hits int) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer r.Close(ctx)
	b := r.NewHostModuleBuilder("wasi_snapshot_preview1")
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	b.NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) uint32 {
		if g, ok := m.ExportedGlobal(BudgetGlobal).(api.MutableGlobal); ok && g.Get() == 0 {
			g.Set(LoopBudget)
			hits++
		}
		return 0
	}).Export("sched_yield")
	if _, err := b.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	_, err := r.InstantiateWithConfig(ctx, bin, wazero.NewModuleConfig().WithStdout(&out))
	if err != nil && !strings.Contains(err.Error(), "exit_code(0)") {
		t.Fatalf("run: %v", err)
	}
	return out.String(), hits
}

func TestInstrumentCountsLoops(t *testing.T) {
	dir := newModule(t, map[string]string{"main.go": spinMain})
	raw := buildRaw(t, dir)
	inst, err := Instrument(raw)
	if err != nil {
		t.Fatal(err)
	}
	plainOut, plainHits := runCounting(t, raw)
	out, hits := runCounting(t, inst)
	if out != plainOut || !strings.HasPrefix(out, "sum ") {
		t.Fatalf("instrumented output %q, plain %q", out, plainOut)
	}
	if plainHits != 0 {
		t.Fatalf("the plain module hit the budget %d times", plainHits)
	}
	// 5M iterations of the user's loop alone exhaust a 1M budget 5 times.
	if hits < 5 || hits > 50 {
		t.Fatalf("budget exhausted %d times, want about 5", hits)
	}
	if !Instrumented(inst) || Instrumented(raw) {
		t.Fatal("Instrumented() does not tell the two apart")
	}
	// Instrumenting and merging commute with running: merged+instrumented
	// behaves the same.
	merged, err := MergeData(raw)
	if err != nil {
		t.Fatal(err)
	}
	both, err := Instrument(merged)
	if err != nil {
		t.Fatal(err)
	}
	if out2, _ := runCounting(t, both); out2 != plainOut {
		t.Fatalf("merged and instrumented: %q", out2)
	}
}

func TestInstrumentRefusesWhatItCannotHandle(t *testing.T) {
	// A minimal module: no imports at all.
	min := append(append([]byte(nil), wasmHeader...), 0x01, 0x04, 0x01, 0x60, 0x00, 0x00)
	if _, err := Instrument(min); !errors.Is(err, errUnsupported) {
		t.Fatalf("err = %v, want errUnsupported", err)
	}
	if _, err := Instrument([]byte("nope")); err == nil || errors.Is(err, errUnsupported) {
		t.Fatalf("garbage: err = %v, want a format error", err)
	}
	raw := mustRawHello(t)
	for _, cut := range []int{9, 100, len(raw) / 2, len(raw) - 1} {
		if _, err := Instrument(raw[:cut]); err == nil {
			t.Fatalf("truncated at %d: no error", cut)
		}
	}
}

// buildRaw builds the main package in dir for wasip1 with go build alone.
func buildRaw(t *testing.T, dir string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
