package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// Record is one seed's run as a sweep prints and keeps it: its line, and
// for a failing seed what a results directory keeps of it. A sweep that
// runs makes it from the engine's Result (NewRecord); a merge reads it
// back from a results directory (SeedReader), so both print and keep the
// same.
type Record struct {
	Line Line
	Raw  []byte // the line as written: its run -json object
	// Replay is the command that replays a failing seed, as printed, and
	// History the page of a history that is not linearizable, when one
	// was named.
	Replay, History string
	// Lines are the run's output lines: all of them after a run; read
	// from a results directory, those of its first KeptLines failing
	// seeds.
	Lines []trace.Line
	// Heals are the run's moments at which every fault ended at once
	// (engine.Result.Heals), kept with its lines.
	Heals []int64
	// Schedule is the run's schedule: after a run, the one that ran; read
	// from a results directory, a failing seed's saved one for the first
	// KeptLines failing seeds, else one of no faults.
	Schedule *faults.Schedule
	// ScheduleJSON and HistoryHTML are the files a results directory
	// keeps of a failing seed, when there are.
	ScheduleJSON, HistoryHTML []byte
}

// NewRecord is the record of a run: its line, naming schedule as its saved
// schedule, run by seedfall version, and its lines and schedule.
func NewRecord(res *engine.Result, schedule, version string) *Record {
	l := NewLine(res, schedule)
	l.Seedfall = version
	raw, _ := json.Marshal(l)
	return &Record{Line: l, Raw: raw, Lines: res.Lines, Heals: res.Heals, Schedule: res.Schedule}
}

// outcome is what the engine's rules about a failure's lines read: its
// class, its program and its lines.
func (r *Record) outcome() *engine.Result {
	return &engine.Result{Class: r.Line.Class, Node: r.Line.Node, Lines: r.Lines}
}

// FailureLines returns n lines of output that show why the seed failed
// (engine.Result.FailureLines).
func (r *Record) FailureLines(n int) []trace.Line { return r.outcome().FailureLines(n) }

// CauseLine is the index in Lines of the line to show a failure from, or
// -1 (engine.Result.CauseLine).
func (r *Record) CauseLine() int { return r.outcome().CauseLine() }

// DisplayPath shortens a path under the working directory to a relative
// one, as messages name files.
func DisplayPath(path string) string {
	wd, err := os.Getwd()
	if err != nil || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// Plural writes "1 fault", "3 faults".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
