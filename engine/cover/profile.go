package cover

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A Profile is coverage as Go's own text coverprofile keeps it: a line
// "mode: set", then a line per block of source,
//
//	import/path/file.go:startLine.startCol,endLine.endCol numStmts count
//
// as `go test -coverprofile` writes it, so that `go tool cover -html=`
// and `-func=` read what seedfall writes. It names blocks by their place
// in the source, not by a binary's numbering: the profiles of runs of
// different programs, or of shards of a sweep, merge block by block.

// Block is one block of source in a profile.
type Block struct {
	File                         string // the import path of its package, slash, the file's base name
	StLine, StCol, EnLine, EnCol uint32
	Stmts                        uint32
	Hit                          bool // it ran
}

// Profile is the blocks of a coverage profile, sorted by file and place,
// one per span of source.
type Profile struct {
	Blocks []Block
}

// Profile is the run's coverage as a profile: every block of every
// program's covered packages, and whether it ran. A block that two
// programs share (a package both link) ran if it ran in either.
func (r *Run) Profile() *Profile {
	p := &Profile{}
	if r == nil {
		return p
	}
	for _, prog := range slices.Sorted(maps.Keys(r.Maps)) {
		m := r.Maps[prog]
		for i, u := range m.Units {
			p.Blocks = append(p.Blocks, Block{File: m.Funcs[u.Func].File, StLine: u.StLine, StCol: u.StCol,
				EnLine: u.EnLine, EnCol: u.EnCol, Stmts: u.Stmts, Hit: r.Hit != nil && r.Hit.Has(prog, i)})
		}
	}
	p.normalize()
	return p
}

// WriteProfile writes the run's coverage as a Go coverprofile.
func (r *Run) WriteProfile(w io.Writer) error { return r.Profile().Write(w) }

// MergeRun adds o's coverage to into and returns it (a new Run when into
// is nil): the blocks that ran in either. A program whose binary differs
// between the two (a world changed between runs) is kept under a second
// name, so that its blocks keep their meaning. What ran when (First) is
// of one run and is not kept.
func MergeRun(into, o *Run) *Run {
	if into == nil {
		into = &Run{Maps: map[string]*Map{}, Hit: NewSet()}
	}
	if o == nil {
		return into
	}
	for _, prog := range slices.Sorted(maps.Keys(o.Maps)) {
		m := o.Maps[prog]
		name := prog
		for k := 2; ; k++ {
			have, ok := into.Maps[name]
			if !ok {
				into.Maps[name] = m
				break
			}
			if have == m || sameLayout(have, m) {
				break
			}
			name = fmt.Sprintf("%s#%d", prog, k)
		}
		if o.Hit != nil {
			for _, u := range o.Hit.Units(prog) {
				into.Hit.Add(name, u)
			}
		}
	}
	return into
}

// sameLayout reports whether two maps number the same blocks alike.
func sameLayout(a, b *Map) bool {
	return slices.Equal(a.Units, b.Units) && slices.Equal(a.Funcs, b.Funcs)
}

// Stmts counts the statements of the profile and those that ran.
func (p *Profile) Stmts() (hit, all int) {
	for _, b := range p.Blocks {
		all += int(b.Stmts)
		if b.Hit {
			hit += int(b.Stmts)
		}
	}
	return hit, all
}

// Merge is the union of profiles: a block ran if it ran in any of them.
// Nil profiles are skipped.
func Merge(ps ...*Profile) *Profile {
	out := &Profile{}
	for _, p := range ps {
		if p != nil {
			out.Blocks = append(out.Blocks, p.Blocks...)
		}
	}
	out.normalize()
	return out
}

func compareBlocks(a, b Block) int {
	return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.StLine, b.StLine), cmp.Compare(a.StCol, b.StCol),
		cmp.Compare(a.EnLine, b.EnLine), cmp.Compare(a.EnCol, b.EnCol))
}

// normalize sorts the blocks and makes one of each span: it ran if any
// of them ran.
func (p *Profile) normalize() {
	slices.SortStableFunc(p.Blocks, compareBlocks)
	out := p.Blocks[:0]
	for _, b := range p.Blocks {
		if n := len(out); n > 0 && compareBlocks(out[n-1], b) == 0 {
			out[n-1].Hit = out[n-1].Hit || b.Hit
			continue
		}
		out = append(out, b)
	}
	p.Blocks = out
}

