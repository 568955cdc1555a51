package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"cause", "-c seedfall.json -seed N [-faults FILE] [-moments M] [-branches B] [-parallel K] [-all] [-checkpoints] [-json]", causeCmd})
}

// causeCmd forks a failing run at many moments and reports when the
// failure became inevitable, with what happened just before.
func causeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cause", stderr)
	cfg := worldFlags(fs)
	sa := seedFlags(fs, "explain")
	moments := fs.Int("moments", session.CauseDefaults.Moments, "moments to fork the run at, evenly spread, before refining")
	branches := fs.Int("branches", session.CauseDefaults.Branches, "forks per moment")
	parallel := fs.Int("parallel", session.CauseDefaults.Parallel, "runs at once")
	all := fs.Bool("all", false, "run every fork of every moment of the scan, and of each moment tried after it: the full table, at several times the runs")
	checkpoints := fs.Bool("checkpoints", false, "run the seed once more with a checkpoint at every moment of the scan, and start each fork from the latest before its moment: the same answer; it pays only for many late forks")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	if *moments < 2 || *moments > cause.MaxMoments || *branches < 1 || *branches > cause.MaxBranches {
		return fmt.Errorf("-moments must be from 2 to %d, -branches from 1 to %d", cause.MaxMoments, cause.MaxBranches)
	}
	// Ctrl-C stops the forks in flight; what the moments the finished
	// ones decided establish is printed.
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.Close()
	opt := cause.Options{Moments: *moments, Branches: *branches, Parallel: *parallel, Exhaustive: *all, Checkpoints: *checkpoints}
	if isTerminal(stderr) {
		opt.Progress = func(done, most int) {
			fmt.Fprintf(stderr, "\r\033[Kforking: %d runs, at most %d", done, most)
		}
	}
	c, err := s.Cause(ctx, *sa.seed, sch, from, opt)
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(c.Report())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		c.Write(stdout)
	}
	return c.Verdict()
}
