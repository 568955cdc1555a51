package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
)

func replayCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "the seed to replay")
	faultsFile := fs.String("faults", "", "the schedule to apply (default: .seedfall/seed-N.faults.json next to the config, if it exists)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed to replay: -seed N")
	}
	ctx := context.Background()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	sch, from, err := s.loadSchedule(*faultsFile, *seed)
	if err != nil {
		return err
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch})
	if err != nil {
		return err
	}
	if *asJSON {
		writeJSON(stdout, res, from)
	} else {
		if from != "" {
			fmt.Fprintf(stdout, "seed %d, %s from %s\n", *seed, plural(len(sch.Faults), "fault"), from)
		} else {
			fmt.Fprintf(stdout, "seed %d, faults drawn from the seed\n", *seed)
		}
		for i, f := range res.Schedule.Faults {
			fmt.Fprintf(stdout, "  %-3d %s\n", i+1, f)
		}
		s.printVerdict(stdout, res, "")
		if res.Passed && sch != nil && (sch.ShrunkFrom > 0 || sch.Duration > 0 && sch.Duration < s.w.Duration) {
			// A shrunk schedule stops just past the failure it kept.
			fmt.Fprintf(stdout, "note: this pass is within the schedule's shrunk %v: it shows that what was taken out of the schedule is needed for this failure, not that the program is fixed\n", sch.Duration)
		}
		fmt.Fprintf(stdout, "digest %s\n", res.Digest)
	}
	if !res.Passed {
		return errFailed
	}
	return nil
}
