package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"debug", "-c seedfall.json -seed N -at T [-at T2 ...] [-faults FILE] [-json]", debugCmd})
}

// debugCmd runs a seed to a virtual time and shows the world then: each
// program's state, incarnation, connections and writes a crash would lose,
// and the faults in force. Several -at show several moments of one run.
func debugCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("debug", stderr)
	cfg := worldFlags(fs)
	var at session.Moments
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
	defer s.Close()
	d, err := s.Debug(ctx, session.DebugOptions{Seed: *sa.seed, Schedule: sch, From: from, At: at})
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(d.Report())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	d.Write(stdout)
	return nil
}
