package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/seedfall/seedfall/engine/session"
	"github.com/seedfall/seedfall/engine/shrink"
)

func init() {
	register(command{"shrink", "-c seedfall.json -seed N [-faults FILE] [-budget 2m] [-parallel K] [-json]", shrinkCmd})
}

func shrinkCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("shrink", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "the failing seed to shrink")
	faultsFile := fs.String("faults", "", "the schedule to start from (default: .seedfall/seed-N.faults.json next to the config unless shrink wrote it, else the seed's own faults)")
	budget := fs.Duration("budget", 2*time.Minute, "the wall time shrinking may take; when it runs out, the smallest failing schedule so far is kept (0: no limit)")
	parallel := fs.Int("parallel", runtime.NumCPU(), "runs at once (the result is the same whatever this is)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed to shrink: -seed N")
	}
	if err := session.CheckBudget(*budget); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	// Ctrl-C ends the shrink like a budget that ran out: the smallest
	// failing schedule so far is saved and printed.
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.Close()

	o := session.ShrinkOptions{Seed: *seed, File: *faultsFile, Budget: *budget, Parallel: *parallel}
	progress := isTerminal(stderr) && !*asJSON
	if progress {
		o.Progress = func(p shrink.Progress) {
			fmt.Fprintf(stderr, "\r\033[Kshrinking seed %d: %s, %s so far, %s left", *seed, p.Step, plural(p.Runs, "run"), plural(p.Faults, "fault"))
		}
	}
	r, err := s.Shrink(ctx, o)
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.Marshal(r.Report())
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		r.Write(stdout)
	}
	return r.Verdict()
}
