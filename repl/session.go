package repl

import (
	"fmt"
	"github.com/seedfall/seedfall/engine/fsutil"
	"strings"

	sl "go.starlark.net/starlark"
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
// comment above the statement it stood for.
func (r *REPL) Script() string {
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
			b.WriteString(e.src + "\n")
		case valueEntry:
			if r.underscoreRead(i) {
				fmt.Fprintf(&b, "_ = %s\n", e.src)
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

// Save writes the session's script to path.
func (r *REPL) Save(path string) error {
	if err := fsutil.WriteFile(path, []byte(r.Script()), 0o644); err != nil {
		return fmt.Errorf(":save: %v", err)
	}
	return nil
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
