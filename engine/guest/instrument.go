package guest

import (
	"errors"
	"fmt"
)

// BudgetGlobal is the exported mutable i32 global that Instrument adds. Every
// loop iteration of the guest decrements it; when it reaches zero the guest
// calls its sched_yield import, and the host, seeing the budget at zero,
// resets it and checks how long the guest has run. That makes every loop a
// place where the host regains control, so the watchdog can stop a guest that
// never yields, and Go's own stop-the-world (which cannot preempt compiled
// wasm) never waits on a guest for longer than one budget.
const BudgetGlobal = "seedfall_budget"

// LoopBudget is the number of loop iterations between two checks: about a
// millisecond of guest work, so the checks cost nothing measurable.
const LoopBudget = 1 << 20

const (
	sectionImport = 2
	sectionGlobal = 6
	sectionExport = 7
	sectionCode   = 10
)

// Instrument adds the loop budget to a module. It returns errUnsupported
// (wrapped) for a well-formed module it cannot instrument: one without a
// sched_yield import, or using instructions Go does not emit.
func Instrument(wasm []byte) ([]byte, error) {
	return addCounter(wasm, BudgetGlobal, LoopBudget, false, true)
}

// addCounter returns a copy of wasm with one more exported mutable i32
// global, name, starting at init, which the code counts down (at every
// function entry, at every loop header, or both) and which calls the
// sched_yield import when it reaches zero.
func addCounter(wasm []byte, name string, init int32, entries, loops bool) ([]byte, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	imp, glob, exp, code := sectionOf(secs, sectionImport), sectionOf(secs, sectionGlobal), sectionOf(secs, sectionExport), sectionOf(secs, sectionCode)
	if imp == nil || glob == nil || exp == nil || code == nil {
		return nil, fmt.Errorf("%w: no import, global, export or code section", errUnsupported)
	}
	yield, importedGlobals, err := findYield(imp.payload)
	if err != nil {
		return nil, err
	}
	nglob, n, err := readU32(glob.payload)
	if err != nil {
		return nil, fmt.Errorf("global section: %w", err)
	}
	counter := importedGlobals + nglob
	newGlob := appendU32(nil, nglob+1)
	newGlob = append(newGlob, glob.payload[n:]...)
	newGlob = append(newGlob, 0x7f, 0x01, opI32Const) // mut i32
	newGlob = appendS32(newGlob, init)
	newGlob = append(newGlob, opEnd)

	nexp, n, err := readU32(exp.payload)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	newExp := appendU32(nil, nexp+1)
	newExp = append(newExp, exp.payload[n:]...)
	newExp = appendU32(newExp, uint32(len(name)))
	newExp = append(newExp, name...)
	newExp = append(newExp, 0x03) // global
	newExp = appendU32(newExp, counter)

	chk := check(counter, yield)
	var entry, loop []byte
	if entries {
		entry = chk
	}
	if loops {
		loop = chk
	}
	newCode, err := instrumentCode(code.payload, entry, loop)
	if err != nil {
		return nil, err
	}

	return withSections(secs, map[byte][]byte{sectionGlobal: newGlob, sectionExport: newExp, sectionCode: newCode}), nil
}

// check is the code inserted at the top of every loop body:
//
//	global.get $budget; i32.const 1; i32.sub; global.set $budget
//	global.get $budget; i32.eqz; if; call $sched_yield; drop; end
func check(budget, yield uint32) []byte {
	var b []byte
	b = append(b, 0x23)
	b = appendU32(b, budget)
	b = append(b, opI32Const, 0x01, 0x6b, 0x24)
	b = appendU32(b, budget)
	b = append(b, 0x23)
	b = appendU32(b, budget)
	b = append(b, 0x45, 0x04, 0x40, 0x10)
	b = appendU32(b, yield)
	return append(b, 0x1a, opEnd)
}

