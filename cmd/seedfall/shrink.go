package main

import (
	"context"
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
	if err := checkBudget(*budget); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	// Ctrl-C ends the shrink like a budget that ran out: the smallest
	// failing schedule so far is saved and printed.
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.close()

	o := shrinkOptions{seed: *seed, file: *faultsFile, budget: *budget, parallel: *parallel}
	progress := isTerminal(stderr) && !*asJSON
	if progress {
		o.progress = func(p shrink.Progress) {
			fmt.Fprintf(stderr, "\r\033[Kshrinking seed %d: %s, %s so far, %s left", *seed, p.Step, plural(p.Runs, "run"), plural(p.Faults, "fault"))
		}
	}
	r, err := shrinkSeed(ctx, s, o)
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.Marshal(r.report())
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		r.print(stdout)
	}
	return r.verdict()
}

// checkBudget refuses a negative -budget.
func checkBudget(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("-budget %v is negative: give a wall time such as 2m, or 0 for no limit", d)
	}
	return nil
}

// shrinkOptions say which seed to shrink, from what, and for how long.
type shrinkOptions struct {
	seed     uint64
	file     string        // the schedule to start from; "": the seed's own file unless shrink wrote it, else its own faults
	budget   time.Duration // the wall time it may take; 0: no limit
	parallel int
	progress func(shrink.Progress) // nil: none
}

// shrunk is a shrink's outcome: the smallest failing schedule found and
// where it was saved, or the start's run when the seed passes.
type shrunk struct {
	seed    uint64
	what    string         // what it started from: "its own faults", "3 faults from FILE"
	res     *shrink.Result // the runs, the shrunk schedule and its run
	sch     *faults.Schedule
	path    string // the file sch was saved to; "" when the seed passes
	replay  string // the command that replays the seed with it
	resume  string // the command that shrinks it further, after Ctrl-C
	budget  time.Duration
	wall    time.Duration // the shrink's real time
	stopped bool          // Ctrl-C ended it
}

// shrinkSeed shrinks a failing seed's schedule and saves the result where
// replay looks, unless a schedule it must keep is there (saveKeeping): a
// note on the session's stderr says so.
func shrinkSeed(ctx context.Context, s *session, o shrinkOptions) (*shrunk, error) {
	start, from, err := s.loadSchedule(o.file, o.seed)
	if err != nil {
		return nil, err
	}
	// A schedule shrink wrote is where the last shrink ended; shrinking
	// the seed again starts from its own faults, so that it gives the same
	// file again. -faults shrinks it further.
	if o.file == "" && start != nil && start.ShrunkFrom > 0 {
		start, from = nil, ""
	}
	r := &shrunk{seed: o.seed, what: "its own faults", budget: o.budget}
	if from != "" {
		r.what = plural(len(start.Faults), "fault") + " from " + from
	}
	began := time.Now()
	res, err := shrink.Shrink(ctx, s.p, o.seed, start, shrink.Options{Budget: o.budget, Parallel: o.parallel, Progress: o.progress})
	if err != nil {
		if interrupted(ctx) {
			return nil, fmt.Errorf("%w before seed %d's first run finished: nothing shrunk", errInterrupted, o.seed)
		}
		return nil, err
	}
	r.res, r.wall = res, time.Since(began)
	r.stopped = res.Exhausted && interrupted(ctx)
	if res.Start.Passed {
		return r, nil
	}

	sch := res.Schedule
	sch.Config = s.configName()
	// The result goes where replay looks, unless an explored schedule or
	// another world's is there that this shrink did not start from: that
	// is kept, and the result written as seed-N.shrunk.faults.json.
	startedFrom := o.file
	if from != "" && startedFrom == "" {
		startedFrom = s.schedulePath(o.seed)
	}
	sv, err := s.saveKeeping(s.schedulePath(o.seed), "shrunk", sch, startedFrom, nil)
	if err != nil {
		return nil, err
	}
	s.noteSaved(sv)
	r.sch, r.path = sch, sv.path
	r.replay = s.replayWith(o.seed, sv.path)
	r.resume = fmt.Sprintf("seedfall shrink %s -seed %d -faults %s", s.args, o.seed, shellQuote(displayPath(sv.path)))
	return r, nil
}

// print writes the outcome for a person: the faults left before the
// failure, its verdict, and the file written.
func (r *shrunk) print(w io.Writer) {
	res := r.res
	if res.Start.Passed {
		printResult(w, res.Start, "", "")
		fmt.Fprintf(w, "nothing to shrink: seed %d passes with %s\n", r.seed, r.what)
		return
	}
	sch := r.sch
	fmt.Fprintf(w, "seed %d, %s: shrunk to %s in %s (%s real)\n", r.seed, r.what, plural(len(sch.Faults), "fault"),
		plural(res.Runs, "run"), wallTime(int64(r.wall)))
	switch {
	case r.stopped:
		fmt.Fprintf(w, "note: interrupted; this is the smallest failing schedule found so far (go on from it: %s)\n", r.resume)
	case res.Exhausted:
		fmt.Fprintf(w, "note: the %v budget ran out; this is the smallest failing schedule found so far (raise -budget to go further)\n", r.budget)
	}
	fmt.Fprintf(w, "faults before the failure at %s:\n", simTime(res.Run.SimNs))
	n := 0
	for _, f := range sch.Faults {
		if f.At <= time.Duration(res.Run.SimNs) {
			n++
			fmt.Fprintf(w, "  %-3d  %s\n", n, faults.Describe(f))
		}
	}
	if n == 0 {
		fmt.Fprintf(w, "  none: seed %d fails without any fault\n", r.seed)
	}
	fmt.Fprintf(w, "duration %v\n", sch.Duration)
	printResult(w, res.Run, "", "")
	fmt.Fprintf(w, "wrote %s\n", displayPath(r.path))
	fmt.Fprintf(w, "replay: %s\n", r.replay)
}

// verdict is the command's outcome as an error: errInterrupted when Ctrl-C
// ended the shrink, errFailed when the seed fails, nil when it passes.
func (r *shrunk) verdict() error {
	switch {
	case r.res.Start.Passed:
		return nil
	case r.stopped:
		return errInterrupted
	case !r.res.Run.Passed:
		return errFailed
	}
	return nil
}

// report is shrink -json's object.
func (r *shrunk) report() shrinkJSON {
	if r.res.Start.Passed {
		return shrinkJSON{Seed: r.seed, Passed: true, Reason: r.res.Start.Reason, Runs: r.res.Runs}
	}
	run := r.res.Run
	return shrinkJSON{Seed: r.seed, Class: run.Class, Reason: run.Reason, Node: run.Node, SimNs: run.SimNs,
		Digest: run.Digest, ShrunkFrom: r.sch.ShrunkFrom, Faults: len(r.sch.Faults), Runs: r.res.Runs, Exhausted: r.res.Exhausted,
		Schedule: displayPath(r.path), Replay: r.replay, Interrupted: r.stopped}
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
