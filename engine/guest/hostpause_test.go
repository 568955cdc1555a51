package guest

import (
	"errors"
	"testing"
)

// HostPauses changes a counted, pausable Go module into one that wazero
// compiles and that exports the window; it refuses, as unsupported, what
// it cannot change: a module without ExportPause's exports or the counters,
// and one it changed already. (Whether the guests then pause exactly as
// they wait is the engine's TestPausingIsWaiting.)
func TestHostPauses(t *testing.T) {
	merged, err := MergeData(mustRawHello(t))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Instrument(merged)
	if err != nil {
		t.Fatal(err)
	}
	counted, err := CountCalls(inst, false)
	if err != nil {
		t.Fatal(err)
	}
	paused, err := ExportPause(counted)
	if err != nil {
		t.Fatal(err)
	}
	out, err := HostPauses(paused)
	if err != nil {
		t.Fatal(err)
	}
	if !HasHostPauses(out) || HasHostPauses(paused) {
		t.Fatal("HasHostPauses does not tell the modules apart")
	}
	ctx, r := newRuntime(t)
	if _, err := r.CompileModule(ctx, out); err != nil {
		t.Fatalf("the changed module does not compile: %v", err)
	}
	for name, wasm := range map[string][]byte{
		"without ExportPause": counted,
		"uncounted":           mustExportPause(t, inst),
		"changed twice":       out,
	} {
		if _, err := HostPauses(wasm); !errors.Is(err, errUnsupported) {
			t.Errorf("%s: %v, want unsupported", name, err)
		}
	}
	if _, err := HostPauses([]byte("not wasm")); err == nil || errors.Is(err, errUnsupported) {
		t.Errorf("malformed input: %v, want an error other than unsupported", err)
	}
}

func mustExportPause(t *testing.T, wasm []byte) []byte {
	t.Helper()
	out, err := ExportPause(wasm)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
