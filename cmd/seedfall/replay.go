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
	sa := seedFlags(fs, "replay").withMutant()
	asJSON := fs.Bool("json", false, "print the result as JSON")
	gprof := guestProfileFlag(fs) // guestprofile.go
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := gprof.open(); err != nil {
		return err
	}
	defer gprof.write(stderr)
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.Close()
	r, err := s.Replay(ctx, engine.RunOptions{Seed: *sa.seed, Schedule: sch, GuestProfile: gprof.profile(), Mutant: sa.mut}, from)
	if err != nil {
		return err
	}
	if *asJSON {
		fmt.Fprintf(stdout, "%s\n", r.Report())
	} else {
		r.Write(stdout)
	}
	return r.Verdict()
}
