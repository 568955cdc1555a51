package guest

import (
	"errors"
	"fmt"
	"strings"
)

// ResumeExport is the function that ExportPause exports: the Go runtime's
// wasm_pc_f_loop, of type () -> (). A guest built with the pause overlay
// (engine/guest/pauseoverlay) returns from the export the host called
// (_start, or this one) when it pauses, with its goroutine's stack in
// linear memory; calling ResumeExport then runs it on from there, until it
// pauses again or exits.
const ResumeExport = "seedfall_resume"

// GoGlobals names the eight globals of Go's wasm port, in the order the
// linker declares them (cmd/link/internal/wasm writeGlobalSec), as
// ExportPause exports them: SP, CTXT, g, RET0..RET3 and PAUSE.
var GoGlobals = [8]string{
	"seedfall_go_sp", "seedfall_go_ctxt", "seedfall_go_g",
	"seedfall_go_ret0", "seedfall_go_ret1", "seedfall_go_ret2", "seedfall_go_ret3",
	"seedfall_go_pause",
}

// goGlobalTypes are the value types of Go's globals, in order.
var goGlobalTypes = [8]byte{0x7f, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0x7f}

// ExportPause returns a copy of a Go wasip1 module that exports what a host
// needs to resume a paused guest and to copy its state: ResumeExport, and
// every mutable global the module defines, Go's eight under the names of
// GoGlobals and any other not yet exported (a counter of Instrument's is
// already) as "seedfall_global_N", N its index. Together with the memory,
// the exported mutable globals (MutableGlobals) are the guest's whole state
// at a pause. Only the export section changes.
//
// wasm_pc_f_loop is found as the last function _start calls (runtime
// rt0_wasip1_wasm.s); when the module has a name section, the name must
// agree. It returns errUnsupported (wrapped) for a module that is not a Go
// wasip1 command, or that already has the exports.
func ExportPause(wasm []byte) ([]byte, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	imp, glob, exp, code := sectionOf(secs, sectionImport), sectionOf(secs, sectionGlobal), sectionOf(secs, sectionExport), sectionOf(secs, sectionCode)
	var names []byte // the payload of the "name" custom section, if any
	for _, sec := range secs {
		if sec.id != sectionCustom {
			continue
		}
		if n, p, ok := customName(sec.payload); ok && n == "name" {
			names = p
		}
	}
	if imp == nil || glob == nil || exp == nil || code == nil {
		return nil, fmt.Errorf("%w: no import, global, export or code section", errUnsupported)
	}
	importedFuncs, importedGlobals, err := countImports(imp.payload)
	if err != nil {
		return nil, err
	}
	if importedGlobals != 0 {
		return nil, fmt.Errorf("%w: the module imports globals; Go's wasm modules do not", errUnsupported)
	}
	mutable, err := globalMutability(glob.payload)
	if err != nil {
		return nil, err
	}
	exports, err := parseExports(exp.payload)
	if err != nil {
		return nil, err
	}
	start := -1
	exportedGlobal := map[uint32]bool{}
	for _, e := range exports {
		switch {
		case e.name == ResumeExport:
			return nil, fmt.Errorf("%w: the module already exports %s", errUnsupported, ResumeExport)
		case e.name == "_start" && e.kind == 0x00:
			start = int(e.index)
		case e.kind == 0x03:
			exportedGlobal[e.index] = true
		}
	}
	if start < 0 {
		return nil, fmt.Errorf("%w: no _start export (a library, or not a wasip1 command)", errUnsupported)
	}
	if len(mutable) < len(GoGlobals) {
		return nil, fmt.Errorf("%w: %d globals, fewer than Go's %d", errUnsupported, len(mutable), len(GoGlobals))
	}
	for i, t := range goGlobalTypes {
		if mutable[i].typ != t || !mutable[i].mut {
			return nil, fmt.Errorf("%w: global %d is not Go's %s", errUnsupported, i, GoGlobals[i])
		}
	}
	if uint32(start) < importedFuncs {
		return nil, fmt.Errorf("%w: _start is an imported function", errUnsupported)
	}
	loop, err := lastCall(code.payload, uint32(start)-importedFuncs, importedFuncs)
	if err != nil {
		return nil, fmt.Errorf("%w: finding wasm_pc_f_loop in _start: %v", errUnsupported, err)
	}
	if names != nil {
		if name, ok := functionName(names, loop); ok && name != "wasm_pc_f_loop" {
			return nil, fmt.Errorf("%w: _start's last call is %s, not wasm_pc_f_loop", errUnsupported, name)
		}
	}

	nexp, n, err := readU32(exp.payload)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	added := 1
	body := append([]byte(nil), exp.payload[n:]...)
	body = appendExport(body, ResumeExport, 0x00, loop)
	for i, g := range mutable {
		if !g.mut || exportedGlobal[uint32(i)] {
			continue
		}
		name := fmt.Sprintf("seedfall_global_%d", i)
		if i < len(GoGlobals) {
			name = GoGlobals[i]
		}
		body = appendExport(body, name, 0x03, uint32(i))
		added++
	}
	newExp := appendU32(nil, nexp+uint32(added))
	newExp = append(newExp, body...)

	return withSections(secs, map[byte][]byte{sectionExport: newExp}), nil
}

