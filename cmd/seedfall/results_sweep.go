package main

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/seedfall/seedfall/engine"
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

// seedOutcome is one seed's run as a sweep prints and keeps it.
type seedOutcome struct {
	res      *engine.Result
	line     []byte // its run -json object
	schedule string // the saved schedule, as -json names it
	replay   string // the command that replays it, as printed
	history  string // the page of a history that is not linearizable, when one was named
	// scheduleJSON and historyHTML are the files a results directory
	// keeps of a failing seed, when there are.
	scheduleJSON, historyHTML []byte
}

// sweepOutput prints a sweep as its seeds come, in the order of the list,
// and adds each to the coverage, the HTML report, the JUnit file, the
// triage and the results directory that were asked for. run feeds it the
// runs as they finish; merge feeds it the runs that results directories
// keep: so both print the same.
type sweepOutput struct {
	stdout, stderr io.Writer
	asJSON         bool
	size           int // seeds in the sweep: a sweep of one prints its PASS line, of more a summary
	passed, failed int
	failedSeeds    seedTally
	wallNs         int64 // the runs' real time, summed
	pinnedFailing  int
	cov            *coverage
	rep            *sweepReport
	junit          *junitSuite // nil without -junit
	junitPath      string
	base           *baseline   // nil without -baseline
	findings       *findingSet // the failures' signatures, with -baseline
	out            *resultsWriter
}

// newSweepOutput prepares a sweep's output; what ra asks for, past the
// printing, is added by the caller (out, base).
func newSweepOutput(stdout, stderr io.Writer, asJSON bool, size int, cov *coverage, rep *sweepReport, world worldIdentity, ra *resultsArgs) *sweepOutput {
	o := &sweepOutput{stdout: stdout, stderr: stderr, asJSON: asJSON, size: size, cov: cov, rep: rep}
	if *ra.junit != "" {
		o.junit, o.junitPath = &junitSuite{name: world.Name}, *ra.junit
	}
	return o
}

// seed prints one seed and adds it to everything asked for.
func (o *sweepOutput) seed(oc *seedOutcome) {
	res := oc.res
	o.cov.add(res)
	o.wallNs += res.WallNs
	if res.Passed {
		o.passed++
	} else {
		o.failed++
		o.failedSeeds.add(res.Seed)
	}
	o.rep.add(res, oc.replay)
	switch {
	case o.asJSON:
		fmt.Fprintf(o.stdout, "%s\n", oc.line)
	case res.Passed && o.size == 1:
		printVerdictWith(o.stdout, res, "", "")
	case !res.Passed && o.failed <= detailedFailures:
		printVerdictWith(o.stdout, res, oc.replay, oc.history)
	case !res.Passed:
		// Past the first few, one line each keeps a long sweep readable.
		fmt.Fprintf(o.stdout, "FAIL seed %d at t=%s: %s: %s\n", res.Seed, simTime(res.SimNs), res.Class, res.Reason)
	}
	o.junit.add(fmt.Sprintf("seed=%d", res.Seed), res, oc.replay, oc.schedule)
	if !res.Passed {
		o.findings.add(res.Class, res.Node, res.Reason, res.Seed, false)
	}
	if o.out != nil {
		var fail *failureRecord
		if !res.Passed {
			fail = &failureRecord{Seed: res.Seed, Replay: oc.replay, History: oc.history, Lines: linesRecord(res.Lines)}
		}
		o.out.seed(res.Seed, oc.line, fail, oc.scheduleJSON, oc.historyHTML)
	}
}

// pinnedRun adds a pinned regression's replay, which the caller printed
// (printPinned).
func (o *sweepOutput) pinnedRun(rec pinnedRecord, res *engine.Result) {
	if !res.Passed {
		o.pinnedFailing++
		o.findings.add(res.Class, res.Node, res.Reason, res.Seed, true)
	}
	o.junit.add("pinned="+rec.Name, res, rec.Replay, rec.Path)
	o.out.pinnedRun(rec)
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
			ran, o.passed, o.failed, &o.failedSeeds, elapsed.Round(time.Millisecond), float64(ran)/elapsed.Seconds())
	}
	unmet := o.cov.write(o.stdout, o.stderr, o.asJSON)
	var tri *triage
	if o.base != nil {
		tri = o.base.triage(o.findings)
		tri.write(o.stdout, o.asJSON)
	}
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if o.junit != nil {
		keep(o.junit.write(o.junitPath))
	}
	if o.out != nil {
		o.out.writeJSON(resultsCoverageFile, struct {
			Seeds    int        `json:"seeds"`
			Coverage []*covProp `json:"coverage"`
		}{o.cov.seeds, append([]*covProp{}, o.cov.props...)})
		if tri != nil {
			o.out.writeJSON(resultsTriageFile, tri)
		}
		var mark *completeMark
		if !stopped && ran == of {
			mark = &completeMark{Seeds: ran, Passed: o.passed, Failed: o.failed, PinnedFailing: o.pinnedFailing, WallNs: elapsed.Nanoseconds()}
		}
		keep(o.out.finish(mark))
	}
	if err := o.rep.finish(o.stderr, o.stderr, stopped, ran, of); err != nil {
		return err
	}
	if firstErr != nil {
		return firstErr
	}
	if unmet {
		return errFailed
	}
	if tri != nil {
		if tri.failing() {
			return errFailed
		}
		return nil
	}
	if o.failed > 0 || o.pinnedFailing > 0 {
		return errFailed
	}
	return nil
}
