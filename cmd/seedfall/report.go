package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/results"
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
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.Close()

	path := *out
	if path == "" {
		path = filepath.Join(artifactDir(s.World()), "report.html")
	}
	rep := s.SweepReport(path)
	// Each seed runs as replay runs it: with its saved schedule (a shrunk
	// or edited one, say) when there is one, so the page shows what its
	// replay command shows.
	replayFaults := ""
	if *faultsFile != "" { // with -seed
		_, from, err := s.LoadSchedule(*faultsFile, *seed)
		if err != nil {
			return err
		}
		replayFaults = " -faults " + shellQuote(from)
	}
	ran, err := s.SweepSeeds(ctx, list, *parallel, func(seed uint64) (engine.RunOptions, error) {
		sch, _, err := s.LoadSchedule(*faultsFile, seed)
		return engine.RunOptions{Seed: seed, Schedule: sch}, err
	}, func(res *engine.Result) {
		rep.Add(results.NewRecord(res, "", ""), s.ReplayCommand(res.Seed)+replayFaults)
	})
	if err != nil {
		return err
	}
	return rep.Finish(stdout, stderr, interrupted(ctx) && ran < list.Len(), ran, list.Len())
}
