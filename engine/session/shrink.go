package session

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/shrink"
)

// CheckBudget refuses a negative -budget.
func CheckBudget(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("-budget %v is negative: give a wall time such as 2m, or 0 for no limit", d)
	}
	return nil
}

// ShrinkOptions say which seed to shrink, from what, and for how long.
type ShrinkOptions struct {
	Seed     uint64
	File     string        // the schedule to start from; "": the seed's own file unless shrink wrote it, else its own faults
	Budget   time.Duration // the wall time it may take; 0: no limit
	Parallel int
	Progress func(shrink.Progress) // nil: none
}

// Shrunk is a shrink's outcome: the smallest failing schedule found and
// where it was saved, or the start's run when the seed passes.
type Shrunk struct {
	seed     uint64
	what     string           // what it started from: "its own faults", "3 faults from FILE"
	res      *shrink.Result   // the runs, the shrunk schedule and its run
	Schedule *faults.Schedule // the shrunk schedule; nil when the seed passes
	path     string           // the file sch was saved to; "" when the seed passes
	original string           // where the schedule it started from was kept, when sch took its place
	replay   string           // the command that replays the seed with it
	resume   string           // the command that shrinks it further, after Ctrl-C
	budget   time.Duration
	wall     time.Duration // the shrink's real time
	stopped  bool          // Ctrl-C ended it
}

// Shrink shrinks a failing seed's schedule and saves the result where
// replay looks, unless a schedule it must keep is there
// (engine.SaveKeeping): a note on the session's notes says so.
func (s *Session) Shrink(ctx context.Context, o ShrinkOptions) (*Shrunk, error) {
	start, from, err := s.LoadSchedule(o.File, o.Seed)
	if err != nil {
		return nil, err
	}
	// A schedule shrink wrote is where the last shrink ended; shrinking
	// the seed again starts from its own faults, so that it gives the same
	// file again. -faults shrinks it further.
	if o.File == "" && start != nil && start.ShrunkFrom > 0 {
		start, from = nil, ""
	}
	r := &Shrunk{seed: o.Seed, what: "its own faults", budget: o.Budget}
	if from != "" {
		r.what = Plural(len(start.Faults), "fault") + " from " + from
	}
	began := time.Now()
	res, err := shrink.Shrink(ctx, s.p, o.Seed, start, shrink.Options{Budget: o.Budget, Parallel: o.Parallel, Progress: o.Progress})
	if err != nil {
		if Interrupted(ctx) {
			return nil, fmt.Errorf("%w before seed %d's first run finished: nothing shrunk", ErrInterrupted, o.Seed)
		}
		return nil, err
	}
	r.res, r.wall = res, time.Since(began)
	r.stopped = res.Exhausted && Interrupted(ctx)
	if res.Start.Passed {
		return r, nil
	}

	sch := res.Schedule
	sch.Config = s.ConfigName()
	// The result goes where replay looks, unless an explored schedule or
	// another world's is there that this shrink did not start from: that
	// is kept, and the result written as seed-N.shrunk.faults.json.
	startedFrom := o.File
	if from != "" && startedFrom == "" {
		startedFrom = s.SchedulePath(o.Seed)
	}
	sv, err := engine.SaveKeeping(s.SchedulePath(o.Seed), "shrunk", sch, startedFrom, nil)
	if err != nil {
		return nil, err
	}
	s.NoteSaved(sv)
	r.Schedule, r.path = sch, sv.Path
	// The schedule shrink started from stays beside the shrunk one when
	// the shrunk one took its place: its faults, its full duration.
	if own := s.SchedulePath(o.Seed); SamePath(sv.Path, own) && (o.File == "" || SamePath(o.File, own)) {
		orig := *res.Start.Schedule
		orig.Config = sch.Config
		r.original = strings.TrimSuffix(own, ".faults.json") + ".original.faults.json"
		if err := orig.Save(r.original); err != nil {
			return nil, err
		}
	}
	r.replay = s.ReplayWith(o.Seed, sv.Path)
	r.resume = fmt.Sprintf("seedfall shrink %s -seed %d -faults %s", s.args, o.Seed, ShellQuote(DisplayPath(sv.Path)))
	return r, nil
}

