package session

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

// Replay is a seed's run replayed, with where its faults came from.
type Replay struct {
	*engine.Result
	s    *Session
	sch  *faults.Schedule
	from string
}

// Replay runs a seed as opt says; from names the file opt.Schedule came
// from ("" for the faults the seed draws).
func (s *Session) Replay(ctx context.Context, opt engine.RunOptions, from string) (*Replay, error) {
	sch := opt.Schedule
	if sch != nil && from != "" {
		// A saved schedule is checked to the horizon of the run that
		// failed, and a replay that ends there before its workload's
		// check is inconclusive, not a pass (docs/schedules.md).
		opt.Schedule, opt.Check = s.fullHorizon(sch), true
	}
	res, err := s.p.Run(ctx, opt)
	if err != nil {
		return nil, err
	}
	return &Replay{Result: res, s: s, sch: sch, from: from}, nil
}

// Write prints the run for a person, as replay does: WriteRun, then the
// trace's digest.
func (r *Replay) Write(w io.Writer) {
	r.WriteRun(w)
	fmt.Fprintf(w, "digest %s\n", r.Digest)
}

// Report is replay -json's line (results.Line).
func (r *Replay) Report() []byte { return results.Marshal(r.Result, r.from, Version()) }

// Verdict is the run's outcome as an error: ErrFailed when it failed.
func (r *Replay) Verdict() error {
	if !r.Passed {
		return ErrFailed
	}
	return nil
}

// WriteRun prints the run for a person, but for its digest: where its
// faults came from, the faults, the verdict and the properties.
func (r *Replay) WriteRun(w io.Writer) {
	s, res, sch, from := r.s, r.Result, r.sch, r.from
	WriteSource(w, res.Seed, sch, from)
	WriteMutantLine(w, res)
	for i, f := range res.Schedule.Faults {
		fmt.Fprintf(w, "  %-3d %s\n", i+1, faults.Describe(f))
	}
	s.WriteVerdict(w, res, "")
	for _, p := range res.Properties {
		fmt.Fprintf(w, "property %s %q: %s\n", p.Kind, p.Message, PropertyCounts(p))
	}
	for _, m := range res.Moved {
		fmt.Fprintf(w, "note: %s\n", m)
	}
}

// PropertyCounts says how one run fared on a property: "reached 12 times,
// true 12", "never reached", and "FAILED" when it failed the run.
func PropertyCounts(p engine.Property) string {
	if p.Hits == 0 {
		return "never reached"
	}
	s := fmt.Sprintf("reached %s, true %d, false %d", Plural(int(p.Hits), "time"), p.True, p.False)
	if p.Failed {
		s += ", FAILED"
	}
	return s
}