// Write writes the profile in Go's text format, mode set.
func (p *Profile) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("mode: set\n")
	for _, b := range p.Blocks {
		hit := 0
		if b.Hit {
			hit = 1
		}
		fmt.Fprintf(bw, "%s:%d.%d,%d.%d %d %d\n", b.File, b.StLine, b.StCol, b.EnLine, b.EnCol, b.Stmts, hit)
	}
	return bw.Flush()
}

// Bytes is the profile as Write writes it.
func (p *Profile) Bytes() []byte {
	var b bytes.Buffer
	p.Write(&b)
	return b.Bytes()
}

// Limits on what ReadProfile takes, far above any real profile: a damaged
// or hostile file makes an error, not a host out of memory.
const maxProfileLine = 4096 // bytes in a line

var maxProfileBlocks = 1 << 22 // blocks in a profile (a variable for a test)

// ProfileError is what is wrong with a profile, and on which line.
type ProfileError struct {
	Path string // the file, when known
	Line int
	Msg  string
}

func (e *ProfileError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// ReadProfile reads a Go text coverprofile: seedfall's (mode set), or any
// `go test -coverprofile` wrote (set, count or atomic), in which a block
// with a count above zero ran. Blocks of one span are merged.
func ReadProfile(r io.Reader) (*Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), maxProfileLine)
	p := &Profile{}
	files := map[string]string{} // each file name once
	n := 0
	bad := func(format string, args ...any) error {
		return &ProfileError{Line: n, Msg: fmt.Sprintf(format, args...)}
	}
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if n == 1 {
			mode, ok := strings.CutPrefix(line, "mode: ")
			if !ok {
				return nil, bad("%q is not a coverage profile's first line, which is \"mode: set\" (or count, or atomic)", clip(line))
			}
			if mode != "set" && mode != "count" && mode != "atomic" {
				return nil, bad("mode %q: a coverage profile's mode is set, count or atomic", clip(mode))
			}
			continue
		}
		if line == "" {
			continue
		}
		if len(p.Blocks) >= maxProfileBlocks {
			return nil, bad("more than %d blocks: this is no coverage profile of a program", maxProfileBlocks)
		}
		b, err := parseBlock(line)
		if err != nil {
			return nil, bad("%v in %q; a line is file.go:line.col,line.col statements count", err, clip(line))
		}
		if f, ok := files[b.File]; ok {
			b.File = f
		} else {
			files[b.File] = b.File
		}
		p.Blocks = append(p.Blocks, b)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ProfileError{Line: n + 1, Msg: fmt.Sprintf("a line longer than %d bytes: this is no coverage profile", maxProfileLine)}
		}
		return nil, err
	}
	if n == 0 {
		return nil, &ProfileError{Line: 1, Msg: "the file is empty; a coverage profile starts with \"mode: set\""}
	}
	p.normalize()
	return p, nil
}

// parseBlock reads "file:l.c,l.c stmts count".
func parseBlock(line string) (Block, error) {
	var b Block
	colon := strings.LastIndexByte(line, ':')
	if colon <= 0 {
		return b, errors.New("no file name")
	}
	b.File = line[:colon]
	fields := strings.Fields(line[colon+1:])
	if len(fields) != 3 {
		return b, errors.New("not three fields after the file name")
	}
	from, to, ok := strings.Cut(fields[0], ",")
	if !ok {
		return b, errors.New("no comma between the start and end of the block")
	}
	var err error
	num := func(s, what string) uint32 {
		v, e := strconv.ParseUint(s, 10, 32)
		if e != nil && err == nil {
			err = fmt.Errorf("%s %q is not a number", what, clip(s))
		}
		return uint32(v)
	}
	pos := func(s, what string) (line, col uint32) {
		l, c, ok := strings.Cut(s, ".")
		if !ok && err == nil {
			err = fmt.Errorf("%s %q is not line.column", what, clip(s))
		}
		return num(l, what+" line"), num(c, what+" column")
	}
	b.StLine, b.StCol = pos(from, "start")
	b.EnLine, b.EnCol = pos(to, "end")
	b.Stmts = num(fields[1], "statement count")
	count, e := strconv.ParseUint(fields[2], 10, 64)
	if e != nil && err == nil {
		err = fmt.Errorf("count %q is not a number", clip(fields[2]))
	}
	b.Hit = count > 0
	switch {
	case err != nil:
	case b.StLine == 0 || b.StCol == 0:
		err = errors.New("lines and columns count from 1")
	case b.EnLine < b.StLine || b.EnLine == b.StLine && b.EnCol < b.StCol:
		err = errors.New("the block ends before it starts")
	}
	return b, err
}

// clip shortens what an error quotes.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
