package guest

import (
	"errors"
	"fmt"
)

// The globals HostPauses adds, exported under these names: the window of
// WebAssembly frames whose entries after a resume are not counted, and the
// SP of wasm_pc_f_loop's last dispatch.
const (
	WindowLoGlobal = "seedfall_window_lo"
	WindowHiGlobal = "seedfall_window_hi"
	LoopSPGlobal   = "seedfall_loop_sp"
)

// Go's wasm globals, by index (cmd/link/internal/wasm writeGlobalSec).
const (
	goSP    = 0
	goPause = 7
)

const sectionElement = 9

// HostPauses returns a copy of a Go module that counts calls (CountCalls)
// in which a host function can pause the guest instead of blocking, so that
// a guest that waits holds no host goroutine and no WebAssembly frame: its
// memory and globals are all of its state (issue 15, docs/how-it-works.md).
//
// Every function that calls an import is a wrapper the Go compiler made for
// a //go:wasmimport (cmd/internal/obj/wasm genWasmImportWrapper): it loads
// the arguments from the Go stack, calls the import, stores the result and
// returns. After the call HostPauses adds a check of Go's PAUSE global,
// which the host sets to pause: the wrapper then stores a return address
// to its own entry just below SP (where wasm_pc_f_loop reads the next
// frame to run), drops the result and returns 1, so that every frame
// unwinds and the export the host called returns. Calling ResumeExport
// runs the wrapper again from its entry: the call is issued again, with
// the same arguments, still on the Go stack. The host keeps what the first
// issue decided (wasi.Process).
//
// A resume enters again every frame that the pause unwound, and
// CountCalls counts each entry as work. wasm_pc_f_loop is changed so that
// those entries count nothing, which keeps a run that pauses equal to one
// that blocks: before each dispatch it records SP in LoopSPGlobal, and
// while a window is open (WindowLoGlobal nonzero) it gives back the count
// and the loop budget the dispatch is about to take, for every frame at or
// below WindowHiGlobal. The window closes at the first dispatch above it
// and whenever a frame unwinds (a goroutine switch, or a pause). The host
// opens it at a resume, from SP at the pause to the bottom of the
// WebAssembly stack then (LoopSPGlobal, or the open window's top).
//
// The module must export ResumeExport, Go's globals (ExportPause) and the
// counters of Instrument and CountCalls; otherwise HostPauses returns
// errUnsupported (wrapped). The calls must not be counted at loop headers
// as well (CountCalls with loops), which the caller checks: a resumed
// frame's loop header would count, and the window does not give that back.
func HostPauses(wasm []byte) ([]byte, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	imp, glob, exp, code, elem := sectionOf(secs, sectionImport), sectionOf(secs, sectionGlobal), sectionOf(secs, sectionExport), sectionOf(secs, sectionCode), sectionOf(secs, sectionElement)
	if imp == nil || glob == nil || exp == nil || code == nil || elem == nil {
		return nil, fmt.Errorf("%w: no import, global, export, code or element section", errUnsupported)
	}
	nimp, nglobImp, err := countImports(imp.payload)
	if err != nil {
		return nil, err
	}
	exports, err := parseExports(exp.payload)
	if err != nil {
		return nil, err
	}
	want := map[string]uint32{}
	for _, e := range exports {
		switch {
		case e.name == WindowLoGlobal:
			return nil, fmt.Errorf("%w: the module already has host pauses", errUnsupported)
		case e.name == ResumeExport && e.kind == 0x00,
			(e.name == CallsGlobal || e.name == BudgetGlobal || e.name == GoGlobals[goSP] || e.name == GoGlobals[goPause]) && e.kind == 0x03:
			want[e.name] = e.index
		}
	}
	for _, name := range []string{ResumeExport, CallsGlobal, BudgetGlobal, GoGlobals[goSP], GoGlobals[goPause]} {
		if _, ok := want[name]; !ok {
			return nil, fmt.Errorf("%w: the module does not export %s", errUnsupported, name)
		}
	}
	if nglobImp != 0 || want[GoGlobals[goSP]] != goSP || want[GoGlobals[goPause]] != goPause {
		return nil, fmt.Errorf("%w: Go's globals are not where the Go linker puts them", errUnsupported)
	}
	if want[ResumeExport] < nimp {
		return nil, fmt.Errorf("%w: %s is an import", errUnsupported, ResumeExport)
	}
	table, err := tableIndexes(elem.payload, nimp)
	if err != nil {
		return nil, err
	}

	// Three mutable i32 globals, initially 0, exported.
	nglob, n, err := readU32(glob.payload)
	if err != nil {
		return nil, fmt.Errorf("global section: %w", err)
	}
	newGlob := appendU32(nil, nglob+3)
	newGlob = append(newGlob, glob.payload[n:]...)
	for range 3 {
		newGlob = append(newGlob, 0x7f, 0x01, opI32Const, 0x00, opEnd)
	}
	g := hpGlobals{lo: nglob, hi: nglob + 1, loopSP: nglob + 2, calls: want[CallsGlobal], budget: want[BudgetGlobal]}
	nexp, n, err := readU32(exp.payload)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	newExp := appendU32(nil, nexp+3)
	newExp = append(newExp, exp.payload[n:]...)
	newExp = appendExport(newExp, WindowLoGlobal, 0x03, g.lo)
	newExp = appendExport(newExp, WindowHiGlobal, 0x03, g.hi)
	newExp = appendExport(newExp, LoopSPGlobal, 0x03, g.loopSP)

	newCode, err := hostPauseCode(code.payload, nimp, want[ResumeExport]-nimp, table, g)
	if err != nil {
		return nil, err
	}
	return withSections(secs, map[byte][]byte{sectionGlobal: newGlob, sectionExport: newExp, sectionCode: newCode}), nil
}