// Pausable reports whether a module has the exports of ExportPause.
func Pausable(wasm []byte) bool {
	secs, err := splitSections(wasm)
	if err != nil {
		return false
	}
	for _, s := range secs {
		if s.id != sectionExport {
			continue
		}
		exports, err := parseExports(s.payload)
		if err != nil {
			return false
		}
		for _, e := range exports {
			if e.name == ResumeExport && e.kind == 0x00 {
				return true
			}
		}
	}
	return false
}

// MutableGlobals returns the names of the mutable globals a module exports,
// in the order of their indices: what a snapshot of a paused guest must
// copy besides its memory.
func MutableGlobals(wasm []byte) ([]string, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	glob, exp, imp := sectionOf(secs, sectionGlobal), sectionOf(secs, sectionExport), sectionOf(secs, sectionImport)
	if glob == nil || exp == nil {
		return nil, nil
	}
	var importedGlobals uint32
	if imp != nil {
		if _, importedGlobals, err = countImports(imp.payload); err != nil {
			return nil, err
		}
	}
	mutable, err := globalMutability(glob.payload)
	if err != nil {
		return nil, err
	}
	exports, err := parseExports(exp.payload)
	if err != nil {
		return nil, err
	}
	byIndex := map[uint32]string{}
	for _, e := range exports {
		if e.kind != 0x03 || e.index < importedGlobals {
			continue
		}
		i := e.index - importedGlobals
		if int(i) < len(mutable) && mutable[i].mut {
			if _, dup := byIndex[i]; !dup {
				byIndex[i] = e.name
			}
		}
	}
	var out []string
	for i := range mutable {
		if name, ok := byIndex[uint32(i)]; ok {
			out = append(out, name)
		}
	}
	return out, nil
}

// StripData returns a copy of wasm without data segments: the data section,
// and the data count section if there is one, become empty. Instantiating it
// writes nothing into the new memory, which is what a restore wants: the
// whole memory comes from a snapshot. It refuses modules whose code could
// refer to a segment (memory.init, data.drop), which Go does not emit.
func StripData(wasm []byte) ([]byte, error) {
	secs, err := splitSections(wasm)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), wasmHeader...)
	for _, s := range secs {
		switch s.id {
		case sectionData, sectionDataCount:
			out = appendSection(out, s.id, []byte{0})
		case sectionCode:
			if usesSegments(s.payload) {
				return nil, fmt.Errorf("%w: the code refers to data segments (memory.init or data.drop)", errUnsupported)
			}
			out = append(out, s.raw...)
		default:
			out = append(out, s.raw...)
		}
	}
	return out, nil
}

// usesSegments reports whether any function body has a memory.init or
// data.drop instruction (0xfc 8, 0xfc 9), or cannot be decoded.
func usesSegments(p []byte) bool {
	found := false
	err := eachInstruction(p, func(_ uint32, op byte, imm []byte) bool {
		if op == 0xfc {
			if sub, _, err := readU32(imm); err == nil && (sub == 8 || sub == 9) {
				found = true
				return false
			}
		}
		return true
	})
	return found || err != nil
}

