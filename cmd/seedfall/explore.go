package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/session"
	"github.com/seedfall/seedfall/starlark"
)

func init() {
	register(command{"explore", "[-c FILE] [-strategy NAME|file.star] [-budget 1000|10m] [-seeds 1-1000] [-parallel K] [-max-steps N]", exploreCmd})
}

// exploreCmd runs a search strategy written in Starlark over a world: one
// of the stdlib's by name, or a file's `strategy` function. Every failure
// it finds is saved as a schedule (with the branches that found it) that
// `seedfall replay -faults` reproduces. Exit status 1 when it found one.
func exploreCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("explore", stderr)
	cfg := worldFlags(fs)
	strategy := fs.String("strategy", "random_seeds", "a stdlib strategy (random_seeds, swarm, branch_closest, guided) or a .star file defining strategy(ctx)")
	first := fs.Bool("stop-at-first", false, "stop at the first failure: the runs after it in its batch are not made")
	budgetFlag := fs.String("budget", starlark.DefaultBudget.String(), "how much to explore: a run count (500: the same failures every time) or wall time (10m)")
	seedsFlag := fs.String("seeds", fmt.Sprintf("1-%d", starlark.DefaultSeeds), "the seeds the strategy draws from (ctx.seeds): 1-1000, or lists like 2-3,9")
	parallel := fs.Int("parallel", defaultParallel(), "runs at once")
	asJSON := fs.Bool("json", false, "print one JSON object per failure, with the schedule file it is saved in")
	maxSteps := fs.Int64("max-steps", 0, fmt.Sprintf("Starlark steps a strategy may take in all; its runs do not count (0: $%s, else %d; -1: no limit)", starlark.StepsEnv, starlark.DefaultMaxSteps))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	worldsAtOnce(*parallel)
	budget, err := starlark.ParseBudget(*budgetFlag)
	if err != nil {
		return fmt.Errorf("-%v", err)
	}
	seeds, err := parseSeeds(*seedsFlag)
	if err != nil {
		return err
	}
	// Ctrl-C stops the runs in flight and shows what was found so far.
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.Close()
	env := starlark.NewEnv(starlark.Options{Engine: s.Engine(), Stdout: stdout, Parallel: *parallel, MaxSteps: *maxSteps, StepsFlag: "-max-steps"})
	wv, err := starlark.WorldValue(s.World())
	if err != nil {
		return err
	}
	th := env.NewThread("explore")
	var fn sl.Callable
	name := *strategy
	if strings.HasSuffix(name, ".star") {
		g, err := env.ExecFile(name)
		if err != nil {
			return fmt.Errorf("%s", starlark.ScriptError(err))
		}
		c, ok := g["strategy"].(sl.Callable)
		if !ok {
			return fmt.Errorf("%s defines no function `strategy`; write def strategy(ctx): ... (see docs/explore.md)", name)
		}
		fn, name = c, filepath.Base(name)
	} else if fn, err = env.StdStrategy(th, sl.String(name)); err != nil {
		return fmt.Errorf("-strategy: %v", err)
	}

	// Runs the strategy makes with run() rather than ctx.run stop too.
	defer context.AfterFunc(ctx, env.Cancel)()

	term := isTerminal(stderr)
	progress := func(p starlark.ExploreProgress) {
		if !term {
			return
		}
		fmt.Fprintf(stderr, "\r\033[Kexplore %s: %s", name, p)
	}
	start := time.Now()
	x, err := env.Explore(th, wv, fn, starlark.ExploreOptions{Seeds: seeds, Budget: budget, Parallel: *parallel, Progress: progress, Name: name, Context: ctx, StopAtFirst: *first})
	if term {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil && !errors.Is(err, starlark.ErrInterrupted) {
		if interrupted(ctx) {
			// A run() of the strategy's own, cut short: nothing to show
			// but the error.
			return fmt.Errorf("%w: %s", errInterrupted, starlark.ScriptError(err))
		}
		return fmt.Errorf("%s", starlark.ScriptError(err))
	}
	if cerr := s.KeepCoverage(stderr, x.Coverage); cerr != nil {
		return cerr
	}
	if *asJSON {
		err = writeExploration(s, stdout, x)
	} else {
		err = printExploration(s, stdout, x, time.Since(start))
	}
	if x.StoppedBy == "interrupted" && (err == nil || errors.Is(err, errFailed)) {
		if *asJSON {
			fmt.Fprintf(stderr, "interrupted: %s, %s\n", plural(x.Runs, "run"), plural(len(x.Failures), "failure"))
		}
		return errInterrupted
	}
	return err
}

// exploredRuns is "146 runs", and the work they cost when forks made it
// less: "146 runs, 100.0 of work".
func exploredRuns(x *starlark.Exploration) string {
	if math.Abs(x.Work-float64(x.Runs)) <= 0.05 {
		return plural(x.Runs, "run")
	}
	return fmt.Sprintf("%s, %.1f of work", plural(x.Runs, "run"), x.Work)
}

// printExploration saves every failure's schedule and prints them, the
// best with its trace.
func printExploration(s *session.Session, w io.Writer, x *starlark.Exploration, took time.Duration) error {
	why := map[string]string{"budget": "the budget is spent", "strategy": "the strategy ended", "failure": "stopped at the first failure", "interrupted": "interrupted"}[x.StoppedBy]
	if len(x.Failures) == 0 {
		fmt.Fprintf(w, "no failure in %s (%s, %s; %s)\n", exploredRuns(x), x.Strategy, wallTime(int64(took)), why)
		return nil
	}
	fmt.Fprintf(w, "%s in %s (%s, %s; %s):\n", plural(len(x.Failures), "failure"), exploredRuns(x), x.Strategy, wallTime(int64(took)), why)
	perSeed := map[uint64]int{}
	replays := map[*starlark.Run]string{}
	for _, r := range x.Failures {
		perSeed[r.Seed]++
		_, cmd, err := s.SaveExplored(r.Result, r.World.World(), perSeed[r.Seed])
		if err != nil {
			return err
		}
		replays[r] = cmd
		sch := r.Result.Schedule
		what := plural(len(sch.Faults), "fault")
		if n := len(sch.Branches); n > 0 {
			what += ", " + plural(n, "branch")
			what = strings.Replace(what, "branchs", "branches", 1)
		}
		fmt.Fprintf(w, "  seed %d (%s): %s: %s\n", r.Seed, what, r.Result.Class, firstLine(r.Result.Reason))
		fmt.Fprintf(w, "    replay: %s\n", cmd)
	}
	best := x.Best()
	fmt.Fprintf(w, "best (fewest faults and branches, soonest):\n")
	s.WriteVerdict(w, best.Result, replays[best])
	for _, b := range best.Result.Schedule.Branches {
		fmt.Fprintf(w, "  branch at %s: %s\n", b.At, describeBranch(b))
	}
	return errFailed
}

// writeExploration saves every failure and prints it as a JSON line.
func writeExploration(s *session.Session, w io.Writer, x *starlark.Exploration) error {
	perSeed := map[uint64]int{}
	for _, r := range x.Failures {
		perSeed[r.Seed]++
		path, _, err := s.SaveExplored(r.Result, r.World.World(), perSeed[r.Seed])
		if err != nil {
			return err
		}
		writeJSON(w, r.Result, path)
	}
	if len(x.Failures) > 0 {
		return errFailed
	}
	return nil
}

func describeBranch(b faults.Branch) string {
	if b.Stream == "" {
		return fmt.Sprintf("every stream re-keyed with %d", b.Key)
	}
	return fmt.Sprintf("the %s stream re-keyed with %d", b.Stream, b.Key)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
