package guest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// callsMain makes 1<<20 calls of a function that cannot be inlined, then
// runs a call-free loop of 4<<20 iterations.
const callsMain = `package main

import "fmt"

//go:noinline
func step(x uint64) uint64 { return x*31 + 7 }

func main() {
	x := uint64(0)
	for i := 0; i < 1<<20; i++ {
		x = step(x)
	}
	for i := uint64(0); i < 4<<20; i++ {
		x = x*17 + i
	}
	fmt.Println("sum", x)
}
`

// countCalls runs bin with a sched_yield that reloads seedfall_calls with
// every (and the loop budget as seedfall's host does), and returns the
// output and the number of counted calls.
func countCalls(t *testing.T, bin []byte, every uint32) (stdout string, counted uint64) {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	b := r.NewHostModuleBuilder("wasi_snapshot_preview1")
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	var loaded uint32
	b.NewFunctionBuilder().WithFunc(func(ctx context.Context, m api.Module) uint32 {
		if g, ok := m.ExportedGlobal(BudgetGlobal).(api.MutableGlobal); ok && g.Get() == 0 {
			g.Set(LoopBudget)
		}
		if g, ok := m.ExportedGlobal(CallsGlobal).(api.MutableGlobal); ok && g.Get() == 0 {
			counted += uint64(loaded)
			loaded = every
			g.Set(uint64(every))
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
	return out.String(), counted
}

func TestCountCalls(t *testing.T) {
	raw := buildRaw(t, newModule(t, map[string]string{"main.go": callsMain}))
	inst, err := Instrument(raw)
	if err != nil {
		t.Fatal(err)
	}
	plainOut, none := countCalls(t, inst, 1000)
	if none != 0 || !strings.HasPrefix(plainOut, "sum ") {
		t.Fatalf("a module without CountCalls counted %d calls, printed %q", none, plainOut)
	}
	calls, err := CountCalls(inst, false)
	if err != nil {
		t.Fatal(err)
	}
	loops, err := CountCalls(inst, true)
	if err != nil {
		t.Fatal(err)
	}
	if !Counted(calls) || !Counted(loops) || Counted(inst) || !Instrumented(calls) {
		t.Fatal("Counted/Instrumented do not tell the modules apart")
	}
	outC, nc := countCalls(t, calls, 1000)
	outL, nl := countCalls(t, loops, 1000)
	if outC != plainOut || outL != plainOut {
		t.Fatalf("outputs differ: plain %q, calls %q, loops %q", plainOut, outC, outL)
	}
	// 1M calls of step, plus the runtime's own; the call-free loop adds
	// nothing without loops and 4M iterations with them.
	if nc < 1<<20 || nc > 3<<20 {
		t.Errorf("calls counted %d, want about 1M", nc)
	}
	if nl < nc+4<<20 {
		t.Errorf("calls and loops counted %d, want at least %d", nl, nc+4<<20)
	}
	// The count is exact: the same module counts the same calls each run.
	if _, again := countCalls(t, calls, 1000); again != nc {
		t.Errorf("second run counted %d calls, first %d", again, nc)
	}
	if _, err := CountCalls(calls, false); !errors.Is(err, errUnsupported) {
		t.Errorf("counting twice: err = %v, want errUnsupported", err)
	}
	if _, err := CountCalls(raw, false); !errors.Is(err, errUnsupported) {
		t.Errorf("a module without the loop budget: err = %v, want errUnsupported", err)
	}
}
