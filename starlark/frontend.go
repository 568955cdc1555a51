package starlark

import (
	"encoding/json"
	"os"
	"slices"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/world"
)

// What a front end of the builtins (the REPL) completes, describes and
// lists, as plain strings and structs computed from the engine's packages,
// so that the front end imports none of them: repl over starlark over
// engine.

// WorldFields lists every field path of the world format, in the order of
// the spec's tables, with "[]" for list elements ("nodes[].pkg"): world()'s
// keyword arguments are their first parts.
func WorldFields() []string { return world.Fields() }

// FaultFields are a fault's JSON fields, in the order a schedule writes
// them: fault()'s keyword arguments.
func FaultFields() []string { return faults.FieldNames() }

// BranchStreams are the random streams branch() may re-key.
func BranchStreams() []string { return slices.Clone(faults.BranchStreams) }

// Suggest returns the candidate nearest to word by edit distance, or ""
// when none is close enough to be a plausible typo: the builtins' "did
// you mean".
func Suggest(word string, candidates []string) string { return world.Suggest(word, candidates) }

// ProgramNames returns the program names of v, in the world's order, when
// v is a world value that carries its resolved world.
func ProgramNames(v sl.Value) ([]string, bool) {
	w, ok := v.(*World)
	if !ok || w.World() == nil {
		return nil, false
	}
	var names []string
	for _, p := range w.World().Programs() {
		names = append(names, p.Name)
	}
	return names, true
}

// ScheduleListing is a schedule as `seedfall faults` lists it: its seed,
// duration and shrink record, each fault described in words, and its
// branches.
type ScheduleListing struct {
	Seed       uint64
	Duration   time.Duration
	ShrunkFrom int
	ShrinkRuns int
	Faults     []string
	Branches   []BranchListing
}

// BranchListing is one branch of a schedule: from At, Stream ("" for
// every stream) re-keyed with Key.
type BranchListing struct {
	At     time.Duration
	Stream string
	Key    uint64
}

// ListSchedule reads a schedule's JSON (a schedule value's to_json()) for
// listing; its error is the JSON decoder's.
func ListSchedule(text string) (*ScheduleListing, error) {
	var sch faults.Schedule
	if err := json.Unmarshal([]byte(text), &sch); err != nil {
		return nil, err
	}
	l := &ScheduleListing{Seed: sch.Seed, Duration: sch.Duration, ShrunkFrom: sch.ShrunkFrom, ShrinkRuns: sch.ShrinkRuns}
	for _, f := range sch.Faults {
		l.Faults = append(l.Faults, faults.Describe(f))
	}
	for _, b := range sch.Branches {
		l.Branches = append(l.Branches, BranchListing{At: b.At, Stream: b.Stream, Key: b.Key})
	}
	return l, nil
}

// WriteFile writes data to path as the builtins' saves do: atomically
// (engine/fsutil), so that a reader never sees it half written. path's
// directory must exist.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return fsutil.WriteFile(path, data, perm)
}