// eachInstruction calls f with every instruction of every function body of a
// code section (the function's index in the section, its opcode and
// immediates) until f returns false.
func eachInstruction(p []byte, f func(fn uint32, op byte, imm []byte) bool) error {
	count, n, err := readU32(p)
	if err != nil {
		return fmt.Errorf("code section: %w", err)
	}
	pos := n
	for i := uint32(0); i < count; i++ {
		size, n, err := readU32(p[pos:])
		if err != nil || uint64(size) > uint64(len(p)-pos-n) {
			return fmt.Errorf("code section: function %d: bad size", i)
		}
		pos += n
		body := p[pos : pos+int(size)]
		pos += int(size)
		nloc, m, err := readU32(body)
		if err != nil {
			return fmt.Errorf("code section: function %d: locals: %w", i, err)
		}
		at := m
		for j := uint32(0); j < nloc; j++ {
			_, m, err := readU32(body[at:])
			if err != nil || at+m >= len(body) {
				return fmt.Errorf("code section: function %d: bad locals", i)
			}
			at += m + 1
		}
		for at < len(body) {
			op := body[at]
			k, err := immediates(op, body[at+1:])
			if err != nil {
				return fmt.Errorf("code section: function %d: opcode %#x at %d: %w", i, op, at, err)
			}
			if !f(i, op, body[at+1:at+1+k]) {
				return nil
			}
			at += 1 + k
		}
	}
	return nil
}

// lastCall returns the function index of the last call in the body of the
// fn-th function of a code section that does not call an import (the
// instrumentation's sched_yield).
func lastCall(p []byte, fn, importedFuncs uint32) (uint32, error) {
	last, found := uint32(0), false
	err := eachInstruction(p, func(i uint32, op byte, imm []byte) bool {
		if i < fn {
			return true
		}
		if i > fn {
			return false
		}
		if op == 0x10 {
			if callee, _, err := readU32(imm); err == nil && callee >= importedFuncs {
				last, found = callee, true
			}
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, errors.New("_start calls no function")
	}
	return last, nil
}

type export struct {
	name  string
	kind  byte
	index uint32
}

func parseExports(p []byte) ([]export, error) {
	count, pos, err := readU32(p)
	if err != nil {
		return nil, fmt.Errorf("export section: %w", err)
	}
	if uint64(count) > uint64(len(p)) {
		return nil, errors.New("export section: bad count")
	}
	out := make([]export, 0, count)
	for i := uint32(0); i < count; i++ {
		l, n, err := readU32(p[pos:])
		if err != nil || uint64(l)+1 > uint64(len(p)-pos-n) {
			return nil, errors.New("export section: bad name")
		}
		name := string(p[pos+n : pos+n+int(l)])
		pos += n + int(l)
		kind := p[pos]
		idx, m, err := readU32(p[pos+1:])
		if err != nil {
			return nil, fmt.Errorf("export section: %w", err)
		}
		pos += 1 + m
		out = append(out, export{name, kind, idx})
	}
	return out, nil
}

func appendExport(b []byte, name string, kind byte, index uint32) []byte {
	b = appendU32(b, uint32(len(name)))
	b = append(b, name...)
	b = append(b, kind)
	return appendU32(b, index)
}

type globalType struct {
	typ byte
	mut bool
}

// globalMutability decodes the types of a global section's globals. Each
// initializer must be one constant instruction, as Go and Instrument write
// them.
func globalMutability(p []byte) ([]globalType, error) {
	count, pos, err := readU32(p)
	if err != nil {
		return nil, fmt.Errorf("global section: %w", err)
	}
	if uint64(count) > uint64(len(p)) {
		return nil, errors.New("global section: bad count")
	}
	out := make([]globalType, 0, count)
	for i := uint32(0); i < count; i++ {
		if pos+2 > len(p) {
			return nil, errors.New("global section: truncated")
		}
		g := globalType{typ: p[pos], mut: p[pos+1] == 1}
		pos += 2
		if pos >= len(p) {
			return nil, errors.New("global section: truncated")
		}
		op := p[pos]
		k, err := immediates(op, p[pos+1:])
		if err != nil {
			return nil, fmt.Errorf("global section: global %d: %w", i, err)
		}
		pos += 1 + k
		if pos >= len(p) || p[pos] != opEnd {
			return nil, fmt.Errorf("%w: global %d: initializer is not one constant", errUnsupported, i)
		}
		pos++
		out = append(out, g)
	}
	return out, nil
}

// countImports returns the numbers of imported functions and globals.
func countImports(p []byte) (funcs, globals uint32, err error) {
	err = eachImport(p, func(_, _ string, kind byte) {
		switch kind {
		case 0x00:
			funcs++
		case 0x03:
			globals++
		}
	})
	return funcs, globals, err
}

// eachImport calls f with the module, name and kind of each import of an
// import section's payload p.
func eachImport(p []byte, f func(mod, name string, kind byte)) error {
	count, pos, err := readU32(p)
	if err != nil {
		return fmt.Errorf("import section: %w", err)
	}
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
			return err
		}
		field, err := name()
		if err != nil {
			return err
		}
		if pos >= len(p) {
			return errors.New("import section: truncated")
		}
		kind := p[pos]
		pos++
		var n int
		switch kind {
		case 0x00:
			_, n, err = readU32(p[pos:])
		case 0x01:
			if pos >= len(p) {
				return errors.New("import section: truncated")
			}
			pos++
			n, err = skipLimits(p[pos:])
		case 0x02:
			n, err = skipLimits(p[pos:])
		case 0x03:
			n = 2
			if pos+2 > len(p) {
				err = errors.New("truncated")
			}
		default:
			return fmt.Errorf("%w: import kind %d", errUnsupported, kind)
		}
		if err != nil {
			return fmt.Errorf("import section: %w", err)
		}
		pos += n
		f(mod, field, kind)
	}
	return nil
}