// HasHostPauses reports whether a module was made by HostPauses.
func HasHostPauses(wasm []byte) bool { return exportsGlobal(wasm, WindowLoGlobal) }

type hpGlobals struct{ lo, hi, loopSP, calls, budget uint32 }

// tableIndexes maps each defined function (by its index in the code
// section) to its index in table 0, from the element section Go's linker
// writes: one active segment at a constant offset.
func tableIndexes(p []byte, nimp uint32) (map[uint32]uint32, error) {
	count, pos, err := readU32(p)
	if err != nil {
		return nil, fmt.Errorf("element section: %w", err)
	}
	out := map[uint32]uint32{}
	for i := uint32(0); i < count; i++ {
		flags, n, err := readU32(p[pos:])
		if err != nil {
			return nil, fmt.Errorf("element section: %w", err)
		}
		pos += n
		if flags != 0 {
			return nil, fmt.Errorf("%w: element segment of kind %d", errUnsupported, flags)
		}
		k, off, isConst, err := readConstExpr(p[pos:])
		if err != nil || !isConst {
			return nil, fmt.Errorf("%w: element segment offset is not a constant", errUnsupported)
		}
		pos += k
		nf, n, err := readU32(p[pos:])
		if err != nil {
			return nil, fmt.Errorf("element section: %w", err)
		}
		pos += n
		for j := uint32(0); j < nf; j++ {
			f, n, err := readU32(p[pos:])
			if err != nil {
				return nil, fmt.Errorf("element section: %w", err)
			}
			pos += n
			if f >= nimp {
				out[f-nimp] = off + j
			}
		}
	}
	return out, nil
}

// hostPauseCode rewrites a code section: the pause check after every call
// of an import in a wrapper, and the window in wasm_pc_f_loop (loop, a
// code index).
func hostPauseCode(p []byte, nimp, loop uint32, table map[uint32]uint32, g hpGlobals) ([]byte, error) {
	return rewriteCode(p, len(p)/64, func(i uint32, out, f []byte) ([]byte, error) {
		if i == loop {
			return windowLoop(out, f, g)
		}
		return pauseWrapper(out, f, nimp, i, table, g)
	})
}

// skipLocals returns the length of a function body's locals declaration.
func skipLocals(f []byte) (int, error) {
	nloc, pos, err := readU32(f)
	if err != nil {
		return 0, err
	}
	for i := uint32(0); i < nloc; i++ {
		_, n, err := readU32(f[pos:])
		if err != nil || pos+n >= len(f) {
			return 0, errors.New("bad locals")
		}
		pos += n + 1
	}
	return pos, nil
}

// pauseWrapper copies a function body, adding after each call of an import
// (but the instrumentation's sched_yield, which an `if` just opened) the
// pause check:
//
//	global.get $PAUSE
//	if
//	  global.get $SP; i32.const 8; i32.sub
//	  i64.const <this function's table index> << 16   ;; PC_F, PC_B 0
//	  i64.store
//	  i32.const 1; return
//	end
func pauseWrapper(out, f []byte, nimp, fn uint32, table map[uint32]uint32, g hpGlobals) ([]byte, error) {
	var check []byte
	prevIf := false
	return rewriteBody(out, f, nil, func(out []byte, op byte, ins []byte) ([]byte, error) {
		out = append(out, ins...)
		if op == 0x10 && !prevIf {
			if callee, _, err := readU32(ins[1:]); err == nil && callee < nimp {
				if check == nil {
					t, ok := table[fn]
					if !ok {
						return nil, fmt.Errorf("%w: a wrapper of an import is not in the table", errUnsupported)
					}
					check = pauseCheck(t)
				}
				out = append(out, check...)
			}
		}
		prevIf = op == 0x04 && len(ins) == 2 && ins[1] == 0x40
		return out, nil
	})
}

