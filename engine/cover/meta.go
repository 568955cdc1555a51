// Package cover reads Go's coverage counters out of a guest (issue 28).
//
// A program built with "coverage" on is compiled with `go build -cover
// -covermode=count -coverpkg=...`: every block of the covered packages
// counts in its counter the times it ran. The pause overlay
// (engine/guest/pauseoverlay, Options.Cover) has the guest tell the host,
// once after package init, each covered package's metadata (files,
// functions, and the source span of every block) and where its counters
// are in linear memory. The host reads the counters whenever it likes:
// they are plain memory, and a copy of the guest (a snapshot, a fork) has
// them too, so the coverage of a fork is that of the same run from scratch.
//
// This package decodes the metadata (the format of Go's
// internal/coverage/encodemeta), turns counter memory into the indices of
// the blocks that ran (Map.Scan), keeps sets of them (Set), and draws what
// people read: a text summary and an HTML page in the style of `go tool
// cover` (report.go).
package cover

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Unit is one block of source the compiler counts: it runs whole or not at
// all.
type Unit struct {
	Func                         int // index in Map.Funcs
	StLine, StCol, EnLine, EnCol uint32
	Stmts                        uint32 // statements in the block
}

// Func is one function of a covered package.
type Func struct {
	Pkg  int    // index in Map.Pkgs
	Name string // "Server.apply", or "func1" for a literal
	File string // the import path of its package, slash, the file's base name
	Lit  bool   // a function literal
}

// Pkg is one covered package.
type Pkg struct {
	Path, Name, Module string
}

// Meta is a package's metadata blob as the guest gives it, with the ID its
// counters carry.
type Meta struct {
	ID   uint32
	Blob []byte
}

// Map is the coverage layout of one binary: every block of every covered
// package, numbered from 0 in the order of packages, functions and blocks.
// A unit's number is what a Set holds.
type Map struct {
	Pkgs  []Pkg
	Funcs []Func
	Units []Unit

	first map[funcKey]int // (package ID, function index) -> first unit
	count map[funcKey]int // and how many units it has
}

type funcKey struct{ pkg, fn uint32 }

// The layout of a metadata blob: a header of seven 32-bit words and a hash,
// an offset per function, a string table, then the functions.
const headerSize = 16 + 4*7

// Most of anything a blob may declare, far above what Go writes: a bound
// on what a malformed or hostile blob makes the host allocate.
const maxDeclared = 1 << 22

// NewMap decodes the metadata of a binary's covered packages, in the
// order given.
func NewMap(metas []Meta) (*Map, error) {
	m := &Map{first: map[funcKey]int{}, count: map[funcKey]int{}}
	for _, meta := range metas {
		if err := m.add(meta); err != nil {
			return nil, fmt.Errorf("coverage metadata of package %d: %w", meta.ID, err)
		}
	}
	return m, nil
}

var errShort = errors.New("truncated")

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) u32(at int) uint32 {
	if at < 0 || at+4 > len(r.b) {
		r.err = errShort
		return 0
	}
	return binary.LittleEndian.Uint32(r.b[at:])
}

func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if r.off >= len(r.b) || shift > 63 {
			r.err = errShort
			return 0
		}
		c := r.b[r.off]
		r.off++
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
}

