package session

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/results/report"
)

// SweepReport gathers a sweep's results for the HTML report, in memory
// that grows with its failures, not its seeds: a passing seed is counted,
// and its seed joins the ranges of seeds that ran. A nil *SweepReport (no
// -report flag) ignores everything.
type SweepReport struct {
	path   string
	rep    report.Report
	nodes  []string
	sum    report.Summary
	ranges []seedSpan // the seeds that ran, in order
	failed results.Tally
	cov    *results.Coverage // the sim properties over every seed, as run's table
}

// results.KeptLines is as many failing seeds as the page draws in
// detail: this does not compile when the two differ.
const _ = uint(results.KeptLines-report.MaxDetailed) + uint(report.MaxDetailed-results.KeptLines)

// seedSpan is the seeds a to b.
type seedSpan struct{ a, b uint64 }

// SweepReport returns nil when path is "".
func (s *Session) SweepReport(path string) *SweepReport {
	var nodes []string
	for _, p := range s.w.Programs() {
		nodes = append(nodes, p.Name)
	}
	return NewSweepReport(path, s.ConfigName(), s.args, Version(), nodes)
}

// NewSweepReport is SweepReport for the world named name (configName),
// given by args, with these programs, run by that version of seedfall.
func NewSweepReport(path, name, args, version string, nodes []string) *SweepReport {
	if path == "" {
		return nil
	}
	r := &SweepReport{path: path, rep: report.Report{Title: "seedfall report: " + name, Config: args, Version: version}, nodes: nodes}
	r.rep.Summary = &r.sum
	r.sum.Classes = map[string]int{}
	r.cov = results.NewCoverage(false)
	return r
}

// Add counts one seed's outcome; only the failures the page details keep
// their trace, and only the first report.MaxListed failures are listed.
func (r *SweepReport) Add(rec *results.Record, replay string) {
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
	r.failed.Add(res.Seed)
	r.sum.Classes[res.Class]++
	if r.failed.N() > report.MaxListed {
		return
	}
	run := report.Run{Seed: res.Seed, Class: res.Class, Reason: res.Reason, Node: res.Node, SimNs: res.SimNs, Replay: replay}
	if r.failed.N() <= report.MaxDetailed {
		run.Lines, run.Heals, run.Schedule, run.Nodes = rec.Lines, rec.Heals, rec.Schedule, r.nodes
		if rec.CauseLine() >= 0 {
			run.Excerpt = rec.FailureLines(40)
		}
	}
	r.rep.Runs = append(r.rep.Runs, run)
}

// Finish writes the page, saying where to w; when Ctrl-C stopped the
// sweep after ran of its seeds, the page notes it, stderr hears it and
// Finish returns ErrInterrupted. A nil report writes no page.
func (r *SweepReport) Finish(w, stderr io.Writer, stopped bool, ran, of int) error {
	if stopped {
		r.interrupted(ran, of)
	}
	if err := r.write(w); err != nil {
		return err
	}
	if stopped {
		fmt.Fprintln(stderr, InterruptedLine(ran, of))
		return ErrInterrupted
	}
	return nil
}

// interrupted notes on the page that Ctrl-C stopped the sweep.
func (r *SweepReport) interrupted(ran, of int) {
	if r != nil {
		r.rep.Note = InterruptedLine(ran, of)
	}
}

// write writes the page and says where, with the sweep's counts.
func (r *SweepReport) write(w io.Writer) error {
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
	fmt.Fprintf(w, "report %s: %s, %d passed, %d failed%s\n", DisplayPath(r.path),
		Plural(r.sum.Total, "seed"), r.sum.Passed, r.failed.N(), &r.failed)
	return nil
}

// ReportOptions say which seeds the HTML report of the report command
// shows, and where it goes.
type ReportOptions struct {
	List     engine.Seeds
	Faults   string // the schedule to apply to the one seed of List; "": each seed's saved one, if any
	Path     string // the page; "": report.html in the world's artifact directory
	Parallel int
}

// Report runs the seeds of o.List, each as replay runs it, and writes the
// HTML report of them, saying where to stdout; when Ctrl-C stopped it,
// the page notes it, stderr hears it and Report returns ErrInterrupted.
func (s *Session) Report(ctx context.Context, o ReportOptions, stdout, stderr io.Writer) error {
	path := o.Path
	if path == "" {
		path = filepath.Join(engine.ArtifactDir(s.w), "report.html")
	}
	rep := s.SweepReport(path)
	// Each seed runs as replay runs it: with its saved schedule (a shrunk
	// or edited one, say) when there is one, so the page shows what its
	// replay command shows.
	replayFaults := ""
	if o.Faults != "" { // with -seed
		_, from, err := s.LoadSchedule(o.Faults, o.List.At(0))
		if err != nil {
			return err
		}
		replayFaults = " -faults " + ShellQuote(from)
	}
	ran, err := s.SweepSeeds(ctx, o.List, o.Parallel, func(seed uint64) (engine.RunOptions, error) {
		sch, _, err := s.LoadSchedule(o.Faults, seed)
		return engine.RunOptions{Seed: seed, Schedule: sch}, err
	}, func(res *engine.Result) {
		rep.Add(results.NewRecord(res, "", ""), s.ReplayCommand(res.Seed)+replayFaults)
	})
	if err != nil {
		return err
	}
	return rep.Finish(stdout, stderr, Interrupted(ctx) && ran < o.List.Len(), ran, o.List.Len())
}
