package repl

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/starlark"
)

// A session is kept as a log of what changed state, so that :save can write
// it as a script, and as the values r has held, so that :undo and :redo can
// step between them.

type entryKind int

const (
	stmtEntry    entryKind = iota // statements: kept as typed
	valueEntry                    // an expression with a value: kept as `_ = ...` when a later statement reads _
	restoreEntry                  // :undo or :redo: r = an earlier value
)

type entry struct {
	kind           entryKind
	src            string // the Starlark source
	note           string // the ':' command it stands for, if any
	usesUnderscore bool
	version        int // restoreEntry: the version of r restored
}

// version is one value r held, and the log entry after which it held it.
type version struct {
	val   sl.Value
	entry int
}

// trackR notes a new value of r after an evaluation.
func (r *REPL) trackR() {
	cur, ok := r.globals["r"]
	if !ok {
		return
	}
	if n := len(r.past); n > 0 && same(r.versions[r.past[n-1]].val, cur) {
		return
	}
	r.versions = append(r.versions, version{val: cur, entry: len(r.log) - 1})
	r.past = append(r.past, len(r.versions)-1)
	r.future = nil
}

func (r *REPL) undo() error {
	if len(r.past) < 2 {
		return fmt.Errorf(":undo: nothing to undo (r has had %s this session)", plural(len(r.past), "value"))
	}
	cur := r.past[len(r.past)-1]
	r.past = r.past[:len(r.past)-1]
	r.future = append(r.future, cur)
	fmt.Fprintf(r.o.Out, "# undo %s: r is its value before that again\n", r.describe(cur))
	r.restore(r.past[len(r.past)-1], ":undo")
	return nil
}

func (r *REPL) redo() error {
	if len(r.future) == 0 {
		return fmt.Errorf(":redo: nothing to redo (only an :undo can be redone)")
	}
	v := r.future[len(r.future)-1]
	r.future = r.future[:len(r.future)-1]
	r.past = append(r.past, v)
	fmt.Fprintf(r.o.Out, "# redo %s\n", r.describe(v))
	r.restore(v, ":redo")
	return nil
}

// describe names the input that gave r a version: its ':' command, or its
// statement.
func (r *REPL) describe(id int) string {
	i := r.versions[id].entry
	if i < 0 {
		return "the start"
	}
	if e := r.log[i]; e.note != "" {
		return e.note
	}
	return firstLine(r.log[i].src)
}

func (r *REPL) restore(id int, note string) {
	v := r.versions[id]
	r.globals["r"] = v.val
	r.log = append(r.log, entry{kind: restoreEntry, note: note, version: id})
	fmt.Fprintln(r.o.Out, v.val)
}

// Script returns the session as a Starlark script that replays it: every
// statement that changed state, in order, with each ':' command as a
// comment above the statement it stood for. Its paths are as typed, so it
// replays from a file in the session's directory; Save writes one that
// replays from wherever it is written.
func (r *REPL) Script() string { return r.scriptIn(r.o.Dir) }

// scriptIn is Script for a file in dir: a script resolves relative paths
// against its own directory, so each string literal that names a file or
// directory relative to the session's directory is rewritten relative to
// dir instead.
func (r *REPL) scriptIn(dir string) string {
	rel := func(src string) string { return src }
	if dir != r.o.Dir {
		rel = func(src string) string { return rebase(src, r.o.Dir, dir) }
	}
	var b strings.Builder
	b.WriteString("# A seedfall repl session; `seedfall script FILE` replays it.\n")
	needed := map[int]bool{}
	for _, e := range r.log {
		if e.kind == restoreEntry {
			needed[e.version] = true
		}
	}
	for i, e := range r.log {
		switch e.kind {
		case stmtEntry:
			if e.note != "" {
				fmt.Fprintf(&b, "# %s\n", e.note)
			}
			b.WriteString(rel(e.src) + "\n")
		case valueEntry:
			if r.underscoreRead(i) {
				fmt.Fprintf(&b, "_ = %s\n", rel(e.src))
			}
		case restoreEntry:
			fmt.Fprintf(&b, "r = %s  # %s\n", snapshotName(e.version), e.note)
		}
		for id, v := range r.versions {
			if v.entry == i && needed[id] {
				fmt.Fprintf(&b, "%s = r\n", snapshotName(id))
			}
		}
	}
	return b.String()
}

