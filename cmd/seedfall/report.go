package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/seedfall/seedfall/cmd/seedfall/internal/report"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
)

func init() {
	register(command{"report", "-c seedfall.json -seeds 1-20 [-seed N [-faults FILE]] [-o report.html]", reportCmd})
}

func reportCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("report", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "report one seed")
	seeds := fs.String("seeds", "", "report many seeds: 1-20, or lists like 2-3,9")
	faultsFile := fs.String("faults", "", "with -seed: the schedule to apply (default: .seedfall/seed-N.faults.json next to the config, if it exists)")
	out := fs.String("o", "", "write the page here (default: .seedfall/report.html next to the config)")
	parallel := fs.Int("parallel", defaultParallel(), "worlds run at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	var list []uint64
	switch {
	case *seeds != "" && flagSet(fs, "seed"):
		return fmt.Errorf("give -seed N or -seeds 1-20, not both")
	case *seeds != "" && *faultsFile != "":
		return fmt.Errorf("-faults replays one seed: use it with -seed N, not -seeds")
	case *seeds != "":
		var err error
		if list, err = parseSeeds(*seeds); err != nil {
			return err
		}
	case flagSet(fs, "seed"):
		list = []uint64{*seed}
	default:
		return fmt.Errorf("say which seeds to report: -seeds 1-20, or -seed N")
	}
	ctx := context.Background()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()

	// Each seed runs as replay runs it: with its saved schedule (a shrunk
	// or edited one, say) when there is one, so the page shows what its
	// replay command shows.
	schedules := make([]*faults.Schedule, len(list))
	replays := make([]string, len(list))
	for i, seed := range list {
		sch, from, err := s.loadSchedule(*faultsFile, seed)
		if err != nil {
			return err
		}
		schedules[i], replays[i] = sch, s.replayCommand(seed)
		if *faultsFile != "" {
			replays[i] += " -faults " + shellQuote(from)
		}
	}
	results := make([]*engine.Result, len(list))
	errs := make([]error, len(list))
	next := make(chan int)
	var wg sync.WaitGroup
	for k := 0; k < max(*parallel, 1) && k < len(list); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				res, err := s.p.Run(ctx, engine.RunOptions{Seed: list[i], Schedule: schedules[i]})
				if err == nil && res.Passed {
					res.Lines = nil // a passing seed is one row of the summary
				}
				results[i], errs[i] = res, err
			}
		}()
	}
	for i := range list {
		next <- i
	}
	close(next)
	wg.Wait()

	path := *out
	if path == "" {
		path = filepath.Join(artifactDir(s.w), "report.html")
	}
	rep := newSweepReport(s, path)
	for i, res := range results {
		if errs[i] != nil {
			return fmt.Errorf("seed %d: %w", list[i], errs[i])
		}
		rep.add(res, replays[i])
	}
	return rep.write(stdout)
}

// sweepReport gathers a sweep's results for the HTML report. A nil
// *sweepReport (no -report flag) ignores everything.
type sweepReport struct {
	path   string
	rep    report.Report
	nodes  []string
	failed int
	cov    coverage // the sim properties over every seed, as run's table
}

// newSweepReport returns nil when path is "".
func newSweepReport(s *session, path string) *sweepReport {
	if path == "" {
		return nil
	}
	r := &sweepReport{path: path, rep: report.Report{Title: "seedfall report: " + s.configName(), Config: s.args},
		cov: coverage{require: new(bool), index: map[[2]string]*covProp{}}}
	for _, p := range s.w.Programs() {
		r.nodes = append(r.nodes, p.Name)
	}
	return r
}

// add keeps one seed's outcome; only the failures the page details keep
// their trace.
func (r *sweepReport) add(res *engine.Result, replay string) {
	if r == nil {
		return
	}
	r.cov.add(res)
	if res.Passed {
		r.rep.Runs = append(r.rep.Runs, report.Run{Seed: res.Seed, Passed: true})
		return
	}
	run := report.Run{Seed: res.Seed, Class: res.Class, Reason: res.Reason, Node: res.Node, SimNs: res.SimNs, Replay: replay}
	if r.failed < report.MaxDetailed {
		run.Lines, run.Schedule, run.Nodes = res.Lines, res.Schedule, r.nodes
		if res.CauseLine() >= 0 {
			run.Excerpt = failureLines(res, 40)
		}
	}
	r.failed++
	r.rep.Runs = append(r.rep.Runs, run)
}

// write writes the page and says where, with the sweep's counts.
func (r *sweepReport) write(w io.Writer) error {
	if r == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	whys, _ := r.cov.settle()
	r.rep.Properties = nil
	for i, p := range r.cov.props {
		r.rep.Properties = append(r.rep.Properties, report.Property{Kind: p.Kind, Message: p.Message, Site: p.Site,
			Status: p.Status, Why: whys[i], Hits: p.Hits})
	}
	var page bytes.Buffer
	if err := report.Write(&page, r.rep); err != nil {
		return fmt.Errorf("report %s: %w", r.path, err)
	}
	if err := fsutil.WriteFile(r.path, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var failed []uint64
	for _, run := range r.rep.Runs {
		if !run.Passed {
			failed = append(failed, run.Seed)
		}
	}
	fmt.Fprintf(w, "report %s: %s, %d passed, %d failed%s\n", displayPath(r.path),
		plural(len(r.rep.Runs), "seed"), len(r.rep.Runs)-len(failed), len(failed), seedList(failed))
	return nil
}