// findYield returns the function index of the sched_yield import and the
// number of imported globals.
func findYield(p []byte) (yield, globals uint32, err error) {
	count, n, err := readU32(p)
	if err != nil {
		return 0, 0, fmt.Errorf("import section: %w", err)
	}
	pos := n
	var funcs uint32
	found := false
	name := func() (string, error) {
		l, n, err := readU32(p[pos:])
		if err != nil || uint64(l) > uint64(len(p)-pos-n) {
			return "", errors.New("import section: bad name")
		}
		s := string(p[pos+n : pos+n+int(l)])
		pos += n + int(l)
		return s, nil
	}
	for i := uint32(0); i < count; i++ {
		mod, err := name()
		if err != nil {
			return 0, 0, err
		}
		field, err := name()
		if err != nil {
			return 0, 0, err
		}
		if pos >= len(p) {
			return 0, 0, errors.New("import section: truncated")
		}
		kind := p[pos]
		pos++
		switch kind {
		case 0x00: // function: type index
			if mod == "wasi_snapshot_preview1" && field == "sched_yield" {
				yield, found = funcs, true
			}
			funcs++
			_, n, err = readU32(p[pos:])
			pos += n
		case 0x01: // table: reftype, limits
			if pos >= len(p) {
				return 0, 0, errors.New("import section: truncated")
			}
			pos++
			n, err = skipLimits(p[pos:])
			pos += n
		case 0x02: // memory: limits
			n, err = skipLimits(p[pos:])
			pos += n
		case 0x03: // global: valtype, mutability
			globals++
			pos += 2
		default:
			return 0, 0, fmt.Errorf("%w: import kind %d", errUnsupported, kind)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("import section: %w", err)
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("%w: no wasi_snapshot_preview1.sched_yield import", errUnsupported)
	}
	return yield, globals, nil
}

func skipLimits(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, errors.New("truncated limits")
	}
	flags := p[0]
	pos := 1
	_, n, err := readU32(p[pos:])
	if err != nil {
		return 0, err
	}
	pos += n
	if flags&1 != 0 {
		_, n, err = readU32(p[pos:])
		if err != nil {
			return 0, err
		}
		pos += n
	}
	return pos, nil
}

// instrumentCode rewrites every function body of a code section, inserting
// entry at the start of each body and loop after each loop's block type.
func instrumentCode(p, entry, loop []byte) ([]byte, error) {
	return rewriteCode(p, len(p)/8, func(_ uint32, out, f []byte) ([]byte, error) {
		return instrumentBody(out, f, entry, loop)
	})
}

// rewriteCode rewrites every function body of a code section p through
// body, which appends the new body of the i-th function (f) to out; grow
// is how much larger the section is expected to get.
func rewriteCode(p []byte, grow int, body func(i uint32, out, f []byte) ([]byte, error)) ([]byte, error) {
	count, n, err := readU32(p)
	if err != nil {
		return nil, fmt.Errorf("code section: %w", err)
	}
	out := appendU32(make([]byte, 0, len(p)+grow), count)
	pos := n
	var b []byte
	for i := uint32(0); i < count; i++ {
		size, n, err := readU32(p[pos:])
		if err != nil || uint64(size) > uint64(len(p)-pos-n) {
			return nil, fmt.Errorf("code section: function %d: bad size", i)
		}
		pos += n
		b, err = body(i, b[:0], p[pos:pos+int(size)])
		if err != nil {
			return nil, fmt.Errorf("code section: function %d: %w", i, err)
		}
		out = appendU32(out, uint32(len(b)))
		out = append(out, b...)
		pos += int(size)
	}
	return out, nil
}

func instrumentBody(out, f, entry, loop []byte) ([]byte, error) {
	return rewriteBody(out, f, entry, func(out []byte, op byte, ins []byte) ([]byte, error) {
		out = append(out, ins...)
		if op == 0x03 { // loop
			out = append(out, loop...)
		}
		return out, nil
	})
}

