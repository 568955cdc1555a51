package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/faults"
)

func init() {
	register(command{"cause", "-c seedfall.json -seed N [-faults FILE] [-moments M] [-branches B] [-parallel K] [-json]", causeCmd})
}

// causeCmd forks a failing run at many moments and reports when the
// failure became inevitable, with what happened just before.
func causeCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cause", stderr)
	cfg := worldFlags(fs)
	sa := seedFlags(fs, "explain")
	moments := fs.Int("moments", 16, "moments to fork the run at, evenly spread, before refining")
	branches := fs.Int("branches", 8, "forks per moment")
	parallel := fs.Int("parallel", 2, "runs at once")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	worldsAtOnce(*parallel)
	if *moments < 2 || *branches < 1 {
		return fmt.Errorf("-moments must be at least 2, -branches at least 1")
	}
	// Ctrl-C stops the forks in flight; what the finished ones establish
	// is printed.
	ctx, stop := onInterrupt(callContext(stderr), stderr)
	defer stop()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.close()
	seed := sa.seed
	opt := cause.Options{Moments: *moments, Branches: *branches, Parallel: *parallel}
	if isTerminal(stderr) {
		opt.Progress = func(done, total int) { fmt.Fprintf(stderr, "\r\033[Kforking: %d of about %d runs", done, total) }
	}
	res, err := cause.Find(ctx, s.p, *seed, sch, opt)
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if interrupted(ctx) {
			return fmt.Errorf("%w before seed %d's run finished: nothing established", errInterrupted, *seed)
		}
		return err
	}
	f := res.Failure
	// The verdict: the seed fails, or Ctrl-C stopped the search.
	verdict := errFailed
	if res.Interrupted {
		verdict = errInterrupted
	}
	if *asJSON {
		type moment struct {
			AtNs   int64 `json:"at_ns"`
			Failed int   `json:"failed"`
			Runs   int   `json:"runs"`
		}
		out := struct {
			Failure      jsonResult     `json:"failure"`
			Moments      []moment       `json:"moments"`
			AfterNs      int64          `json:"after_ns"`
			InevitableNs int64          `json:"inevitable_ns"`
			Faults       []faults.Fault `json:"faults"`
			Runs         int            `json:"runs"`
			Interrupted  bool           `json:"interrupted,omitempty"`
		}{Failure: newJSONResult(f, from), AfterNs: int64(res.After), InevitableNs: int64(res.Inevitable), Faults: res.Faults, Runs: res.Runs, Interrupted: res.Interrupted}
		for _, m := range res.Moments {
			out.Moments = append(out.Moments, moment{int64(m.At), m.Failed, m.Runs})
		}
		if out.Faults == nil {
			out.Faults = []faults.Fault{}
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return verdict
	}
	if from != "" {
		fmt.Fprintf(stdout, "seed %d, %s from %s\n", *seed, plural(len(sch.Faults), "fault"), from)
	}
	fmt.Fprintf(stdout, "seed %d fails at %s: %s: %s\n", *seed, simTime(f.SimNs), f.Class, f.Reason)
	fmt.Fprintf(stdout, "forked %s at %s, each keeping the faults before its moment and re-keying every stream from it:\n",
		plural(*branches, "way"), plural(len(res.Moments), "moment"))
	for _, m := range res.Moments {
		bar := strings.Repeat("#", m.Failed) + strings.Repeat(".", m.Runs-m.Failed)
		fmt.Fprintf(stdout, "  %14v  %s  %d/%d still fail\n", m.At, bar, m.Failed, m.Runs)
	}
	if res.Interrupted {
		fmt.Fprintf(stdout, "interrupted after %s; what the moments whose forks all finished establish:\n", plural(res.Runs, "run"))
	}
	if res.Inevitable == 0 {
		fmt.Fprintf(stdout, "the failure was inevitable from the start: forks without any fault still fail\n")
	} else {
		fmt.Fprintf(stdout, "the failure became inevitable between %v and %v\n", res.After, res.Inevitable)
	}
	if len(res.Faults) > 0 {
		fmt.Fprintln(stdout, "faults in that interval:")
		for _, fl := range res.Faults {
			fmt.Fprintln(stdout, "  "+faults.Describe(fl))
		}
	}
	if len(res.Events) > 0 {
		fmt.Fprintln(stdout, "events in that interval:")
		for _, l := range tailLines(res.Events, "", 10) {
			fmt.Fprintln(stdout, "  "+l.String())
		}
	}
	fmt.Fprintf(stdout, "%s in all; debug the moment: seedfall debug %s -seed %d -at %v\n", plural(res.Runs, "run"), s.args, *seed, res.Inevitable)
	return verdict
}
