package session

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

// Moments are the virtual times to stop at: debug's -at, repeatable.
type Moments []time.Duration

func (m *Moments) String() string { return fmt.Sprint(*m) }

func (m *Moments) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a virtual time above 0, such as 1.5s", v)
	}
	*m = append(*m, d)
	return nil
}

// DebugReport is debug -json's object, and seedfall_debug's structured
// result: the state at the last moment asked, the states at the earlier
// ones, the faults so far, and the verdict when the run ended before the
// last moment.
type DebugReport struct {
	Seed   uint64          `json:"seed"`
	Ended  *results.Line   `json:"ended,omitempty"`
	State  *engine.State   `json:"state"`
	States []*engine.State `json:"states,omitempty"`
	Faults []faults.Fault  `json:"faults"`
}

// Report is debug -json's object.
func (d *Debug) Report() DebugReport {
	res, from := d.Result, d.from
	rep := DebugReport{Seed: res.Seed, State: res.State, States: res.States, Faults: slices.Clip(res.Schedule.Faults)}
	if rep.Faults == nil {
		rep.Faults = []faults.Fault{}
	}
	if stoppedBefore(res) {
		j := results.NewLine(res, from)
		rep.Ended = &j
	}
	return rep
}

// stoppedBefore reports whether a run asked to stop at a moment ended
// before it.
func stoppedBefore(res *engine.Result) bool { return !res.Stopped }

// Write prints the world at the moments asked: each with the faults so
// far then, and how the run ended if it ended before one.
func (d *Debug) Write(w io.Writer) {
	s, res, at, sch, from := d.s, d.Result, d.at, d.sch, d.from
	WriteSource(w, res.Seed, sch, from)
	for _, st := range res.States {
		st.Write(w, res.Schedule.Before(st.At+1)) // the faults so far then
	}
	if stoppedBefore(res) {
		if len(res.States) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "the run ended before %v: ", at[len(res.States)])
		s.WriteVerdict(w, res, "")
	}
	res.State.Write(w, res.Schedule)
}

// DebugOptions say which seed's world debug shows, and when.
type DebugOptions struct {
	Seed     uint64
	Schedule *faults.Schedule // nil: the faults the seed draws
	From     string           // the file Schedule came from, for the result
	At       []time.Duration  // the moments to show, sorted and distinct
	// Run, if not nil, runs the seed instead of the session's prepared
	// world: seedfall mcp forks a look at a seed again from a recording
	// of its run (engine.Recordings).
	Run func(ctx context.Context, opt engine.RunOptions) (*engine.Result, error)
}

// Debug is a run of a seed stopped to look at the world at some moments.
type Debug struct {
	*engine.Result
	s    *Session
	at   []time.Duration
	sch  *faults.Schedule
	from string
}

// Debug runs a seed to the last of o.At and looks at the others on the
// way.
func (s *Session) Debug(ctx context.Context, o DebugOptions) (*Debug, error) {
	opt := engine.RunOptions{Seed: o.Seed, Schedule: o.Schedule, StopAt: o.At[len(o.At)-1], State: true, StatesAt: o.At[:len(o.At)-1]}
	run := s.p.Run
	if o.Run != nil {
		run = o.Run
	}
	res, err := run(ctx, opt)
	if err != nil {
		return nil, err
	}
	return &Debug{Result: res, s: s, at: o.At, sch: o.Schedule, from: o.From}, nil
}