// immediates returns the length of the immediates of opcode op, for every
// instruction Go's wasm backend emits (MVP, sign extension, saturating
// conversions, bulk memory).
func immediates(op byte, p []byte) (int, error) {
	u32s := func(k int) (int, error) {
		pos := 0
		for i := 0; i < k; i++ {
			_, n, err := readU32(p[pos:])
			if err != nil {
				return 0, err
			}
			pos += n
		}
		return pos, nil
	}
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block type
		if len(p) == 0 {
			return 0, errors.New("truncated")
		}
		if p[0] == 0x40 || (p[0] >= 0x6f && p[0] <= 0x7f) {
			return 1, nil
		}
		_, n, err := readS33(p)
		return n, err
	case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b:
		return 0, nil
	case op == 0x0c || op == 0x0d || op == 0x10: // br, br_if, call
		return u32s(1)
	case op == 0x0e: // br_table
		cnt, n, err := readU32(p)
		if err != nil {
			return 0, err
		}
		m, err := func() (int, error) {
			pos := n
			for i := uint64(0); i <= uint64(cnt); i++ {
				_, k, err := readU32(p[pos:])
				if err != nil {
					return 0, err
				}
				pos += k
			}
			return pos, nil
		}()
		return m, err
	case op == 0x11: // call_indirect
		return u32s(2)
	case op == 0x1c: // select t*
		cnt, n, err := readU32(p)
		if err != nil || uint64(cnt) > uint64(len(p)-n) {
			return 0, errors.New("bad select types")
		}
		return n + int(cnt), nil
	case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
		return u32s(1)
	case op >= 0x28 && op <= 0x3e: // memarg
		return u32s(2)
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		return u32s(1)
	case op == 0x41:
		_, n, err := readS32(p)
		return n, err
	case op == 0x42:
		return skipLEB(p, 10)
	case op == 0x43:
		return need(p, 4)
	case op == 0x44:
		return need(p, 8)
	case op >= 0x45 && op <= 0xc4:
		return 0, nil
	case op == 0xd0: // ref.null t
		return need(p, 1)
	case op == 0xd1:
		return 0, nil
	case op == 0xd2: // ref.func
		return u32s(1)
	case op == 0xfc:
		sub, n, err := readU32(p)
		if err != nil {
			return 0, err
		}
		var k int
		switch {
		case sub <= 7:
			k = 0
		case sub == 9 || sub == 13 || sub == 15 || sub == 16 || sub == 17:
			k = 1
		case sub == 8 || sub == 10 || sub == 12 || sub == 14:
			k = 2
		case sub == 11:
			k = 1
		default:
			return 0, fmt.Errorf("%w: 0xfc %d", errUnsupported, sub)
		}
		pos := n
		for i := 0; i < k; i++ {
			_, m, err := readU32(p[pos:])
			if err != nil {
				return 0, err
			}
			pos += m
		}
		return pos, nil
	}
	return 0, fmt.Errorf("%w: opcode %#x", errUnsupported, op)
}

func need(p []byte, n int) (int, error) {
	if len(p) < n {
		return 0, errors.New("truncated")
	}
	return n, nil
}

// skipLEB returns the length of a LEB128 number of at most max bytes.
func skipLEB(p []byte, max int) (int, error) {
	for i := 0; i < len(p) && i < max; i++ {
		if p[i]&0x80 == 0 {
			return i + 1, nil
		}
	}
	return 0, errors.New("bad LEB128")
}

// readS33 reads a block type index.
func readS33(p []byte) (int64, int, error) {
	n, err := skipLEB(p, 5)
	return 0, n, err
}

// Instrumented reports whether a module carries the loop budget.
func Instrumented(wasm []byte) bool { return exportsGlobal(wasm, BudgetGlobal) }

// exportsGlobal reports whether a module exports a global named global.
func exportsGlobal(wasm []byte, global string) bool {
	secs, err := splitSections(wasm)
	if err != nil {
		return false
	}
	for _, s := range secs {
		if s.id != sectionExport {
			continue
		}
		p := s.payload
		count, pos, err := readU32(p)
		if err != nil {
			return false
		}
		for i := uint32(0); i < count; i++ {
			l, n, err := readU32(p[pos:])
			if err != nil || uint64(l)+1 > uint64(len(p)-pos-n) {
				return false
			}
			name := string(p[pos+n : pos+n+int(l)])
			pos += n + int(l)
			kind := p[pos]
			_, m, err := readU32(p[pos+1:])
			if err != nil {
				return false
			}
			pos += 1 + m
			if name == global && kind == 0x03 {
				return true
			}
		}
	}
	return false
}
