package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
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
	list := []uint64{*seed}
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
	ctx := context.Background()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	rep := newSweepReport(s, *reportPath)
	pinnedFailing := 0
	if *withPinned {
		if pinnedFailing, err = s.runPinned(ctx, stdout, *asJSON); err != nil {
			return err
		}
	}

	start := time.Now()
	// Print in seed order, whatever order the workers finish in.
	progress := isTerminal(stderr) && !*asJSON && len(list) > 1
	passed, failed := 0, 0
	var shown time.Time
	var failedSeeds []uint64
	var firstErr error
	s.sweep(ctx, list, *parallel, func(i int, res *engine.Result, err error) {
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("seed %d: %w", list[i], err)
			}
			return
		}
		cov.add(res)
		schedule, replay := "", s.replayCommand(res.Seed)
		if res.Passed {
			passed++
		} else {
			failed++
			failedSeeds = append(failedSeeds, res.Seed)
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
		case res.Passed && len(list) == 1:
			s.printVerdict(stdout, res, "")
		case !res.Passed && failed <= detailedFailures:
			s.printVerdict(stdout, res, replay)
		case !res.Passed:
			// Past the first few, one line each keeps a long sweep readable.
			fmt.Fprintf(stdout, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, simTime(res.SimNs), res.Class, res.Reason)
		}
		if progress && (time.Since(shown) > 100*time.Millisecond || i+1 == len(list)) {
			shown = time.Now()
			el := time.Since(start).Seconds()
			fmt.Fprintf(stderr, "\r\033[K%d/%d seeds, %.0f seeds/s, %d failed", i+1, len(list), float64(i+1)/el, failed)
		}
	})
	if progress {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if firstErr != nil {
		return firstErr
	}
	if !*asJSON && len(list) > 1 {
		el := time.Since(start)
		fmt.Fprintf(stdout, "%d seeds: %d passed, %d failed%s in %s (%.0f seeds/s)\n",
			len(list), passed, failed, seedList(failedSeeds), el.Round(time.Millisecond), float64(len(list))/el.Seconds())
	}
	unmet := cov.write(stdout, stderr, *asJSON)
	if err := rep.write(stderr); err != nil {
		return err
	}
	if failed > 0 || pinnedFailing > 0 || unmet {
		return errFailed
	}
	return nil
}

// sweep runs the seeds of list, parallel worlds at once, and hands each
// result to got in seed order, whatever order the runs finish in; got
// runs on the caller's goroutine. Once ctx is done the seeds not yet
// started are not run: their error is ctx's.
func (s *session) sweep(ctx context.Context, list []uint64, parallel int, got func(i int, res *engine.Result, err error)) {
	results := make([]*engine.Result, len(list))
	errs := make([]error, len(list))
	ready := make([]chan struct{}, len(list))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for k := 0; k < parallel && k < len(list); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = context.Cause(ctx); errs[i] == nil {
					results[i], errs[i] = s.p.Run(ctx, engine.RunOptions{Seed: list[i]})
				}
				close(ready[i])
			}
		}()
	}
	go func() {
		for i := range list {
			next <- i
		}
		close(next)
	}()
	for i := range list {
		<-ready[i]
		res := results[i]
		results[i] = nil // let the trace go
		got(i, res, errs[i])
	}
	wg.Wait()
}

// detailedFailures is how many failing seeds of a sweep get their last
// lines and replay command printed.
const detailedFailures = 5

func seedList(seeds []uint64) string {
	if len(seeds) == 0 {
		return ""
	}
	s := " (seeds"
	for i, x := range seeds {
		if i == 10 {
			s += fmt.Sprintf(" and %d more", len(seeds)-10)
			break
		}
		s += fmt.Sprintf(" %d", x)
	}
	return s + ")"
}