// underscoreRead reports whether a statement after log entry i reads the _
// that entry i set, before another value replaces it.
func (r *REPL) underscoreRead(i int) bool {
	for _, e := range r.log[i+1:] {
		if e.usesUnderscore {
			return true
		}
		if e.kind == valueEntry {
			return false
		}
	}
	return false
}

func snapshotName(id int) string { return fmt.Sprintf("_r%d", id+1) }

// Save writes the session's script to path, with its paths relative to
// path's directory, so that `seedfall script PATH` replays it from any
// working directory. A relative path is taken against the session's
// directory, as everything typed at the prompt is.
func (r *REPL) Save(path string) error {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(r.o.Dir, path)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf(":save: %v", err)
	}
	if err := starlark.WriteFile(abs, []byte(r.scriptIn(filepath.Dir(abs))), 0o644); err != nil {
		return fmt.Errorf(":save: %v", err)
	}
	return nil
}

// rebase rewrites the string literals in the Starlark source src that name
// an existing file or directory relative to from, such as
// load_config("seedfall.json"), load("lib.star", ...), pkg="./server" or
// r.save("runs/1.json") (written by then), so that they name it relative
// to to. Only literals that look like paths are candidates: relative, not
// a stdlib module (@seedfall/...), and with a '/' or an extension, so that
// a node named like a directory ("server") is left alone. src that does not
// parse is returned as is.
func rebase(src, from, to string) string {
	f, err := FileOptions.Parse("<session>", src+"\n", 0)
	if err != nil {
		return src
	}
	type edit struct {
		off, end int
		text     string
	}
	var edits []edit
	lines := lineOffsets(src)
	syntax.Walk(f, func(n syntax.Node) bool {
		lit, ok := n.(*syntax.Literal)
		if !ok || lit.Token != syntax.STRING {
			return true
		}
		s, _ := lit.Value.(string)
		if !looksLikePath(s) {
			return true
		}
		target := filepath.Join(from, filepath.FromSlash(s))
		if _, err := os.Stat(target); err != nil {
			return true
		}
		p, err := filepath.Rel(to, target)
		if err != nil {
			p = target
		}
		p = filepath.ToSlash(p)
		if strings.HasSuffix(s, "/") && !strings.HasSuffix(p, "/") {
			p += "/"
		}
		if strings.HasPrefix(s, "./") && !strings.HasPrefix(p, ".") {
			p = "./" + p // keep ./server a Go-style relative package path
		}
		pos := lit.TokenPos
		if int(pos.Line) < 1 || int(pos.Line) > len(lines) {
			return true
		}
		line := lines[pos.Line-1]
		off := line + runeOffset(src[line:], int(pos.Col)-1)
		if !strings.HasPrefix(src[off:], lit.Raw) {
			return true
		}
		edits = append(edits, edit{off, off + len(lit.Raw), quote(p)})
		return true
	})
	sort.Slice(edits, func(i, j int) bool { return edits[i].off < edits[j].off })
	for i := len(edits) - 1; i >= 0; i-- {
		e := edits[i]
		src = src[:e.off] + e.text + src[e.end:]
	}
	return src
}

// looksLikePath reports whether a string literal may be a relative path.
func looksLikePath(s string) bool {
	if s == "" || filepath.IsAbs(filepath.FromSlash(s)) || strings.HasPrefix(s, "@") || strings.ContainsAny(s, "\n\x00") {
		return false
	}
	if !strings.ContainsFunc(s, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) {
		return false // ".", "/", "..": separators as often as paths
	}
	return strings.Contains(s, "/") || filepath.Ext(s) != ""
}

// lineOffsets returns the byte offset at which each line of src starts.
func lineOffsets(src string) []int {
	offs := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			offs = append(offs, i+1)
		}
	}
	return offs
}

// runeOffset is the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	off := 0
	for ; n > 0 && off < len(s); n-- {
		_, size := utf8.DecodeRuneInString(s[off:])
		off += size
	}
	return off
}

func firstLine(s string) string {
	line, _, more := strings.Cut(s, "\n")
	if more {
		return line + " ..."
	}
	return line
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
