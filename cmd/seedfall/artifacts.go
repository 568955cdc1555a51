package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// artifactDir is where the schedules, histories and report of a world
// file are kept: .seedfall/ next to it for seedfall.json, as the spec has
// it, and .seedfall/NAME/ for any other world file, NAME being its file
// name without .json (seedfall.fixed.json: .seedfall/seedfall.fixed/;
// seedfall.toml: .seedfall/seedfall.toml/). World files of one directory
// so never replace each other's schedules.
func artifactDir(w *world.World) string {
	dir := filepath.Join(w.Dir, ".seedfall")
	name := filepath.Base(w.File)
	if name == "seedfall.json" || name == "." || name == string(filepath.Separator) {
		return dir
	}
	return filepath.Join(dir, strings.TrimSuffix(name, ".json"))
}

// scheduleKind names what made a saved schedule, as far as the file shows:
// "shrunk" (shrink recorded shrunk_from), "explored" (it has branches,
// which only explore writes) or "drawn" (a run's, or an edit of one).
func scheduleKind(sch *faults.Schedule) string {
	switch {
	case sch.ShrunkFrom > 0:
		return "shrunk"
	case len(sch.Branches) > 0:
		return "explored"
	}
	return "drawn"
}

// saved is where saveKeeping wrote a schedule, and what it kept.
type saved struct {
	path string // the file written
	kept string // the file left alone instead of being replaced, if any
	why  string // what kept holds, for the note: "a shrunk schedule"
	// replaced describes a shrunk or explored schedule of the same kind
	// and world that the write replaced with a different one.
	replaced string
}

// saveKeeping writes sch to path unless path holds a schedule it must not
// replace; then it writes to path with tag inserted before .faults.json
// (seed-3.shrunk.faults.json), or the first such name with a count
// (seed-3.shrunk.2.faults.json) that it may replace. A file may be
// replaced when it holds the same bytes, when it is the file the new
// schedule was made from (from), when it is a drawn schedule of this
// world, which a run draws again, or when it is of the same kind and
// world as sch (a second shrink, say: the note says so). A shrunk or
// explored schedule, or another world's, is never replaced by a
// different kind of artifact.
//
// worldOf, when not nil, names the world file saved beside the schedule
// at a path: the schedule's config is set to it for each name tried.
func (s *session) saveKeeping(path, tag string, sch *faults.Schedule, from string, worldOf func(string) string) (saved, error) {
	var out saved
	base := strings.TrimSuffix(path, ".faults.json")
	for i := 1; ; i++ {
		p := path
		switch {
		case i == 2:
			p = base + "." + tag + ".faults.json"
		case i > 2:
			p = fmt.Sprintf("%s.%s.%d.faults.json", base, tag, i-1)
		}
		if worldOf != nil {
			sch.Config = filepath.Base(worldOf(p))
		}
		b, err := sch.MarshalJSON()
		if err != nil {
			return saved{}, err
		}
		ok, what, repl := s.mayReplace(p, b, sch, from)
		if ok {
			out.path, out.replaced = p, repl
			break
		}
		if out.kept == "" {
			out.kept, out.why = p, what
		}
	}
	return out, sch.Save(out.path)
}

// mayReplace says whether the file at p may be replaced by b (sch), and
// if not, what it holds.
func (s *session) mayReplace(p string, b []byte, sch *faults.Schedule, from string) (ok bool, what, replaced string) {
	old, err := os.ReadFile(p)
	if err != nil {
		return true, "", "" // nothing there (or nothing readable to keep)
	}
	if bytes.Equal(old, b) || (from != "" && samePath(from, p)) {
		return true, "", ""
	}
	prev, err := faults.Parse(displayPath(p), old)
	if err != nil {
		return false, "a schedule seedfall cannot read", ""
	}
	kind := scheduleKind(prev)
	own := prev.Config == "" || prev.Config == sch.Config
	switch {
	case own && kind == "drawn":
		return true, "", ""
	case own && kind == scheduleKind(sch):
		return true, "", fmt.Sprintf("the %s schedule of %s it held", kind, plural(len(prev.Faults), "fault"))
	case kind == "drawn":
		return false, "the schedule of " + prev.Config, ""
	}
	if kind == "explored" {
		return false, "an explored schedule", ""
	}
	return false, "a " + kind + " schedule", ""
}

// note prints what saveKeeping kept or replaced, on stderr.
func (s *session) noteSaved(sv saved) {
	if sv.kept != "" {
		fmt.Fprintf(s.stderr, "note: kept %s (%s); wrote %s instead\n", displayPath(sv.kept), sv.why, displayPath(sv.path))
	}
	if sv.replaced != "" {
		fmt.Fprintf(s.stderr, "note: replaced %s, %s\n", displayPath(sv.path), sv.replaced)
	}
}

// replayWith is the command that replays seed with the schedule at path:
// -faults names it unless it is where replay looks by default.
func (s *session) replayWith(seed uint64, path string) string {
	cmd := s.replayCommand(seed)
	if !samePath(path, s.schedulePath(seed)) {
		cmd += " -faults " + shellQuote(displayPath(path))
	}
	return cmd
}
