package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"report", "-c seedfall.json -seeds 1-20 [-seed N [-faults FILE]] [-o report.html]", reportCmd})
}

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "report one seed")
	seeds := fs.String("seeds", "", "report many seeds: 1-20, or lists like 2-3,9")
	faultsFile := fs.String("faults", "", "with -seed: the schedule to apply (default: .seedfall/seed-N.faults.json next to the config, if it exists)")
	out := fs.String("o", "", "write the page here (default: .seedfall/report.html next to the config)")
	parallel := fs.Int("parallel", defaultParallel(), "worlds run at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	var list engine.Seeds
	switch {
	case *seeds != "" && flagSet(fs, "seed"):
		return fmt.Errorf("give -seed N or -seeds 1-20, not both")
	case *seeds != "" && *faultsFile != "":
		return fmt.Errorf("-faults replays one seed: use it with -seed N, not -seeds")
	case *seeds != "":
		var err error
		if list, err = parseSeeds(*seeds); err != nil {
			return err
		}
	case flagSet(fs, "seed"):
		list = engine.OneSeed(*seed)
	default:
		return fmt.Errorf("say which seeds to report: -seeds 1-20, or -seed N")
	}
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.Close()

	return s.Report(ctx, session.ReportOptions{List: list, Faults: *faultsFile, Path: *out, Parallel: *parallel}, stdout, stderr)
}
