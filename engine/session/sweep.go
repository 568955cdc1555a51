package session

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/results"
)

// SweepArgs say what a sweep of seeds is to run, print and keep: run's
// flags, or seedfall_run's arguments.
type SweepArgs struct {
	List            engine.Seeds
	Shard           results.Shard // the part of List to run; the zero Shard is all of it
	Parallel        int
	JSON            bool
	Pinned          bool // replay the pinned regressions first (in shard 1 only)
	RequireCoverage bool
	Report          string            // -report
	Out, JUnit      string            // -out, -junit
	Baseline        *results.Baseline // -baseline, loaded; nil without
	RunOptions      func(seed uint64) (engine.RunOptions, error)
	// Each, if set, hears every seed of the list as it is printed, with
	// the number of seeds done so far: seedfall_run's structured result
	// and progress.
	Each func(rec *results.Record, res *engine.Result, done int)
	// Progress, if set, starts a skin's progress line once the seeds of a
	// sweep of size seeds begin to run (after the pinned regressions).
	Progress func(size int) Progress
}

// Progress is a skin's progress line over a sweep's seeds.
type Progress interface {
	// Printing is called before a seed's result is printed.
	Printing(rec *results.Record)
	// Seeds is called after it: done of size seeds are done, failed of
	// them failed.
	Seeds(done, size, failed int)
	// End is called when the runs end, before the summary.
	End()
}

// DetailedFailures is how many failing seeds of a sweep get their last
// lines and replay command printed.
const DetailedFailures = 5