func (m *Map) add(meta Meta) error {
	r := &reader{b: meta.Blob}
	length := r.u32(0)
	pkgName, pkgPath, modPath := r.u32(4), r.u32(8), r.u32(12)
	nfuncs := r.u32(headerSize - 4)
	if r.err != nil {
		return r.err
	}
	if int(length) > len(meta.Blob) || nfuncs > maxDeclared {
		return fmt.Errorf("malformed header (length %d of %d bytes, %d functions)", length, len(meta.Blob), nfuncs)
	}
	r.b = r.b[:length]
	// The string table follows the function offsets.
	r.off = headerSize + 4*int(nfuncs)
	nstr := r.uleb()
	if nstr > maxDeclared {
		return fmt.Errorf("malformed string table (%d strings)", nstr)
	}
	strs := make([]string, 0, min(nstr, 1024))
	for i := uint64(0); i < nstr && r.err == nil; i++ {
		n := r.uleb()
		if n > uint64(len(r.b)-r.off) {
			return errShort
		}
		strs = append(strs, string(r.b[r.off:r.off+int(n)]))
		r.off += int(n)
	}
	str := func(i uint64) string {
		if i >= uint64(len(strs)) {
			r.err = fmt.Errorf("string %d of %d", i, len(strs))
			return ""
		}
		return strs[i]
	}
	pkg := len(m.Pkgs)
	m.Pkgs = append(m.Pkgs, Pkg{Path: str(uint64(pkgPath)), Name: str(uint64(pkgName)), Module: str(uint64(modPath))})
	for fi := uint32(0); fi < nfuncs && r.err == nil; fi++ {
		r.off = int(r.u32(headerSize + 4*int(fi)))
		nunits := r.uleb()
		name, file := str(r.uleb()), str(r.uleb())
		if nunits > maxDeclared {
			return fmt.Errorf("function %d declares %d blocks", fi, nunits)
		}
		fn := len(m.Funcs)
		key := funcKey{meta.ID, fi}
		m.first[key], m.count[key] = len(m.Units), int(nunits)
		for k := uint64(0); k < nunits && r.err == nil; k++ {
			m.Units = append(m.Units, Unit{Func: fn, StLine: uint32(r.uleb()), StCol: uint32(r.uleb()),
				EnLine: uint32(r.uleb()), EnCol: uint32(r.uleb()), Stmts: uint32(r.uleb())})
		}
		lit := r.uleb() != 0
		m.Funcs = append(m.Funcs, Func{Pkg: pkg, Name: name, File: file, Lit: lit})
	}
	return r.err
}

// Scan calls hit with the number of every unit whose counter is set in
// mem, and the counter, one region of counters as the guest keeps them (32-bit words, little
// endian): a function that ran has a header (its counter count, package ID
// and function index) before its counters; one that never ran is all zero.
// Words it cannot make sense of are skipped: the guest's memory is the
// guest's.
func (m *Map) Scan(mem []byte, hit func(unit int, count uint32)) {
	words := len(mem) / 4
	for i := 0; i < words; i++ {
		n := binary.LittleEndian.Uint32(mem[4*i:])
		if n == 0 {
			continue
		}
		if i+3 > words {
			return
		}
		key := funcKey{binary.LittleEndian.Uint32(mem[4*i+4:]), binary.LittleEndian.Uint32(mem[4*i+8:])}
		first, ok := m.first[key]
		if !ok || m.count[key] != int(n) || i+3+int(n) > words {
			continue
		}
		for k := 0; k < int(n); k++ {
			if c := binary.LittleEndian.Uint32(mem[4*(i+3+k):]); c != 0 {
				hit(first+k, c)
			}
		}
		i += 2 + int(n)
	}
}

// Stmts is the number of statements of the units.
func (m *Map) Stmts() int {
	n := 0
	for _, u := range m.Units {
		n += int(u.Stmts)
	}
	return n
}

// Where is a unit's place for people: "kvlog/server/main.go:42".
func (m *Map) Where(unit int) string {
	if unit < 0 || unit >= len(m.Units) {
		return fmt.Sprintf("block %d", unit)
	}
	u := m.Units[unit]
	f := m.Funcs[u.Func]
	return fmt.Sprintf("%s:%d", shortFile(f.File, m.Pkgs[f.Pkg].Module), u.StLine)
}

// shortFile is a file's path inside its module, or its import path when
// that module is not known.
func shortFile(file, module string) string {
	if module != "" {
		if rest, ok := strings.CutPrefix(file, module+"/"); ok {
			return rest
		}
	}
	return file
}

// Files is the units of each file, files sorted by name.
func (m *Map) Files() map[string][]int {
	out := map[string][]int{}
	for i, u := range m.Units {
		f := m.Funcs[u.Func].File
		out[f] = append(out[f], i)
	}
	for _, us := range out {
		slices.SortStableFunc(us, func(a, b int) int {
			ua, ub := m.Units[a], m.Units[b]
			if ua.StLine != ub.StLine {
				return int(ua.StLine) - int(ub.StLine)
			}
			return int(ua.StCol) - int(ub.StCol)
		})
	}
	return out
}
