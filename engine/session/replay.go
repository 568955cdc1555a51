package session

import (
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

// WriteReplay prints a replayed run for a person, but for its digest:
// where its faults came from, the faults, the verdict and the properties.
func (s *Session) WriteReplay(w io.Writer, res *engine.Result, sch *faults.Schedule, from string) {
	WriteSource(w, res.Seed, sch, from)
	WriteMutantLine(w, res)
	for i, f := range res.Schedule.Faults {
		fmt.Fprintf(w, "  %-3d %s\n", i+1, faults.Describe(f))
	}
	s.WriteVerdict(w, res, "")
	for _, p := range res.Properties {
		fmt.Fprintf(w, "property %s %q: %s\n", p.Kind, p.Message, PropertyCounts(p))
	}
	if res.Passed && sch != nil && (sch.ShrunkFrom > 0 || sch.Duration > 0 && sch.Duration < s.w.Duration) {
		// A shrunk schedule stops just past the failure it kept.
		fmt.Fprintf(w, "note: this pass is within the schedule's shrunk %v: it shows that what was taken out of the schedule is needed for this failure, not that the program is fixed\n", sch.Duration)
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
