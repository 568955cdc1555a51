package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/world"
)

// The artifacts of a world file are kept next to it: the schedules of its
// failing seeds, the pictures of histories that are not linearizable, the
// report. Every skin over the engine (the command line, simtest) saves a
// failing seed's schedule with SaveFailure, so that `seedfall replay`
// finds it where it looks by default.

// ArtifactDir is where the schedules, histories and report of a world
// file are kept: .seedfall/ next to it for seedfall.json, as the spec has
// it, and .seedfall/NAME/ for any other world file, NAME being its file
// name without .json (seedfall.fixed.json: .seedfall/seedfall.fixed/;
// seedfall.toml: .seedfall/seedfall.toml/). World files of one directory
// so never replace each other's schedules.
func ArtifactDir(w *world.World) string {
	dir := filepath.Join(w.Dir, ".seedfall")
	name := filepath.Base(w.File)
	if name == "seedfall.json" || name == "." || name == string(filepath.Separator) {
		return dir
	}
	return filepath.Join(dir, strings.TrimSuffix(name, ".json"))
}

// SchedulePath is where a failing seed's schedule is kept, in the world
// file's artifact directory: seed-N.faults.json.
func SchedulePath(w *world.World, seed uint64) string {
	return filepath.Join(ArtifactDir(w), fmt.Sprintf("seed-%d.faults.json", seed))
}

// HistoryPath is where a seed's history that is not linearizable is drawn,
// next to its schedule.
func HistoryPath(w *world.World, seed uint64) string {
	return filepath.Join(ArtifactDir(w), fmt.Sprintf("seed-%d.history.html", seed))
}

// ConfigName names the world a schedule belongs to: the file, and the
// profile and overrides that changed it, since they share its schedules.
func ConfigName(w *world.World) string {
	name := filepath.Base(w.File)
	if w.Profile != "" {
		name += " -profile " + ShellQuote(w.Profile)
	}
	for _, set := range w.Sets {
		name += " -set " + ShellQuote(set)
	}
	return name
}

// ShellQuote quotes s for a POSIX shell when it needs it, for the
// commands the skins print.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ScheduleKind names what made a saved schedule, as far as the file shows:
// "shrunk" (shrink recorded shrunk_from), "explored" (it has branches,
// which only explore writes) or "drawn" (a run's, or an edit of one).
func ScheduleKind(sch *faults.Schedule) string {
	switch {
	case sch.ShrunkFrom > 0:
		return "shrunk"
	case len(sch.Branches) > 0:
		return "explored"
	}
	return "drawn"
}

// Saved is where SaveKeeping wrote a schedule, and what it kept.
type Saved struct {
	Path string // the file written
	Kept string // the file left alone instead of being replaced, if any
	Why  string // what Kept holds, for a note: "a shrunk schedule"
	// Replaced describes a shrunk or explored schedule of the same kind
	// and world that the write replaced with a different one.
	Replaced string
}

// SaveFailure keeps a failing run's schedule in its world's artifact
// directory (SchedulePath), and the picture of its history when that is
// not linearizable (HistoryPath). The schedule names the world with
// ConfigName. A shrunk or explored schedule, or another world's, already
// at SchedulePath is kept: the schedule goes to seed-N.run.faults.json
// instead (SaveKeeping), which Saved says.
func SaveFailure(w *world.World, res *Result) (Saved, error) {
	sch := *res.Schedule
	sch.Config = ConfigName(w)
	if h := res.History; h != nil && len(h.HTML) > 0 {
		// porcupine's picture of the history that is not linearizable.
		if err := os.MkdirAll(ArtifactDir(w), 0o755); err != nil {
			return Saved{}, err
		}
		if err := fsutil.WriteFile(HistoryPath(w, res.Seed), h.HTML, 0o644); err != nil {
			return Saved{}, err
		}
	}
	return SaveKeeping(SchedulePath(w, res.Seed), "run", &sch, "", nil)
}

// SaveKeeping writes sch to path unless path holds a schedule it must not
// replace; then it writes to path with tag inserted before .faults.json
// (seed-3.shrunk.faults.json), or the first such name with a count
// (seed-3.shrunk.2.faults.json) that it may replace. A file may be
// replaced when it holds the same bytes, when it is the file the new
// schedule was made from (from), when it is a drawn schedule of this
// world, which a run draws again, or when it is of the same kind and
// world as sch (a second shrink, say: Saved.Replaced says so). A shrunk
// or explored schedule, or another world's, is never replaced by a
// different kind of artifact.
//
// worldOf, when not nil, names the world file saved beside the schedule
// at a path: the schedule's config is set to it for each name tried.
func SaveKeeping(path, tag string, sch *faults.Schedule, from string, worldOf func(string) string) (Saved, error) {
	var out Saved
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
			return Saved{}, err
		}
		ok, what, repl := mayReplace(p, b, sch, from)
		if ok {
			out.Path, out.Replaced = p, repl
			break
		}
		if out.Kept == "" {
			out.Kept, out.Why = p, what
		}
	}
	return out, sch.Save(out.Path)
}

// mayReplace says whether the file at p may be replaced by b (sch), and
// if not, what it holds.
func mayReplace(p string, b []byte, sch *faults.Schedule, from string) (ok bool, what, replaced string) {
	old, err := os.ReadFile(p)
	if err != nil {
		return true, "", "" // nothing there (or nothing readable to keep)
	}
	if bytes.Equal(old, b) || (from != "" && samePath(from, p)) {
		return true, "", ""
	}
	prev, err := faults.Parse(p, old)
	if err != nil {
		return false, "a schedule seedfall cannot read", ""
	}
	kind := ScheduleKind(prev)
	own := prev.Config == "" || prev.Config == sch.Config
	switch {
	case own && kind == "drawn":
		return true, "", ""
	case own && kind == ScheduleKind(sch):
		return true, "", fmt.Sprintf("the %s schedule of %s it held", kind, faultCount(len(prev.Faults)))
	case kind == "drawn":
		return false, "the schedule of " + prev.Config, ""
	}
	if kind == "explored" {
		return false, "an explored schedule", ""
	}
	return false, "a " + kind + " schedule", ""
}

// samePath says whether a and b name the same file.
func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// faultCount writes "1 fault", "3 faults".
func faultCount(n int) string {
	if n == 1 {
		return "1 fault"
	}
	return fmt.Sprintf("%d faults", n)
}
