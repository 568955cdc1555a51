package main

import (
	"fmt"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// artifactDir is where the schedules, histories and report of a world
// file are kept (engine.ArtifactDir).
func artifactDir(w *world.World) string { return engine.ArtifactDir(w) }

// saved is where saveKeeping wrote a schedule, and what it kept.
type saved struct {
	path string // the file written
	kept string // the file left alone instead of being replaced, if any
	why  string // what kept holds, for the note: "a shrunk schedule"
	// replaced describes a shrunk or explored schedule of the same kind
	// and world that the write replaced with a different one.
	replaced string
}

func savedOf(sv engine.Saved) saved {
	return saved{path: sv.Path, kept: sv.Kept, why: sv.Why, replaced: sv.Replaced}
}

// saveKeeping writes sch to path unless path holds a schedule it must not
// replace: engine.SaveKeeping says where it goes instead.
func (s *session) saveKeeping(path, tag string, sch *faults.Schedule, from string, worldOf func(string) string) (saved, error) {
	sv, err := engine.SaveKeeping(path, tag, sch, from, worldOf)
	return savedOf(sv), err
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
