package main

import (
	"context"
	"fmt"
	"io"
	"regexp"
)

func init() {
	register(command{"pin", "-c seedfall.json -seed N [-name NAME] [-faults FILE]", pinCmd})
}

var pinName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// pinCmd keeps a failing seed's schedule as a regression: seedfall run
// replays it before any new seed, and says whether it still fails.
func pinCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pin", stderr)
	cfg := worldFlags(fs)
	name := fs.String("name", "", "the regression's name (default: seed-N)")
	sa := seedFlags(fs, "pin")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		*name = fmt.Sprintf("seed-%d", *sa.seed)
	}
	if !pinName.MatchString(*name) {
		return fmt.Errorf("-name %q: use letters, digits, '.', '_' and '-', such as lost-ack-after-crash", *name)
	}
	ctx := context.Background()
	s, sch, _, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.Close()
	pin, err := s.Pin(ctx, *sa.seed, sch, *name)
	if err != nil {
		return err
	}
	pin.Write(stdout)
	return nil
}
