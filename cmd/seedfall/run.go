package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/session"
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
	cov := coverageFlags(fs) // results_flags.go
	shardSpec := fs.String("shard", "", "run the K-th of N parts of the seeds, as K/N (seed i of the list, from 0, is in part i mod N + 1), or auto under a Slurm array or a Kubernetes Indexed Job")
	ra := resultsFlags(fs, "write the results to this `dir`, for seedfall merge and -baseline (with -shard: to DIR/shard-K-of-N)") // results_flags.go
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
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.Close()
	_, err = s.Sweep(ctx, session.SweepArgs{List: list, Shard: sh, Parallel: *parallel, JSON: *asJSON, Pinned: *withPinned,
		RequireCoverage: *cov, Report: *reportPath, Out: *ra.out, JUnit: *ra.junit, Baseline: base,
		RunOptions: gprof.runOptions(), Progress: sweepProgress(stderr, *asJSON)}, stdout, stderr)
	return err
}

// sweepProgress is a sweep's progress line: redrawn in place on a
// terminal (but with -json), logged now and then when stderr is a file or
// a pipe (logprogress.go), and none for a sweep of one seed.
func sweepProgress(stderr io.Writer, asJSON bool) func(size int) session.Progress {
	return func(size int) session.Progress {
		p := &progressLine{stderr: stderr, asJSON: asJSON, start: time.Now(),
			terminal: isTerminal(stderr) && !asJSON && size > 1}
		if size > 1 {
			p.logp = startLogProgress(stderr)
		}
		return p
	}
}

// progressLine is sweepProgress's session.Progress.
type progressLine struct {
	stderr   io.Writer
	asJSON   bool
	terminal bool // redraw a line in place
	logp     *logProgress
	start    time.Time
	shown    time.Time
}

func (p *progressLine) Printing(rec *results.Record) {
	if p.terminal && (!rec.Line.Passed || p.asJSON) {
		fmt.Fprint(p.stderr, "\r\033[K") // the line about to be printed replaces it
	}
}

func (p *progressLine) Seeds(done, size, failed int) {
	if p.terminal && (time.Since(p.shown) > 100*time.Millisecond || done == size) {
		p.shown = time.Now()
		el := time.Since(p.start).Seconds()
		fmt.Fprintf(p.stderr, "\r\033[K%d/%d seeds, %.0f seeds/s, %d failed", done, size, float64(done)/el, failed)
	}
	p.logp.seeds(done, size, failed)
}

func (p *progressLine) End() {
	p.logp.end()
	if p.terminal {
		fmt.Fprint(p.stderr, "\r\033[K")
	}
}