// customName splits a custom section's payload into its name and contents.
func customName(p []byte) (string, []byte, bool) {
	l, n, err := readU32(p)
	if err != nil || uint64(l) > uint64(len(p)-n) {
		return "", nil, false
	}
	return string(p[n : n+int(l)]), p[n+int(l):], true
}

// functionName looks a function index up in the function names subsection
// of a "name" section's contents.
func functionName(p []byte, fn uint32) (string, bool) {
	for len(p) > 0 {
		id := p[0]
		size, n, err := readU32(p[1:])
		if err != nil || uint64(size) > uint64(len(p)-1-n) {
			return "", false
		}
		sub := p[1+n : 1+n+int(size)]
		p = p[1+n+int(size):]
		if id != 1 {
			continue
		}
		count, pos, err := readU32(sub)
		if err != nil {
			return "", false
		}
		for i := uint32(0); i < count; i++ {
			idx, m, err := readU32(sub[pos:])
			if err != nil {
				return "", false
			}
			pos += m
			l, m, err := readU32(sub[pos:])
			if err != nil || uint64(l) > uint64(len(sub)-pos-m) {
				return "", false
			}
			name := string(sub[pos+m : pos+m+int(l)])
			pos += m + int(l)
			if idx == fn {
				return strings.Clone(name), true
			}
		}
		return "", false
	}
	return "", false
}

// Segment is an active data segment of memory 0: what instantiation
// writes at Offset.
type Segment struct {
	Offset uint32
	Data   []byte
}

// DataSegments returns the data segments of wasm, in order, for a host
// that instantiates the module without them (StripData) and writes them
// itself. It fails for passive segments, another memory, or an offset
// that is not a constant, which Go does not emit.
func DataSegments(wasm []byte) ([]Segment, error) {
	segs, err := moduleData(wasm)
	if err != nil {
		return nil, err
	}
	out := make([]Segment, 0, len(segs))
	for i, s := range segs {
		if s.mode == 1 || s.memory != 0 || !s.constOffset {
			return nil, fmt.Errorf("%w: data segment %d is passive, of another memory, or at a computed offset", errUnsupported, i)
		}
		out = append(out, Segment{Offset: s.offset, Data: s.init})
	}
	return out, nil
}

// SnapshotPoint reports whether wasm imports seedfall.snapshot_point: it
// was built with the pause overlay (engine/guest/pauseoverlay), whose
// runtime asks the host there whether to pause before main.main.
func SnapshotPoint(wasm []byte) bool {
	secs, err := splitSections(wasm)
	if err != nil {
		return false
	}
	imp := sectionOf(secs, sectionImport)
	if imp == nil {
		return false
	}
	found := false
	_ = eachImport(imp.payload, func(mod, name string, kind byte) {
		if mod == "seedfall" && name == "snapshot_point" && kind == 0x00 {
			found = true
		}
	})
	return found
}
