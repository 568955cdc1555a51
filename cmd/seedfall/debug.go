package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

func init() {
	register(command{"debug", "-c seedfall.json -seed N -at T [-at T2 ...] [-faults FILE] [-json]", debugCmd})
}

// moments is -at, repeatable.
type moments []time.Duration

func (m *moments) String() string { return fmt.Sprint(*m) }

func (m *moments) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a virtual time above 0, such as 1.5s", v)
	}
	*m = append(*m, d)
	return nil
}

// debugCmd runs a seed to a virtual time and shows the world then: each
// program's state, incarnation, connections and writes a crash would lose,
// and the faults in force. Several -at show several moments of one run.
func debugCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("debug", stderr)
	cfg := worldFlags(fs)
	var at moments
	fs.Var(&at, "at", "the virtual `time` to stop at, such as 1.5s; repeat it to see several moments of one run")
	asJSON := fs.Bool("json", false, "print the state as JSON")
	sa := seedFlags(fs, "debug")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(at) == 0 {
		return fmt.Errorf("say when to stop: -at T, a virtual time above 0 such as 1.5s (the failure's time is in `seedfall replay`)")
	}
	slices.Sort(at)
	at = slices.Compact(at)
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	opt := debugRun(*sa.seed, sch, at)
	res, err := s.p.Run(ctx, opt)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(newDebugReport(res, from))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	s.writeDebug(stdout, res, at, sch, from)
	return nil
}

// debugReport is debug -json's object, and seedfall_debug's structured
// result: the state at the last moment asked, the states at the earlier
// ones, the faults so far, and the verdict when the run ended before the
// last moment.
type debugReport struct {
	Seed   uint64          `json:"seed"`
	Ended  *results.Line   `json:"ended,omitempty"`
	State  *engine.State   `json:"state"`
	States []*engine.State `json:"states,omitempty"`
	Faults []faults.Fault  `json:"faults"`
}

func newDebugReport(res *engine.Result, from string) debugReport {
	rep := debugReport{Seed: res.Seed, State: res.State, States: res.States, Faults: slices.Clip(res.Schedule.Faults)}
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

// writeDebug prints the world at the moments at (sorted) of res, a run
// with StopAt at the last and StatesAt at the others: each with the
// faults so far then, and how the run ended if it ended before one.
func (s *session) writeDebug(w io.Writer, res *engine.Result, at []time.Duration, sch *faults.Schedule, from string) {
	printSource(w, res.Seed, sch, from)
	for _, st := range res.States {
		st.Write(w, res.Schedule.Before(st.At+1)) // the faults so far then
	}
	if stoppedBefore(res) {
		if len(res.States) > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "the run ended before %v: ", at[len(res.States)])
		s.printVerdict(w, res, "")
	}
	res.State.Write(w, res.Schedule)
}

// debugRun is the run that shows the moments at (sorted, distinct): it
// stops at the last and looks at the others on the way.
func debugRun(seed uint64, sch *faults.Schedule, at []time.Duration) engine.RunOptions {
	return engine.RunOptions{Seed: seed, Schedule: sch, StopAt: at[len(at)-1], State: true, StatesAt: at[:len(at)-1]}
}
