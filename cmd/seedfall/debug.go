package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
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
	last := at[len(at)-1]
	opt := engine.RunOptions{Seed: *sa.seed, Schedule: sch, StopAt: last, State: true}
	if len(at) > 1 {
		opt.StatesAt = at[:len(at)-1]
	}
	res, err := s.p.Run(ctx, opt)
	if err != nil {
		return err
	}
	ended := !strings.HasPrefix(res.Reason, "stopped at")
	if *asJSON {
		// The state, and the verdict when the run ended before -at; with
		// several -at, the states at the moments before the last too.
		out := struct {
			Seed   uint64          `json:"seed"`
			Ended  *jsonResult     `json:"ended,omitempty"`
			State  *engine.State   `json:"state"`
			States []*engine.State `json:"states,omitempty"`
			Faults []faults.Fault  `json:"faults"`
		}{Seed: *sa.seed, State: res.State, States: res.States, Faults: res.Schedule.Faults}
		if out.Faults == nil {
			out.Faults = []faults.Fault{}
		}
		if ended {
			j := newJSONResult(res, from)
			out.Ended = &j
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	printSource(stdout, *sa.seed, sch, from)
	for _, st := range res.States {
		st.Write(stdout, res.Schedule.Before(st.At+1)) // the faults so far then
	}
	if ended {
		if len(res.States) > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "the run ended before %v: ", at[len(res.States)])
		s.printVerdict(stdout, res, "")
	}
	res.State.Write(stdout, res.Schedule)
	return nil
}
