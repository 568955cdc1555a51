package build

import (
	"fmt"
)

// CallsGlobal is the exported mutable i32 global that CountCalls adds. Every
// function entry of the guest (and, when asked, every loop iteration)
// decrements it; when it reaches zero the guest calls its sched_yield import
// and the host, seeing it at zero, may preempt the running goroutine and
// loads the next count. Its initial value is 1, so the host is asked for
// the first count at the guest's first function entry.
const CallsGlobal = "seedfall_calls"

// CountCalls returns a copy of a module that carries the loop budget
// (Instrument) which also counts calls in CallsGlobal: at every function
// entry, and with loops at every loop header too. Modules without a count
// pay nothing for it, which is why it is a separate step: the engine asks
// for it only for worlds that preempt. Entering a function again to resume
// it after a goroutine switch counts as an entry, as Go's wasm port enters
// it again.
func CountCalls(wasm []byte, loops bool) ([]byte, error) {
	if !Instrumented(wasm) {
		return nil, fmt.Errorf("%w: the module has no loop budget", errUnsupported)
	}
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	var imp, glob, exp, code *section
	for i := range secs {
		switch secs[i].id {
		case sectionImport:
			imp = &secs[i]
		case sectionGlobal:
			glob = &secs[i]
		case sectionExport:
			exp = &secs[i]
		case sectionCode:
			code = &secs[i]
		}
	}
	if imp == nil || glob == nil || exp == nil || code == nil {
		return nil, fmt.Errorf("%w: no import, global, export or code section", errUnsupported)
	}
	if Counted(wasm) {
		return nil, fmt.Errorf("%w: the module already counts calls", errUnsupported)
	}
	yield, importedGlobals, err := findYield(imp.payload)
	if err != nil {
		return nil, err
	}
	nglob, n, err := readU32(glob.payload)
	if err != nil {
		return nil, fmt.Errorf("global section: %w", err)
	}
	calls := importedGlobals + nglob
	newGlob := appendU32(nil, nglob+1)
	newGlob = append(newGlob, glob.payload[n:]...)
	newGlob = append(newGlob, 0x7f, 0x01, opI32Const, 0x01, opEnd) // mut i32 = 1

	nexp, n, err := readU32(exp.payload)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	newExp := appendU32(nil, nexp+1)
	newExp = append(newExp, exp.payload[n:]...)
	newExp = appendU32(newExp, uint32(len(CallsGlobal)))
	newExp = append(newExp, CallsGlobal...)
	newExp = append(newExp, 0x03) // global
	newExp = appendU32(newExp, calls)

	chk := check(calls, yield) // the same decrement-and-yield as the budget's
	var loop []byte
	if loops {
		loop = chk
	}
	newCode, err := instrumentCode(code.payload, chk, loop)
	if err != nil {
		return nil, err
	}

	out := append([]byte(nil), wasmHeader...)
	for _, s := range secs {
		switch s.id {
		case sectionGlobal:
			out = appendSection(out, s.id, newGlob)
		case sectionExport:
			out = appendSection(out, s.id, newExp)
		case sectionCode:
			out = appendSection(out, s.id, newCode)
		default:
			out = append(out, s.raw...)
		}
	}
	return out, nil
}

// Counted reports whether a module counts calls (CountCalls).
func Counted(wasm []byte) bool { return exportsGlobal(wasm, CallsGlobal) }
