package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

func init() {
	register(command{"debug", "-c seedfall.json -seed N -at T [-faults FILE] [-json]", debugCmd})
}

// debugCmd runs a seed to a virtual time and shows the world then: each
// program's state, incarnation, connections and writes a crash would lose,
// and the faults in force.
func debugCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("debug", stderr)
	cfg := worldFlags(fs)
	at := fs.Duration("at", 0, "the virtual time to stop at, such as 1.5s")
	asJSON := fs.Bool("json", false, "print the state as JSON")
	sa := seedFlags(fs, "debug")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "at") || *at <= 0 {
		return fmt.Errorf("say when to stop: -at T, a virtual time above 0 such as 1.5s (the failure's time is in `seedfall replay`)")
	}
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *sa.seed, Schedule: sch, StopAt: *at, State: true})
	if err != nil {
		return err
	}
	st := res.State
	if *asJSON {
		// The state, and the verdict when the run ended before -at.
		out := struct {
			Seed   uint64         `json:"seed"`
			Ended  *jsonResult    `json:"ended,omitempty"`
			State  *engine.State  `json:"state"`
			Faults []faults.Fault `json:"faults"`
		}{Seed: *sa.seed, State: st, Faults: res.Schedule.Faults}
		if out.Faults == nil {
			out.Faults = []faults.Fault{}
		}
		if !strings.HasPrefix(res.Reason, "stopped at") {
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
	if !strings.HasPrefix(res.Reason, "stopped at") {
		fmt.Fprintf(stdout, "the run ended before %v: ", *at)
		s.printVerdict(stdout, res, "")
	}
	st.Write(stdout, res.Schedule)
	return nil
}