// Sweep runs a sweep in s and prints it to stdout, notes to stderr, with
// the coverage, triage, report, JUnit file and results directory that a
// asks for. run and seedfall_run both use it, so both print and keep the
// same. It returns what it printed and kept, once the sweep began, and
// ErrFailed when the sweep fails.
func (s *Session) Sweep(ctx context.Context, a SweepArgs, stdout, stderr io.Writer) (*SweepOutput, error) {
	sh, list := a.Shard, a.List
	size := sh.Count(list.Len()) // the seeds this sweep runs
	if !sh.Whole() {
		from := ""
		if sh.From != "" {
			from = " (" + sh.From + ")"
		}
		fmt.Fprintf(stderr, "seedfall: shard %d of %d%s: %d of the %s of -seeds %s\n", sh.K, sh.N, from, size, Plural(list.Len(), "seed"), list)
	}
	pinned := a.Pinned && sh.K <= 1 // the pinned regressions run in shard 1 only
	id, build, err := results.Identity(s.w, s.p, s.args)
	if err != nil {
		return nil, err
	}
	o := NewSweepOutput(stdout, stderr, a.JSON, size, a.RequireCoverage, s.SweepReport(a.Report), id, a.JUnit)
	o.Baseline, o.Findings = a.Baseline, a.Baseline.Findings()
	if a.Out != "" {
		dir := a.Out
		meta := &results.Meta{Seedfall: Version(), World: id, Build: build, Seeds: list.String(), Total: list.Len(),
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
		if _, err = s.RunPinned(ctx, stdout, a.JSON, o.Pinned); err != nil {
			if Interrupted(ctx) {
				fmt.Fprintf(stderr, "%s (while replaying the pinned regressions)\n", InterruptedLine(0, size))
				return nil, ErrInterrupted
			}
			return nil, err
		}
	}

	start := time.Now()
	// Print in seed order, whatever order the workers finish in.
	var progress Progress
	if a.Progress != nil {
		progress = a.Progress(size)
	}
	// The coverage of the user's code over the seeds (a union: the order
	// does not matter, and the seeds come in order anyway).
	var code *cover.Run
	ran, runErr := s.SweepSeq(ctx, sh.Seeds(list), a.Parallel, a.RunOptions, func(res *engine.Result) {
		if res.Coverage != nil {
			code = cover.MergeRun(code, res.Coverage)
		}
		schedule, replay, history := "", s.ReplayCommand(res.Seed), ""
		if !res.Passed {
			schedule, replay, history = s.KeepFailure(res)
		}
		rec := results.NewRecord(res, schedule, Version())
		rec.Replay, rec.History = replay, history
		if !res.Passed && o.Out != nil {
			sch := *res.Schedule
			sch.Config = s.ConfigName()
			rec.ScheduleJSON, _ = sch.MarshalJSON()
			if res.History != nil && len(res.History.HTML) > 0 {
				rec.HistoryHTML = res.History.HTML
			}
		}
		if progress != nil {
			progress.Printing(rec)
		}
		o.Add(rec)
		done := o.Passed + o.Failed
		if a.Each != nil {
			a.Each(rec, res, done)
		}
		if progress != nil {
			progress.Seeds(done, size, o.Failed)
		}
	})
	if progress != nil {
		progress.End()
	}
	if runErr != nil {
		o.Out.Finish(nil)
		return o, runErr
	}
	if code != nil {
		o.Code, o.CodePath, o.CodeShow = code.Profile(), CoveragePath(s.w), s.CoverCommand()
	}
	return o, o.End(time.Since(start), Interrupted(ctx) && ran < size, ran, size)
}

// SweepSeeds runs the seeds, parallel at a time, and hands each finished
// run to each in seed order (engine.Prepared.Sweep). opts, if not nil,
// says how to run a seed.
func (s *Session) SweepSeeds(ctx context.Context, seeds engine.Seeds, parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	return s.SweepSeq(ctx, seeds.All(), parallel, opts, each)
}

// SweepSeq is SweepSeeds over the seeds seeds yields: a shard's, say.
func (s *Session) SweepSeq(ctx context.Context, seeds iter.Seq[uint64], parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	return s.p.Sweep(ctx, seeds, parallel, opts, func(res *engine.Result) bool { each(res); return true })
}

// SweepOutput prints a sweep as its seeds come, in the order of the list,
// and adds each to the HTML report and to what results.Sweep keeps (the
// coverage, the JUnit file, the triage and the results directory that
// were asked for). run feeds it the runs as they finish; merge feeds it
// the records that results directories keep: so both print the same.
type SweepOutput struct {
	results.Sweep
	stdout, stderr io.Writer
	asJSON         bool
	size           int // seeds in the sweep: a sweep of one prints its PASS line, of more a summary
	failedSeeds    results.Tally
	// atHorizon counts the seeds that passed only by reaching the horizon
	// while a workload still ran: their check never ran.
	atHorizon int
	rep       *SweepReport
	// CodePath is where the code coverage (Sweep.Code) is written without
	// a results directory, and CodeShow the command that shows it there.
	CodePath, CodeShow string
	// Triaged is the triage against the baseline, once End made it.
	Triaged *results.Triage
}

// NewSweepOutput prepares a sweep's output; what a caller asks for past
// the printing and the JUnit file is added by it (Out, Baseline).
func NewSweepOutput(stdout, stderr io.Writer, asJSON bool, size int, requireCoverage bool, rep *SweepReport, world results.WorldIdentity, junit string) *SweepOutput {
	o := &SweepOutput{stdout: stdout, stderr: stderr, asJSON: asJSON, size: size, rep: rep}
	o.Coverage = results.NewCoverage(requireCoverage)
	if junit != "" {
		o.JUnit, o.JUnitPath = results.NewJUnit(world.Name), junit
	}
	return o
}

// Add prints one seed and adds it to everything asked for.
func (o *SweepOutput) Add(rec *results.Record) {
	o.Sweep.Seed(rec)
	res := &rec.Line
	if !res.Passed {
		o.failedSeeds.Add(res.Seed)
	}
	if res.Passed && res.Reason == engine.ReasonHorizon {
		o.atHorizon++
	}
	o.rep.Add(rec, rec.Replay)
	switch {
	case o.asJSON:
		fmt.Fprintf(o.stdout, "%s\n", rec.Raw)
	case res.Passed && o.size == 1:
		WriteRecord(o.stdout, rec, "", "")
	case !res.Passed && o.Failed <= DetailedFailures:
		WriteRecord(o.stdout, rec, rec.Replay, rec.History)
	case !res.Passed:
		// Past the first few, one line each keeps a long sweep readable.
		fmt.Fprintf(o.stdout, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, SimTime(res.SimNs), res.Class, res.Reason)
	}
}

// End prints the summary, the coverage and the triage, and writes the
// report, the JUnit file and the results directory's last files. elapsed
// is the sweep's real time; stopped says Ctrl-C cut it short after ran of
// of its seeds. It returns ErrFailed when the sweep fails, as run's exit
// status says: a seed or a pinned regression failed, or -require-coverage
// is unmet; with -baseline, a new or regressed finding instead of a failed
// seed.
func (o *SweepOutput) End(elapsed time.Duration, stopped bool, ran, of int) error {
	if !o.asJSON && o.size > 1 {
		fmt.Fprintf(o.stdout, "%d seeds: %d passed, %d failed%s in %s (%.0f seeds/s)\n",
			ran, o.Passed, o.Failed, &o.failedSeeds, elapsed.Round(time.Millisecond), float64(ran)/elapsed.Seconds())
	}
	if !o.asJSON && o.atHorizon > 0 && o.atHorizon == o.Passed {
		// Every pass is a run whose workload never finished: a newcomer's
		// workload that never exits passes without checking anything.
		fmt.Fprintf(o.stderr, "note: %s passed only by reaching the world's duration while a workload still ran: the workload never reached its check (exit 0 when it is done; a workload that is meant to run forever is fine)\n",
			Plural(o.atHorizon, "seed"))
	}
	unmet := o.Coverage.Write(o.stdout, o.stderr, o.asJSON)
	tri := o.Triage()
	o.Triaged = tri
	if tri != nil {
		tri.Write(o.stdout, o.asJSON)
	}
	writeErr := o.Sweep.Finish(tri, elapsed, ran, !stopped && ran == of)
	if writeErr == nil {
		writeErr = o.noteCode()
	}
	if err := o.rep.Finish(o.stderr, o.stderr, stopped, ran, of); err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	if o.Failing(tri, unmet) {
		return ErrFailed
	}
	return nil
}

// noteCode writes the code coverage where a sweep without a results
// directory keeps it, and says where it is (the results directory's
// Finish wrote it there).
func (o *SweepOutput) noteCode() error {
	if o.Code == nil {
		return nil
	}
	path, show := o.CodePath, o.CodeShow
	if o.Out != nil {
		path = o.Out.Path(results.ProfileFile)
		show = "seedfall cover " + ShellQuote(DisplayPath(filepath.Dir(path)))
	} else if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFile(path, o.Code.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if path != "" {
		NoteCoverage(o.stderr, o.Code, path, show)
	}
	return nil
}

// InterruptedLine says how much of a sweep ran before Ctrl-C stopped it.
func InterruptedLine(ran, of int) string {
	return fmt.Sprintf("interrupted: %d of %s ran", ran, Plural(of, "seed"))
}

// MaxParallel bounds how many worlds a sweep runs at once: each world in
// flight holds its programs' memories, so thousands at once only exhaust
// the host (issue 12).
const MaxParallel = 256

// DefaultParallel is one world per core, within MaxParallel.
func DefaultParallel() int { return min(runtime.NumCPU(), MaxParallel) }
