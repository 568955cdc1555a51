package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/results"
)

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "run one seed")
	seeds := fs.String("seeds", "", "run many seeds: 1-500, or lists like 2-3,9")
	parallel := fs.Int("parallel", defaultParallel(), "worlds run at once (one per core; a world never spreads over cores)")
	asJSON := fs.Bool("json", false, "print one JSON object per seed")
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of seedfall itself to this file")
	gprof := guestProfileFlag(fs) // guestprofile.go
	reportPath := fs.String("report", "", "write an HTML report of the sweep to this file")
	withPinned := fs.Bool("pinned", true, "replay the regressions pinned next to the config (seedfall pin) before the seeds")
	cov := coverageFlags(fs) // results_sweep.go
	shardSpec := fs.String("shard", "", "run the K-th of N parts of the seeds, as K/N (seed i of the list, from 0, is in part i mod N + 1), or auto under a Slurm array or a Kubernetes Indexed Job")
	ra := resultsFlags(fs, "write the results to this `dir`, for seedfall merge and -baseline (with -shard: to DIR/shard-K-of-N)") // results_sweep.go
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if err := gprof.open(); err != nil {
		return err
	}
	defer gprof.write(stderr)
	list := engine.OneSeed(*seed)
	if *seeds != "" {
		var err error
		if list, err = parseSeeds(*seeds); err != nil {
			return err
		}
	} else if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seeds to run: -seed N or -seeds 1-500")
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	sh, err := results.ParseShard(*shardSpec, os.Getenv)
	if err != nil {
		return err
	}
	if *ra.baseline != "" && !sh.Whole() {
		return fmt.Errorf("-baseline with -shard would triage a part of the sweep as if it were all of it: merge the shards, then triage them with seedfall merge -baseline %s DIR", shellQuote(*ra.baseline))
	}
	base, err := results.LoadBaseline(*ra.baseline, stderr)
	if err != nil {
		return err
	}
	// Ctrl-C stops the runs in flight; what finished is printed, and
	// written to -report, as a whole sweep's would be.
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.close()
	_, err = s.sweepSeeds(ctx, sweepArgs{list: list, shard: sh, parallel: *parallel, asJSON: *asJSON, pinned: *withPinned,
		requireCoverage: *cov, reportPath: *reportPath, out: *ra.out, junit: *ra.junit, baseline: base,
		runOptions: gprof.runOptions()}, stdout, stderr)
	return err
}

// sweepArgs say what a sweep of seeds is to run, print and keep: run's
// flags, or seedfall_run's arguments.
type sweepArgs struct {
	list            engine.Seeds
	shard           results.Shard // the part of list to run; the zero Shard is all of it
	parallel        int
	asJSON          bool
	pinned          bool // replay the pinned regressions first (in shard 1 only)
	requireCoverage bool
	reportPath      string            // -report
	out, junit      string            // -out, -junit
	baseline        *results.Baseline // -baseline, loaded; nil without
	runOptions      func(seed uint64) (engine.RunOptions, error)
	// each, if set, hears every seed of the list as it is printed, with
	// the number of seeds done so far: seedfall_run's structured result
	// and progress.
	each func(rec *results.Record, res *engine.Result, done int)
}

