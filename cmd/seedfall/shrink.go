package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
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
	if *budget < 0 {
		return fmt.Errorf("-budget %v is negative: give a wall time such as 2m, or 0 for no limit", *budget)
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	// Ctrl-C ends the shrink like a budget that ran out: the smallest
	// failing schedule so far is saved and printed.
	ctx, stop := onInterrupt(callContext(stderr), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.close()

	start, from, err := s.loadSchedule(*faultsFile, *seed)
	if err != nil {
		return err
	}
	// A schedule shrink wrote is where the last shrink ended; shrinking
	// the seed again starts from its own faults, so that it gives the same
	// file again. -faults shrinks it further.
	if *faultsFile == "" && start != nil && start.ShrunkFrom > 0 {
		start, from = nil, ""
	}
	what := "its own faults"
	if from != "" {
		what = plural(len(start.Faults), "fault") + " from " + from
	}

	progress := isTerminal(stderr) && !*asJSON
	opt := shrink.Options{Budget: *budget, Parallel: *parallel}
	if progress {
		opt.Progress = func(p shrink.Progress) {
			fmt.Fprintf(stderr, "\r\033[Kshrinking seed %d: %s, %s so far, %s left", *seed, p.Step, plural(p.Runs, "run"), plural(p.Faults, "fault"))
		}
	}
	began := time.Now()
	res, err := shrink.Shrink(ctx, s.p, *seed, start, opt)
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if interrupted(ctx) {
			return fmt.Errorf("%w before seed %d's first run finished: nothing shrunk", errInterrupted, *seed)
		}
		return err
	}
	wall := time.Since(began)
	stopped := res.Exhausted && interrupted(ctx)

	if res.Start.Passed {
		if *asJSON {
			b, _ := json.Marshal(shrinkJSON{Seed: *seed, Passed: true, Reason: res.Start.Reason, Runs: res.Runs})
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			s.printVerdict(stdout, res.Start, "")
			fmt.Fprintf(stdout, "nothing to shrink: seed %d passes with %s\n", *seed, what)
		}
		return nil
	}

	sch := res.Schedule
	sch.Config = s.configName()
	// The result goes where replay looks, unless an explored schedule or
	// another world's is there that this shrink did not start from: that
	// is kept, and the result written as seed-N.shrunk.faults.json.
	startedFrom := *faultsFile
	if from != "" && startedFrom == "" {
		startedFrom = s.schedulePath(*seed)
	}
	sv, err := s.saveKeeping(s.schedulePath(*seed), "shrunk", sch, startedFrom, nil)
	if err != nil {
		return err
	}
	s.noteSaved(sv)
	path := sv.path
	replay := s.replayWith(*seed, path)
	if *asJSON {
		run := res.Run
		b, _ := json.Marshal(shrinkJSON{Seed: *seed, Class: run.Class, Reason: run.Reason, Node: run.Node, SimNs: run.SimNs,
			Digest: run.Digest, ShrunkFrom: sch.ShrunkFrom, Faults: len(sch.Faults), Runs: res.Runs, Exhausted: res.Exhausted,
			Schedule: displayPath(path), Replay: replay, Interrupted: stopped})
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintf(stdout, "seed %d, %s: shrunk to %s in %s (%s real)\n", *seed, what, plural(len(sch.Faults), "fault"),
			plural(res.Runs, "run"), wallTime(int64(wall)))
		switch {
		case stopped:
			fmt.Fprintf(stdout, "note: interrupted; this is the smallest failing schedule found so far (go on from it: seedfall shrink %s -seed %d -faults %s)\n",
				s.args, *seed, shellQuote(displayPath(path)))
		case res.Exhausted:
			fmt.Fprintf(stdout, "note: the %v budget ran out; this is the smallest failing schedule found so far (raise -budget to go further)\n", *budget)
		}
		fmt.Fprintf(stdout, "faults before the failure at %s:\n", simTime(res.Run.SimNs))
		n := 0
		for _, f := range sch.Faults {
			if f.At <= time.Duration(res.Run.SimNs) {
				n++
				fmt.Fprintf(stdout, "  %-3d  %s\n", n, faults.Describe(f))
			}
		}
		if n == 0 {
			fmt.Fprintf(stdout, "  none: seed %d fails without any fault\n", *seed)
		}
		fmt.Fprintf(stdout, "duration %v\n", sch.Duration)
		s.printVerdict(stdout, res.Run, "")
		fmt.Fprintf(stdout, "wrote %s\n", displayPath(path))
		fmt.Fprintf(stdout, "replay: %s\n", replay)
	}
	if stopped {
		return errInterrupted
	}
	if !res.Run.Passed {
		return errFailed
	}
	return nil
}

type shrinkJSON struct {
	Seed       uint64 `json:"seed"`
	Passed     bool   `json:"passed"`
	Class      string `json:"class,omitempty"`
	Reason     string `json:"reason"`
	Node       string `json:"node,omitempty"`
	SimNs      int64  `json:"sim_ns,omitempty"`
	Digest     string `json:"digest,omitempty"`
	ShrunkFrom int    `json:"shrunk_from"`
	Faults     int    `json:"faults"`
	Runs       int    `json:"shrink_runs"`
	Exhausted  bool   `json:"exhausted"`
	// Interrupted: Ctrl-C ended the shrink (exhausted is true too).
	Interrupted bool   `json:"interrupted,omitempty"`
	Schedule    string `json:"schedule,omitempty"`
	Replay      string `json:"replay,omitempty"`
}
