package guest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestExportPause(t *testing.T) {
	raw := mustRawHello(t)
	merged, err := MergeData(raw)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := Instrument(merged)
	if err != nil {
		t.Fatal(err)
	}
	counted, err := CountCalls(inst, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		wasm  []byte
		extra []string // exported mutable globals besides Go's
	}{
		{"raw", raw, nil},
		{"instrumented", inst, []string{BudgetGlobal}},
		{"counted", counted, []string{BudgetGlobal, CallsGlobal}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if Pausable(tc.wasm) {
				t.Fatal("a module fresh from the build is Pausable")
			}
			out, err := ExportPause(tc.wasm)
			if err != nil {
				t.Fatal(err)
			}
			if !Pausable(out) {
				t.Fatal("ExportPause's output is not Pausable")
			}
			globals, err := MutableGlobals(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := append(GoGlobals[:], tc.extra...); !slices.Equal(globals, want) {
				t.Errorf("MutableGlobals = %v, want %v", globals, want)
			}
			// The export is the function the name section calls wasm_pc_f_loop.
			if name := exportedFuncName(t, out, ResumeExport); name != "wasm_pc_f_loop" {
				t.Errorf("%s is %q, want wasm_pc_f_loop", ResumeExport, name)
			}
			// Only the export section changed, and the module is valid.
			if a, b := withoutSection(t, tc.wasm, sectionExport), withoutSection(t, out, sectionExport); !bytes.Equal(a, b) {
				t.Error("ExportPause changed more than the export section")
			}
			ctx, r := newRuntime(t)
			if _, err := r.CompileModule(ctx, out); err != nil {
				t.Fatalf("wazero refuses the module: %v", err)
			}
			if _, err := ExportPause(out); !errors.Is(err, errUnsupported) {
				t.Errorf("exporting twice: err = %v, want errUnsupported", err)
			}
		})
	}
}

func TestStripData(t *testing.T) {
	merged, err := MergeData(mustRawHello(t))
	if err != nil {
		t.Fatal(err)
	}
	stripped, err := StripData(merged)
	if err != nil {
		t.Fatal(err)
	}
	if n := segmentCount(t, stripped); n != 0 {
		t.Fatalf("%d data segments left", n)
	}
	mem := initialMemory(t, stripped)
	if len(mem) != len(initialMemory(t, merged)) {
		t.Fatalf("the memory's size changed: %d bytes", len(mem))
	}
	if !bytes.Equal(mem, make([]byte, len(mem))) {
		t.Fatal("a module without data segments starts with data in its memory")
	}
	if !bytes.Equal(withoutSection(t, merged, sectionData), withoutSection(t, stripped, sectionData)) {
		t.Error("StripData changed more than the data section")
	}
}

// Malformed modules give errors, never panics.
func TestExportPauseMalformed(t *testing.T) {
	merged, err := MergeData(mustRawHello(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 4, 8, 9, 100, len(merged) / 2, len(merged) - 1} {
		cut := merged[:n]
		if _, err := ExportPause(cut); err == nil {
			t.Errorf("ExportPause of the first %d bytes: no error", n)
		}
		if _, err := StripData(cut); err == nil && n != 8 { // 8 bytes: a module with no sections
			t.Errorf("StripData of the first %d bytes: no error", n)
		}
		Pausable(cut)
		MutableGlobals(cut)
	}
	// A valid module that is not a Go command.
	if _, err := ExportPause(append(bytes.Clone(wasmHeader), 0x01, 0x01, 0x00)); !errors.Is(err, errUnsupported) {
		t.Errorf("a module with no code: err = %v, want errUnsupported", err)
	}
}

// exportedFuncName returns the name-section name of the function exported as export.
func exportedFuncName(t *testing.T, wasm []byte, export string) string {
	t.Helper()
	secs, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	var idx uint32
	var names []byte
	found := false
	for _, s := range secs {
		switch s.id {
		case sectionExport:
			exps, err := parseExports(s.payload)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range exps {
				if e.name == export && e.kind == 0 {
					idx, found = e.index, true
				}
			}
		case sectionCustom:
			if n, p, ok := customName(s.payload); ok && n == "name" {
				names = p
			}
		}
	}
	if !found || names == nil {
		t.Fatalf("no export %s, or no name section", export)
	}
	name, _ := functionName(names, idx)
	return name
}

// withoutSection returns wasm's sections but those with id, concatenated.
func withoutSection(t *testing.T, wasm []byte, id byte) []byte {
	t.Helper()
	secs, err := splitSections(wasm)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	for _, s := range secs {
		if s.id != id {
			out = append(out, s.raw...)
		}
	}
	return out
}
