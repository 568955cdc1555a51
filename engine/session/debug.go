package session

import (
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

func NewDebugReport(res *engine.Result, from string) DebugReport {
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

// WriteDebug prints the world at the moments at (sorted) of res, a run
// with StopAt at the last and StatesAt at the others: each with the
// faults so far then, and how the run ended if it ended before one.
func (s *Session) WriteDebug(w io.Writer, res *engine.Result, at []time.Duration, sch *faults.Schedule, from string) {
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

// DebugRun is the run that shows the moments at (sorted, distinct): it
// stops at the last and looks at the others on the way.
func DebugRun(seed uint64, sch *faults.Schedule, at []time.Duration) engine.RunOptions {
	return engine.RunOptions{Seed: seed, Schedule: sch, StopAt: at[len(at)-1], State: true, StatesAt: at[:len(at)-1]}
}
