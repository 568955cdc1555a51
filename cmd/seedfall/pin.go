package main

import (
	"context"
	"fmt"
	"github.com/seedfall/seedfall/engine/session"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/seedfall/seedfall/engine"
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
	seed := sa.seed
	path := filepath.Join(s.World().Dir, session.RegressionsDir, *name+".faults.json")
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists; choose another -name, or remove it first", displayPath(path))
	}
	res, err := s.Prepared().Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch})
	if err != nil {
		return err
	}
	if res.Passed {
		return fmt.Errorf("seed %d passes (%s): only a failing run can be pinned as a regression", *seed, res.Reason)
	}
	// Pin what the run did: the faults that happened, and the schedule's
	// branches and shrink record, so the regression replays the same run.
	pinned := *res.Schedule
	if sch != nil {
		pinned.Duration, pinned.ShrunkFrom, pinned.ShrinkRuns = sch.Duration, sch.ShrunkFrom, sch.ShrinkRuns
	}
	pinned.Config = s.ConfigName()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := pinned.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pinned seed %d (%s: %s) as %s\n", *seed, res.Class, res.Reason, displayPath(path))
	fmt.Fprintf(stdout, "seedfall run %s replays it before any new seed\n", s.Args())
	return nil
}
