package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/seedfall/seedfall/engine"
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
	cov := coverageFlags(fs) // coverage.go
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
	// One world is one goroutine group passing a baton: with idle Ps around,
	// every handoff wakes another OS thread for nothing. Keep one P per
	// world. (A spinning guest still lets the watchdog run: its loop budget
	// brings it back into Go code, where it can be preempted, every
	// millisecond or so.)
	if *parallel < runtime.NumCPU() {
		runtime.GOMAXPROCS(*parallel)
	}
	// Ctrl-C stops the runs in flight; what finished is printed, and
	// written to -report, as a whole sweep's would be.
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.close()
	rep := newSweepReport(s, *reportPath)
	pinnedFailing := 0
	if *withPinned {
		if pinnedFailing, err = s.runPinned(ctx, stdout, *asJSON); err != nil {
			if interrupted(ctx) {
				fmt.Fprintf(stderr, "%s (while replaying the pinned regressions)\n", interruptedLine(0, list.Len()))
				return errInterrupted
			}
			return err
		}
	}

	start := time.Now()
	// Print in seed order, whatever order the workers finish in.
	progress := isTerminal(stderr) && !*asJSON && list.Len() > 1
	passed, failed := 0, 0
	var shown time.Time
	var failedSeeds seedTally
	var logp *logProgress
	if list.Len() > 1 {
		logp = startLogProgress(stderr) // logprogress.go: when stderr is not a terminal
	}
	ran, runErr := s.sweep(ctx, list, *parallel, gprof.runOptions(), func(res *engine.Result) {
		defer func() { logp.seeds(passed+failed, list.Len(), failed) }()
		cov.add(res)
		schedule, replay := "", s.replayCommand(res.Seed)
		if res.Passed {
			passed++
		} else {
			failed++
			failedSeeds.add(res.Seed)
			if path, err := s.saveSchedule(res); err != nil {
				fmt.Fprintf(stderr, "seedfall: could not save the schedule of seed %d: %v\n", res.Seed, err)
			} else {
				schedule, replay = displayPath(path), s.replayWith(res.Seed, path)
			}
		}
		rep.add(res, replay)
		if progress && (!res.Passed || *asJSON) {
			fmt.Fprint(stderr, "\r\033[K") // the line about to be printed replaces it
		}
		switch {
		case *asJSON:
			writeJSON(stdout, res, schedule)
		case res.Passed && list.Len() == 1:
			s.printVerdict(stdout, res, "")
		case !res.Passed && failed <= detailedFailures:
			s.printVerdict(stdout, res, replay)
		case !res.Passed:
			// Past the first few, one line each keeps a long sweep readable.
			fmt.Fprintf(stdout, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, simTime(res.SimNs), res.Class, res.Reason)
		}
		if done := passed + failed; progress && (time.Since(shown) > 100*time.Millisecond || done == list.Len()) {
			shown = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(stderr, "\r\033[K%d/%d seeds, %.0f seeds/s, %d failed", done, list.Len(), float64(done)/el, failed)
		}
	})
	logp.end()
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if runErr != nil {
		return runErr
	}
	stopped := interrupted(ctx) && ran < list.Len()
	if !*asJSON && list.Len() > 1 {
		el := time.Since(start)
		fmt.Fprintf(stdout, "%d seeds: %d passed, %d failed%s in %s (%.0f seeds/s)\n",
			ran, passed, failed, &failedSeeds, el.Round(time.Millisecond), float64(ran)/el.Seconds())
	}
	unmet := cov.write(stdout, stderr, *asJSON)
	if err := rep.finish(stderr, stderr, stopped, ran, list.Len()); err != nil {
		return err
	}
	if failed > 0 || pinnedFailing > 0 || unmet {
		return errFailed
	}
	return nil
}

// detailedFailures is how many failing seeds of a sweep get their last
// lines and replay command printed.
const detailedFailures = 5