// Write writes the outcome for a person: the faults left before the
// failure, its verdict, and the file written.
func (r *Shrunk) Write(w io.Writer) {
	res := r.res
	if res.Start.Passed {
		WriteResult(w, res.Start, "", "")
		fmt.Fprintf(w, "nothing to shrink: seed %d passes with %s\n", r.seed, r.what)
		return
	}
	sch := r.Schedule
	fmt.Fprintf(w, "seed %d, %s: shrunk to %s in %s (%s real)\n", r.seed, r.what, Plural(len(sch.Faults), "fault"),
		Plural(res.Runs, "run"), WallTime(int64(r.wall)))
	switch {
	case r.stopped:
		fmt.Fprintf(w, "note: interrupted; this is the smallest failing schedule found so far (go on from it: %s)\n", r.resume)
	case res.Exhausted:
		fmt.Fprintf(w, "note: the %v budget ran out; this is the smallest failing schedule found so far (raise -budget to go further)\n", r.budget)
	}
	fmt.Fprintf(w, "faults before the failure at %s:\n", SimTime(res.Run.SimNs))
	n := 0
	for _, f := range sch.Faults {
		if f.At <= time.Duration(res.Run.SimNs) {
			n++
			fmt.Fprintf(w, "  %-3d  %s\n", n, faults.Describe(f))
		}
	}
	if n == 0 {
		fmt.Fprintf(w, "  none: seed %d fails without any fault\n", r.seed)
	}
	fmt.Fprintf(w, "duration %v\n", sch.Duration)
	WriteResult(w, res.Run, "", "")
	fmt.Fprintf(w, "wrote %s\n", DisplayPath(r.path))
	if r.original != "" {
		fmt.Fprintf(w, "kept the schedule it started from: %s\n", DisplayPath(r.original))
	}
	fmt.Fprintf(w, "replay: %s\n", r.replay)
}

// Verdict is the command's outcome as an error: ErrInterrupted when Ctrl-C
// ended the shrink, ErrFailed when the seed fails, nil when it passes.
func (r *Shrunk) Verdict() error {
	switch {
	case r.res.Start.Passed:
		return nil
	case r.stopped:
		return ErrInterrupted
	case !r.res.Run.Passed:
		return ErrFailed
	}
	return nil
}

// Report is shrink -json's object.
func (r *Shrunk) Report() ShrinkReport {
	if r.res.Start.Passed {
		return ShrinkReport{Seed: r.seed, Passed: true, Reason: r.res.Start.Reason, Runs: r.res.Runs}
	}
	run := r.res.Run
	return ShrinkReport{Seed: r.seed, Class: run.Class, Reason: run.Reason, Node: run.Node, SimNs: run.SimNs,
		Digest: run.Digest, ShrunkFrom: r.Schedule.ShrunkFrom, Faults: len(r.Schedule.Faults), Runs: r.res.Runs, Exhausted: r.res.Exhausted,
		Schedule: DisplayPath(r.path), Original: DisplayPath(r.original), Replay: r.replay, Interrupted: r.stopped}
}

type ShrinkReport struct {
	Seed       uint64 `json:"seed"`
	Passed     bool   `json:"passed"`
	Class      string `json:"class,omitempty"`
	Reason     string `json:"reason"`
	Node       string `json:"node,omitempty"`
	SimNs      int64  `json:"sim_ns,omitempty"`
	Digest     string `json:"digest,omitempty"`
	ShrunkFrom int    `json:"shrunk_from"`
	Faults     int    `json:"faults"`
	Runs       int    `json:"shrink_runs"`
	Exhausted  bool   `json:"exhausted"`
	// Interrupted: Ctrl-C ended the shrink (exhausted is true too).
	Interrupted bool   `json:"interrupted,omitempty"`
	Schedule    string `json:"schedule,omitempty"`
	// Original is where the schedule shrink started from was kept, when
	// the shrunk one took its place.
	Original string `json:"original,omitempty"`
	Replay   string `json:"replay,omitempty"`
}