// rewriteBody copies a function body f to out: its locals as they are,
// then prologue, then each instruction (op, and ins its bytes) as emit
// appends it.
func rewriteBody(out, f, prologue []byte, emit func(out []byte, op byte, ins []byte) ([]byte, error)) ([]byte, error) {
	pos, err := skipLocals(f)
	if err != nil {
		return nil, err
	}
	out = append(out, f[:pos]...)
	out = append(out, prologue...)
	for pos < len(f) {
		start := pos
		op := f[pos]
		pos++
		k, err := immediates(op, f[pos:])
		if err != nil {
			return nil, fmt.Errorf("opcode %#x at %d: %w", op, start, err)
		}
		pos += k
		if out, err = emit(out, op, f[start:pos]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func pauseCheck(tableIndex uint32) []byte {
	b := []byte{0x23, goPause, 0x04, 0x40, 0x23, goSP, opI32Const, 0x08, 0x6b, 0x42}
	b = appendS64(b, int64(tableIndex)<<16)
	b = append(b, 0x37, 0x03, 0x00) // i64.store align=8 offset=0
	return append(b, opI32Const, 0x01, 0x0f, opEnd)
}

// windowLoop rewrites wasm_pc_f_loop (runtime/asm_wasm.s), whose body is
//
//	global.get $PAUSE; i32.eqz; if
//	  loop
//	    (PC_B and PC_F from -8(SP)); call_indirect; drop
//	    global.get $PAUSE; i32.eqz; br_if 0
//	  end
//	end ...
//
// with the checks of Instrument and CountCalls in it. The window step
// (windowStep) goes before the loop, for the first dispatch, and after
// each dispatch, for the next one if the loop goes on; the drop becomes
// "close the window if the frame unwound".
func windowLoop(out, f []byte, g hpGlobals) ([]byte, error) {
	step := windowStep(g)
	loops, calls := 0, 0
	dropNext := false
	out, err := rewriteBody(out, f, nil, func(out []byte, op byte, ins []byte) ([]byte, error) {
		if dropNext {
			if op != 0x1a {
				return nil, fmt.Errorf("%w: wasm_pc_f_loop's call_indirect is not followed by drop", errUnsupported)
			}
			dropNext = false
			// The drop becomes: if (unwound) { window closed }
			out = append(out, 0x04, 0x40, opI32Const, 0x00, 0x24)
			out = appendU32(out, g.lo)
			out = append(out, opEnd)
			// and if (!PAUSE) { step }
			out = append(out, 0x23, goPause, 0x45, 0x04, 0x40)
			out = append(out, step...)
			return append(out, opEnd), nil
		}
		switch op {
		case 0x03: // loop
			loops++
			out = append(out, step...)
		case 0x11: // call_indirect, then drop
			calls++
			dropNext = true
		}
		return append(out, ins...), nil
	})
	if err != nil {
		return nil, err
	}
	if loops != 1 || calls != 1 || dropNext {
		return nil, fmt.Errorf("%w: wasm_pc_f_loop has %d loops and %d indirect calls, want 1 and 1", errUnsupported, loops, calls)
	}
	return out, nil
}

// windowStep is run before each dispatch of wasm_pc_f_loop:
//
//	global.get $SP; global.set $loop_sp
//	global.get $lo
//	if
//	  global.get $SP; global.get $hi; i32.le_u
//	  if   ;; a frame the pause unwound: its entry is not work
//	    global.get $calls; i32.const 1; i32.add; global.set $calls
//	    global.get $budget; i32.const 1; i32.add; global.set $budget
//	  else
//	    i32.const 0; global.set $lo
//	  end
//	end
func windowStep(g hpGlobals) []byte {
	get := func(b []byte, i uint32) []byte { return appendU32(append(b, 0x23), i) }
	set := func(b []byte, i uint32) []byte { return appendU32(append(b, 0x24), i) }
	inc := func(b []byte, i uint32) []byte {
		b = get(b, i)
		b = append(b, opI32Const, 0x01, 0x6a)
		return set(b, i)
	}
	var b []byte
	b = get(b, goSP)
	b = set(b, g.loopSP)
	b = get(b, g.lo)
	b = append(b, 0x04, 0x40)
	b = get(b, goSP)
	b = get(b, g.hi)
	b = append(b, 0x4d, 0x04, 0x40) // i32.le_u; if
	b = inc(b, g.calls)
	b = inc(b, g.budget)
	b = append(b, 0x05, opI32Const, 0x00) // else
	b = set(b, g.lo)
	return append(b, opEnd, opEnd)
}

// appendS64 appends v as a signed LEB128.
func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
