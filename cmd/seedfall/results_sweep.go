package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/seedfall/seedfall/engine/results"
)

// resultsArgs are the flags with which run and merge keep a sweep:
// -out, -junit and -baseline.
type resultsArgs struct {
	out, junit, baseline *string
}

func resultsFlags(fs *flag.FlagSet, outUsage string) *resultsArgs {
	return &resultsArgs{
		out:      fs.String("out", "", outUsage),
		junit:    fs.String("junit", "", "write the seeds as JUnit XML to this `file`, one testcase per seed, for CI"),
		baseline: fs.String("baseline", "", "triage the failures against earlier results (a results `dir` of -out, or a parent of shard dirs): each finding new, ongoing, resolved or regressed; the exit status is 1 only for a new or regressed one"),
	}
}

// coverageFlags is -require-coverage (results.Coverage).
func coverageFlags(fs *flag.FlagSet) *bool {
	return fs.Bool("require-coverage", false, "fail the sweep when a Sometimes never held, or a Reachable or Always was never reached")
}

// sweepOutput prints a sweep as its seeds come, in the order of the list,
// and adds each to the HTML report and to what results.Sweep keeps (the
// coverage, the JUnit file, the triage and the results directory that
// were asked for). run feeds it the runs as they finish; merge feeds it
// the records that results directories keep: so both print the same.
type sweepOutput struct {
	results.Sweep
	stdout, stderr io.Writer
	asJSON         bool
	size           int // seeds in the sweep: a sweep of one prints its PASS line, of more a summary
	failedSeeds    seedTally
	rep            *sweepReport
	tri            *results.Triage // with a baseline, once finish made it
}

// newSweepOutput prepares a sweep's output; what ra asks for, past the
// printing and the JUnit file, is added by the caller (Out, Baseline).
func newSweepOutput(stdout, stderr io.Writer, asJSON bool, size int, requireCoverage bool, rep *sweepReport, world results.WorldIdentity, junit string) *sweepOutput {
	o := &sweepOutput{stdout: stdout, stderr: stderr, asJSON: asJSON, size: size, rep: rep}
	o.Coverage = results.NewCoverage(requireCoverage)
	if junit != "" {
		o.JUnit, o.JUnitPath = results.NewJUnit(world.Name), junit
	}
	return o
}

// seed prints one seed and adds it to everything asked for.
func (o *sweepOutput) seed(rec *results.Record) {
	o.Sweep.Seed(rec)
	res := &rec.Line
	if !res.Passed {
		o.failedSeeds.add(res.Seed)
	}
	o.rep.add(rec, rec.Replay)
	switch {
	case o.asJSON:
		fmt.Fprintf(o.stdout, "%s\n", rec.Raw)
	case res.Passed && o.size == 1:
		printVerdictWith(o.stdout, rec, "", "")
	case !res.Passed && o.Failed <= detailedFailures:
		printVerdictWith(o.stdout, rec, rec.Replay, rec.History)
	case !res.Passed:
		// Past the first few, one line each keeps a long sweep readable.
		fmt.Fprintf(o.stdout, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, simTime(res.SimNs), res.Class, res.Reason)
	}
}

// finish prints the summary, the coverage and the triage, and writes the
// report, the JUnit file and the results directory's last files. elapsed
// is the sweep's real time; stopped says Ctrl-C cut it short after ran of
// of its seeds. It returns errFailed when the sweep fails, as run's exit
// status says: a seed or a pinned regression failed, or -require-coverage
// is unmet; with -baseline, a new or regressed finding instead of a failed
// seed.
func (o *sweepOutput) finish(elapsed time.Duration, stopped bool, ran, of int) error {
	if !o.asJSON && o.size > 1 {
		fmt.Fprintf(o.stdout, "%d seeds: %d passed, %d failed%s in %s (%.0f seeds/s)\n",
			ran, o.Passed, o.Failed, &o.failedSeeds, elapsed.Round(time.Millisecond), float64(ran)/elapsed.Seconds())
	}
	unmet := o.Coverage.Write(o.stdout, o.stderr, o.asJSON)
	tri := o.Triage()
	o.tri = tri
	if tri != nil {
		tri.Write(o.stdout, o.asJSON)
	}
	writeErr := o.Sweep.Finish(tri, elapsed, ran, !stopped && ran == of)
	if err := o.rep.finish(o.stderr, o.stderr, stopped, ran, of); err != nil {
		return err
	}
	if writeErr != nil {
		return writeErr
	}
	if o.Failing(tri, unmet) {
		return errFailed
	}
	return nil
}
