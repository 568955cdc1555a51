package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
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
	moments := fs.Int("moments", causeDefaults.Moments, "moments to fork the run at, evenly spread, before refining")
	branches := fs.Int("branches", causeDefaults.Branches, "forks per moment")
	parallel := fs.Int("parallel", causeDefaults.Parallel, "runs at once")
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
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.close()
	opt := cause.Options{Moments: *moments, Branches: *branches, Parallel: *parallel, Exhaustive: *all, Checkpoints: *checkpoints}
	if isTerminal(stderr) {
		opt.Progress = func(done, most int) {
			fmt.Fprintf(stderr, "\r\033[Kforking: %d runs, at most %d", done, most)
		}
	}
	res, err := findCause(ctx, s, *sa.seed, sch, opt)
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(newCauseReport(res, from))
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		s.printCause(stdout, *sa.seed, sch, from, opt, res)
	}
	return causeVerdict(res)
}

// causeDefaults are cause's flags' defaults, which seedfall_cause uses.
var causeDefaults = cause.Options{Moments: 16, Branches: 8, Parallel: 2}

// findCause is cause.Find, with an error that says so when Ctrl-C stopped
// the seed's first run.
func findCause(ctx context.Context, s *session, seed uint64, sch *faults.Schedule, opt cause.Options) (*cause.Result, error) {
	res, err := cause.Find(ctx, s.p, seed, sch, opt)
	if err != nil && interrupted(ctx) {
		return nil, fmt.Errorf("%w before seed %d's run finished: nothing established", errInterrupted, seed)
	}
	return res, err
}

// causeVerdict is the command's outcome as an error: the seed fails, or
// Ctrl-C stopped the search.
func causeVerdict(res *cause.Result) error {
	if res.Interrupted {
		return errInterrupted
	}
	return errFailed
}

// causeReport is cause -json's object, and seedfall_cause's structured
// result.
type causeReport struct {
	Failure      results.Line   `json:"failure"`
	Moments      []causeMoment  `json:"moments"`
	AfterNs      int64          `json:"after_ns"`
	InevitableNs int64          `json:"inevitable_ns"`
	Faults       []faults.Fault `json:"faults"`
	Events       []string       `json:"events"`
	Runs         int            `json:"runs"`
	Steps        uint64         `json:"steps"`
	Interrupted  bool           `json:"interrupted,omitempty"`
}

type causeMoment struct {
	AtNs    int64  `json:"at_ns"`
	Failed  int    `json:"failed"`
	Runs    int    `json:"runs"`
	Verdict string `json:"verdict"`
}

func newCauseReport(res *cause.Result, from string) causeReport {
	out := causeReport{Failure: results.NewLine(res.Failure, from), AfterNs: int64(res.After), InevitableNs: int64(res.Inevitable), Faults: res.Faults,
		Runs: res.Runs, Steps: res.Steps, Interrupted: res.Interrupted}
	for _, m := range res.Moments {
		out.Moments = append(out.Moments, causeMoment{int64(m.At), m.Failed, m.Runs, m.Verdict.String()})
	}
	if out.Faults == nil {
		out.Faults = []faults.Fault{}
	}
	out.Events = []string{}
	for _, l := range res.Events {
		out.Events = append(out.Events, strings.TrimSpace(l.String()))
	}
	return out
}

// printCause writes cause's table for a person: the moments forked, when
// the failure became inevitable, what happened just before, and the
// debug command that shows the world at both ends.
func (s *session) printCause(w io.Writer, seed uint64, sch *faults.Schedule, from string, opt cause.Options, res *cause.Result) {
	f := res.Failure
	if from != "" {
		fmt.Fprintf(w, "seed %d, %s from %s\n", seed, plural(len(sch.Faults), "fault"), from)
	}
	fmt.Fprintf(w, "seed %d fails at %s: %s: %s\n", seed, simTime(f.SimNs), f.Class, f.Reason)
	if opt.Exhaustive {
		fmt.Fprintf(w, "forked %s at %s, each keeping the faults before its moment and re-keying every stream from it:\n",
			plural(opt.Branches, "way"), plural(len(res.Moments), "moment"))
	} else {
		fmt.Fprintf(w, "forked up to %s at %s, each keeping the faults before its moment and re-keying every stream from it;\n",
			plural(opt.Branches, "way"), plural(len(res.Moments), "moment"))
		fmt.Fprintf(w, "bisected on each moment's first fork (the faults' edges, then the scan, then halving), then ran the two ends' forks until they decided them (-all: every fork of every moment):\n")
	}
	for _, m := range res.Moments {
		bar := strings.Repeat("#", m.Failed) + strings.Repeat(".", m.Runs-m.Failed)
		note := ""
		switch {
		case m.Verdict == cause.Undecided && res.Interrupted:
			note = "  (interrupted: undecided)"
		case m.Verdict == cause.Undecided:
			note = "  (its first fork only: the search went past it)"
		case m.Runs < opt.Branches:
			note = fmt.Sprintf("  (%d of %d forks decided it: %s)", m.Runs, opt.Branches, m.Verdict)
		}
		fmt.Fprintf(w, "  %14v  %-*s  %d/%d still fail%s\n", m.At, opt.Branches, bar, m.Failed, m.Runs, note)
	}
	if res.Interrupted {
		fmt.Fprintf(w, "interrupted after %s; what the decided moments establish:\n", plural(res.Runs, "run"))
	}
	if res.Inevitable == 0 {
		fmt.Fprintf(w, "the failure was inevitable from the start: forks without any fault still fail\n")
	} else {
		fmt.Fprintf(w, "the failure became inevitable between %v and %v\n", res.After, res.Inevitable)
	}
	if len(res.Faults) > 0 {
		fmt.Fprintln(w, "faults in that interval:")
		for _, fl := range res.Faults {
			fmt.Fprintln(w, "  "+faults.Describe(fl))
		}
	}
	if len(res.Events) > 0 {
		fmt.Fprintln(w, "events in that interval:")
		for _, l := range tailLines(res.Events, "", 10) {
			fmt.Fprintln(w, "  "+l.String())
		}
	}
	// The world its forks start from at each end: where the failure can
	// still be avoided (before what was due at After), and where it cannot.
	debug := fmt.Sprintf("seedfall debug %s -seed %d", s.args, seed)
	if from != "" && !samePath(from, s.schedulePath(seed)) {
		debug += " -faults " + shellQuote(from) // the schedule it explained
	}
	if res.After > 0 {
		debug += fmt.Sprintf(" -at %v", res.After-1)
	}
	fmt.Fprintf(w, "%s in all, %s; the world at both ends: %s -at %v\n", plural(res.Runs, "run"), cost(res), debug, res.Inevitable)
}

// cost says what the forks cost in runs of the seed: their scheduler
// steps over the failing run's, which unlike their wall time is the same
// every time.
func cost(res *cause.Result) string {
	if res.Failure.Steps == 0 {
		return fmt.Sprintf("%d scheduler steps", res.Steps)
	}
	return fmt.Sprintf("%.1f times the failing run's scheduler steps", float64(res.Steps)/float64(res.Failure.Steps))
}