// sweepSeeds runs a sweep in s and prints it to stdout, notes and progress
// to stderr, with the coverage, triage, report, JUnit file and results
// directory that a asks for. run and seedfall_run both use it, so both
// print and keep the same. It returns what it printed and kept, once the
// sweep began, and errFailed when the sweep fails.
func (s *session) sweepSeeds(ctx context.Context, a sweepArgs, stdout, stderr io.Writer) (*sweepOutput, error) {
	sh, list := a.shard, a.list
	size := sh.Count(list.Len()) // the seeds this sweep runs
	if !sh.Whole() {
		from := ""
		if sh.From != "" {
			from = " (" + sh.From + ")"
		}
		fmt.Fprintf(stderr, "seedfall: shard %d of %d%s: %d of the %s of -seeds %s\n", sh.K, sh.N, from, size, plural(list.Len(), "seed"), list)
	}
	pinned := a.pinned && sh.K <= 1 // the pinned regressions run in shard 1 only
	id, build, err := results.Identity(s.w, s.p, s.args)
	if err != nil {
		return nil, err
	}
	o := newSweepOutput(stdout, stderr, a.asJSON, size, a.requireCoverage, newSweepReport(s, a.reportPath), id, a.junit)
	o.Baseline, o.Findings = a.baseline, a.baseline.Findings()
	if a.out != "" {
		dir := a.out
		meta := &results.Meta{Seedfall: seedfallVersion(), World: id, Build: build, Seeds: list.String(), Total: list.Len(),
			Count: size, Pinned: pinned}
		if !sh.Whole() {
			dir = filepath.Join(dir, sh.DirName())
			meta.Shard = &results.ShardMeta{Index: sh.K, Count: sh.N, From: sh.From}
		}
		for _, p := range s.w.Programs() {
			meta.Nodes = append(meta.Nodes, p.Name)
		}
		if o.Out, err = results.Create(dir, meta); err != nil {
			return nil, err
		}
	}
	if pinned {
		if _, err = s.runPinnedEach(ctx, stdout, a.asJSON, o.Pinned); err != nil {
			if interrupted(ctx) {
				fmt.Fprintf(stderr, "%s (while replaying the pinned regressions)\n", interruptedLine(0, size))
				return nil, errInterrupted
			}
			return nil, err
		}
	}

	start := time.Now()
	// Print in seed order, whatever order the workers finish in.
	progress := isTerminal(stderr) && !a.asJSON && size > 1
	var shown time.Time
	var logp *logProgress
	if size > 1 {
		logp = startLogProgress(stderr) // logprogress.go: when stderr is not a terminal
	}
	ran, runErr := s.sweepSeq(ctx, sh.Seeds(list), a.parallel, a.runOptions, func(res *engine.Result) {
		defer func() { logp.seeds(o.Passed+o.Failed, size, o.Failed) }()
		schedule, replay, history := "", s.replayCommand(res.Seed), ""
		if !res.Passed {
			schedule, replay, history = s.keepFailure(res)
		}
		rec := results.NewRecord(res, schedule, seedfallVersion())
		rec.Replay, rec.History = replay, history
		if !res.Passed && o.Out != nil {
			sch := *res.Schedule
			sch.Config = s.configName()
			rec.ScheduleJSON, _ = sch.MarshalJSON()
			if res.History != nil && len(res.History.HTML) > 0 {
				rec.HistoryHTML = res.History.HTML
			}
		}
		if progress && (!res.Passed || a.asJSON) {
			fmt.Fprint(stderr, "\r\033[K") // the line about to be printed replaces it
		}
		o.seed(rec)
		done := o.Passed + o.Failed
		if a.each != nil {
			a.each(rec, res, done)
		}
		if progress && (time.Since(shown) > 100*time.Millisecond || done == size) {
			shown = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(stderr, "\r\033[K%d/%d seeds, %.0f seeds/s, %d failed", done, size, float64(done)/el, o.Failed)
		}
	})
	logp.end()
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if runErr != nil {
		o.Out.Finish(nil)
		return o, runErr
	}
	return o, o.finish(time.Since(start), interrupted(ctx) && ran < size, ran, size)
}

// detailedFailures is how many failing seeds of a sweep get their last
// lines and replay command printed.
const detailedFailures = 5

// keepFailure is a sweep's work for a failing seed: it saves the seed's
// schedule next to the world file, or says on the session's stderr why it
// could not, and returns the file as -json names it ("" when not saved),
// the command that replays the seed, and the page of its history that is
// not linearizable, if one is drawn. run and seedfall_run both use it.
func (s *session) keepFailure(res *engine.Result) (schedule, replay, history string) {
	replay = s.replayCommand(res.Seed)
	if path, err := s.saveSchedule(res); err != nil {
		fmt.Fprintf(s.stderr, "seedfall: could not save the schedule of seed %d: %v\n", res.Seed, err)
	} else {
		schedule, replay = displayPath(path), s.replayWith(res.Seed, path)
	}
	return schedule, replay, s.historyShown(res, replay)
}
