package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/results/report"
	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/results"
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
	var list engine.Seeds
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
		list = engine.OneSeed(*seed)
	default:
		return fmt.Errorf("say which seeds to report: -seeds 1-20, or -seed N")
	}
	ctx, stop := onInterrupt(context.Background(), stderr)
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	defer s.close()

	path := *out
	if path == "" {
		path = filepath.Join(artifactDir(s.w), "report.html")
	}
	rep := newSweepReport(s, path)
	// Each seed runs as replay runs it: with its saved schedule (a shrunk
	// or edited one, say) when there is one, so the page shows what its
	// replay command shows.
	replayFaults := ""
	if *faultsFile != "" { // with -seed
		_, from, err := s.loadSchedule(*faultsFile, *seed)
		if err != nil {
			return err
		}
		replayFaults = " -faults " + shellQuote(from)
	}
	ran, err := s.sweep(ctx, list, *parallel, func(seed uint64) (engine.RunOptions, error) {
		sch, _, err := s.loadSchedule(*faultsFile, seed)
		return engine.RunOptions{Seed: seed, Schedule: sch}, err
	}, func(res *engine.Result) {
		rep.add(results.NewRecord(res, "", ""), s.replayCommand(res.Seed)+replayFaults)
	})
	if err != nil {
		return err
	}
	return rep.finish(stdout, stderr, interrupted(ctx) && ran < list.Len(), ran, list.Len())
}

// sweepReport gathers a sweep's results for the HTML report, in memory
// that grows with its failures, not its seeds: a passing seed is counted,
// and its seed joins the ranges of seeds that ran. A nil *sweepReport (no
// -report flag) ignores everything.
type sweepReport struct {
	path   string
	rep    report.Report
	nodes  []string
	sum    report.Summary
	ranges []seedSpan // the seeds that ran, in order
	failed seedTally
	cov    *results.Coverage // the sim properties over every seed, as run's table
}

// results.KeptLines is as many failing seeds as the page draws in
// detail: this does not compile when the two differ.
const _ = uint(results.KeptLines-report.MaxDetailed) + uint(report.MaxDetailed-results.KeptLines)

// seedSpan is the seeds a to b.
type seedSpan struct{ a, b uint64 }

// newSweepReport returns nil when path is "".
func newSweepReport(s *session, path string) *sweepReport {
	var nodes []string
	for _, p := range s.w.Programs() {
		nodes = append(nodes, p.Name)
	}
	return newSweepReportOf(path, s.configName(), s.args, seedfallVersion(), nodes)
}

// newSweepReportOf is newSweepReport for the world named name (configName),
// given by args, with these programs, run by that version of seedfall.
func newSweepReportOf(path, name, args, version string, nodes []string) *sweepReport {
	if path == "" {
		return nil
	}
	r := &sweepReport{path: path, rep: report.Report{Title: "seedfall report: " + name, Config: args, Version: version}, nodes: nodes}
	r.rep.Summary = &r.sum
	r.sum.Classes = map[string]int{}
	r.cov = results.NewCoverage(false)
	return r
}

// add counts one seed's outcome; only the failures the page details keep
// their trace, and only the first report.MaxListed failures are listed.
func (r *sweepReport) add(rec *results.Record, replay string) {
	if r == nil {
		return
	}
	res := &rec.Line
	if n := len(r.ranges); n > 0 && r.ranges[n-1].b+1 == res.Seed && res.Seed != 0 {
		r.ranges[n-1].b = res.Seed
	} else {
		r.ranges = append(r.ranges, seedSpan{res.Seed, res.Seed})
	}
	r.sum.Total++
	r.cov.Add(res.Properties)
	if res.Passed {
		r.sum.Passed++
		return
	}
	r.failed.add(res.Seed)
	r.sum.Classes[res.Class]++
	if r.failed.n > report.MaxListed {
		return
	}
	run := report.Run{Seed: res.Seed, Class: res.Class, Reason: res.Reason, Node: res.Node, SimNs: res.SimNs, Replay: replay}
	if r.failed.n <= report.MaxDetailed {
		run.Lines, run.Heals, run.Schedule, run.Nodes = rec.Lines, rec.Heals, rec.Schedule, r.nodes
		if rec.CauseLine() >= 0 {
			run.Excerpt = rec.FailureLines(40)
		}
	}
	r.rep.Runs = append(r.rep.Runs, run)
}

// finish writes the page, saying where to w; when Ctrl-C stopped the
// sweep after ran of its seeds, the page notes it, stderr hears it and
// finish returns errInterrupted. A nil report writes no page.
func (r *sweepReport) finish(w, stderr io.Writer, stopped bool, ran, of int) error {
	if stopped {
		r.interrupted(ran, of)
	}
	if err := r.write(w); err != nil {
		return err
	}
	if stopped {
		fmt.Fprintln(stderr, interruptedLine(ran, of))
		return errInterrupted
	}
	return nil
}

// interrupted notes on the page that Ctrl-C stopped the sweep.
func (r *sweepReport) interrupted(ran, of int) {
	if r != nil {
		r.rep.Note = interruptedLine(ran, of)
	}
}

// write writes the page and says where, with the sweep's counts.
func (r *sweepReport) write(w io.Writer) error {
	if r == nil {
		return nil
	}
	var seeds []string
	for _, sp := range r.ranges {
		if sp.a == sp.b {
			seeds = append(seeds, fmt.Sprint(sp.a))
		} else {
			seeds = append(seeds, fmt.Sprintf("%d-%d", sp.a, sp.b))
		}
	}
	r.sum.Seeds = strings.Join(seeds, ", ")
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	whys, _ := r.cov.Settle()
	r.rep.Properties = nil
	for i, p := range r.cov.Props() {
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
	fmt.Fprintf(w, "report %s: %s, %d passed, %d failed%s\n", displayPath(r.path),
		plural(r.sum.Total, "seed"), r.sum.Passed, r.failed.n, &r.failed)
	return nil
}
