package results

import (
	"strconv"
	"time"

	"github.com/seedfall/seedfall/engine/cover"
)

// Sweep adds up a sweep's records as they come, in the order of its list:
// the counts, and the property coverage, JUnit file, findings and results
// directory that were asked for. run feeds it the runs as they finish;
// merge feeds it the records that results directories keep: so both keep
// the same. Printing is the caller's.
type Sweep struct {
	Passed, Failed int
	PinnedFailing  int   // pinned regressions that failed
	WallNs         int64 // the runs' real time, summed
	Coverage       *Coverage
	JUnit          *JUnit // nil without -junit
	JUnitPath      string
	Baseline       *Baseline // nil without -baseline
	Findings       *Findings // the failures' signatures, with a baseline
	Out            *Writer   // nil without -out
	// Code is the blocks of the user's code the seeds reached, when the
	// world has coverage on (nil when not): coverage.out.
	Code *cover.Profile
}

// Seed adds one seed's record.
func (s *Sweep) Seed(rec *Record) {
	l := &rec.Line
	s.Coverage.Add(l.Properties)
	s.WallNs += l.WallNs
	if l.Passed {
		s.Passed++
	} else {
		s.Failed++
	}
	s.JUnit.Add("seed="+strconv.FormatUint(l.Seed, 10), rec, rec.Replay, l.Schedule)
	if !l.Passed {
		s.Findings.Add(l.Class, l.Node, l.Reason, l.Seed, false)
	}
	if s.Out != nil {
		var fail *FailureRecord
		if !l.Passed {
			fail = &FailureRecord{Seed: l.Seed, Replay: rec.Replay, History: rec.History, Lines: LinesRecord(rec.Lines), Heals: rec.Heals}
		}
		s.Out.Seed(l.Seed, rec.Raw, fail, rec.ScheduleJSON, rec.HistoryHTML)
	}
}

// Pinned adds a pinned regression's replay.
func (s *Sweep) Pinned(p PinnedRecord, rec *Record) {
	if !rec.Line.Passed {
		s.PinnedFailing++
		s.Findings.Add(rec.Line.Class, rec.Line.Node, rec.Line.Reason, rec.Line.Seed, true)
	}
	s.JUnit.Add("pinned="+p.Name, rec, p.Replay, p.Path)
	s.Out.PinnedRun(p)
}

// Triage is the sweep's findings against its baseline, or nil without one.
func (s *Sweep) Triage() *Triage {
	if s.Baseline == nil {
		return nil
	}
	return s.Baseline.Triage(s.Findings)
}

// Finish writes the JUnit file and the results directory's last files:
// the coverage (settled by the caller, when it printed it), the code
// coverage if any, the triage tri if not nil, and, when the sweep ran all
// of its seeds (complete), complete.json, which says it ran ran seeds in
// elapsed. It returns the first error of the writing.
func (s *Sweep) Finish(tri *Triage, elapsed time.Duration, ran int, complete bool) error {
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if s.JUnit != nil {
		keep(s.JUnit.Write(s.JUnitPath))
	}
	if s.Out != nil {
		s.Out.WriteJSON(CoverageFile, struct {
			Seeds    int     `json:"seeds"`
			Coverage []*Prop `json:"coverage"`
		}{s.Coverage.seeds, append([]*Prop{}, s.Coverage.props...)})
		if tri != nil {
			s.Out.WriteJSON(TriageFile, tri)
		}
		if s.Code != nil {
			s.Out.WriteFile(ProfileFile, s.Code.Bytes())
		}
		var mark *CompleteMark
		if complete {
			mark = &CompleteMark{Seeds: ran, Passed: s.Passed, Failed: s.Failed, PinnedFailing: s.PinnedFailing, WallNs: elapsed.Nanoseconds()}
		}
		keep(s.Out.Finish(mark))
	}
	return firstErr
}

// Failing reports whether the sweep fails, as run's exit status says: a
// seed or a pinned regression failed, or -require-coverage is unmet
// (unmet); with a baseline, a new or regressed finding (tri) instead of a
// failed seed.
func (s *Sweep) Failing(tri *Triage, unmet bool) bool {
	switch {
	case unmet:
		return true
	case tri != nil:
		return tri.Failing()
	}
	return s.Failed > 0 || s.PinnedFailing > 0
}
