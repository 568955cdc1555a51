package session

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

// CauseDefaults are cause's flags' defaults, which seedfall_cause uses.
var CauseDefaults = cause.Options{Moments: 16, Branches: 8, Parallel: 2}

// Cause is when a failing seed's failure became inevitable (cause.Find),
// with what it started from: the text cause prints and its -json object.
type Cause struct {
	*cause.Result
	s    *Session
	seed uint64
	sch  *faults.Schedule
	from string
	opt  cause.Options
}

// Cause forks a failing run of seed, with the schedule sch from from (nil
// and "": the seed's own faults), at many moments, as opt says. Its error
// says so when Ctrl-C stopped the seed's first run.
func (s *Session) Cause(ctx context.Context, seed uint64, sch *faults.Schedule, from string, opt cause.Options) (*Cause, error) {
	res, err := cause.Find(ctx, s.p, seed, sch, opt)
	if err != nil && Interrupted(ctx) {
		return nil, fmt.Errorf("%w before seed %d's run finished: nothing established", ErrInterrupted, seed)
	}
	if err != nil {
		return nil, err
	}
	return &Cause{Result: res, s: s, seed: seed, sch: sch, from: from, opt: opt}, nil
}

// Verdict is the command's outcome as an error: the seed fails, or
// Ctrl-C stopped the search.
func (c *Cause) Verdict() error {
	if c.Interrupted {
		return ErrInterrupted
	}
	return ErrFailed
}

// CauseReport is cause -json's object, and seedfall_cause's structured
// result.
type CauseReport struct {
	Failure      results.Line   `json:"failure"`
	Moments      []CauseMoment  `json:"moments"`
	AfterNs      int64          `json:"after_ns"`
	InevitableNs int64          `json:"inevitable_ns"`
	Faults       []faults.Fault `json:"faults"`
	Events       []string       `json:"events"`
	Runs         int            `json:"runs"`
	Steps        uint64         `json:"steps"`
	Interrupted  bool           `json:"interrupted,omitempty"`
}

type CauseMoment struct {
	AtNs    int64  `json:"at_ns"`
	Failed  int    `json:"failed"`
	Runs    int    `json:"runs"`
	Verdict string `json:"verdict"`
}

// Report is cause -json's object.
func (c *Cause) Report() CauseReport {
	res, from := c.Result, c.from
	out := CauseReport{Failure: results.NewLine(res.Failure, from), AfterNs: int64(res.After), InevitableNs: int64(res.Inevitable), Faults: res.Faults,
		Runs: res.Runs, Steps: res.Steps, Interrupted: res.Interrupted}
	for _, m := range res.Moments {
		out.Moments = append(out.Moments, CauseMoment{int64(m.At), m.Failed, m.Runs, m.Verdict.String()})
	}
	if out.Faults == nil {
		out.Faults = []faults.Fault{}
	}
	out.Events = []string{}
	for _, l := range res.Events {
		out.Events = append(out.Events, strings.TrimSpace(l.String()))
	}
	return out
}

// Write writes cause's table for a person: the moments forked, when
// the failure became inevitable, what happened just before, and the
// debug command that shows the world at both ends.
func (c *Cause) Write(w io.Writer) {
	s, seed, sch, from, opt, res := c.s, c.seed, c.sch, c.from, c.opt, c.Result
	f := res.Failure
	if from != "" {
		fmt.Fprintf(w, "seed %d, %s from %s\n", seed, Plural(len(sch.Faults), "fault"), from)
	}
	fmt.Fprintf(w, "seed %d fails at %s: %s: %s\n", seed, SimTime(f.SimNs), f.Class, f.Reason)
	if opt.Exhaustive {
		fmt.Fprintf(w, "forked %s at %s, each keeping the faults before its moment and re-keying every stream from it:\n",
			Plural(opt.Branches, "way"), Plural(len(res.Moments), "moment"))
	} else {
		fmt.Fprintf(w, "forked up to %s at %s, each keeping the faults before its moment and re-keying every stream from it;\n",
			Plural(opt.Branches, "way"), Plural(len(res.Moments), "moment"))
		fmt.Fprintf(w, "bisected on each moment's first fork (the faults' edges, then the scan, then halving), then ran the two ends' forks until they decided them (-all: every fork of every moment):\n")
	}
	disagree := 0
	for _, m := range res.Moments {
		bar := strings.Repeat("#", m.Failed) + strings.Repeat(".", m.Runs-m.Failed)
		note := ""
		split := m.Failed > 0 && m.Failed < m.Runs
		if split && m.Verdict != cause.Undecided {
			disagree++
		}
		switch {
		case m.Verdict == cause.Undecided && res.Interrupted:
			note = "  (interrupted: undecided)"
		case m.Verdict == cause.Undecided:
			note = "  (its first fork only: the search went past it)"
		case split && m.Verdict == cause.Passes:
			note = fmt.Sprintf("  (forks disagree: fewer than the %d of %d that make a moment inevitable fail, so it counts as avoidable)", res.Need, opt.Branches)
		case split:
			note = fmt.Sprintf("  (forks disagree: at least %d of %d fail, so it counts as inevitable)", res.Need, opt.Branches)
		case m.Runs < opt.Branches:
			note = fmt.Sprintf("  (%d of %d forks decided it: %s)", m.Runs, opt.Branches, m.Verdict)
		}
		fmt.Fprintf(w, "  %14v  %-*s  %d/%d still fail%s\n", m.At, opt.Branches, bar, m.Failed, m.Runs, note)
	}
	if disagree > 0 {
		fmt.Fprintf(w, "forks of %s disagree: from there the failure depends on what the random streams draw after the moment (scheduling, latencies, disk timing), not only on what came before; the interval is where it became likely, and more -branches make it sharper\n",
			Plural(disagree, "moment"))
	}
	if res.Interrupted {
		fmt.Fprintf(w, "interrupted after %s; what the decided moments establish:\n", Plural(res.Runs, "run"))
	}
	if res.Inevitable == 0 {
		fmt.Fprintf(w, "the failure was inevitable from the start: forks without any fault still fail\n")
	} else {
		fmt.Fprintf(w, "the failure became inevitable between %v and %v\n", res.After, res.Inevitable)
	}
	if len(res.Faults) > 0 {
		fmt.Fprintln(w, "faults in that interval:")
		for _, fl := range res.Faults {
			fmt.Fprintln(w, "  "+faults.Describe(fl))
		}
	}
	if len(res.Events) > 0 {
		fmt.Fprintln(w, "events in that interval:")
		for _, l := range engine.TailLines(res.Events, "", 10) {
			fmt.Fprintln(w, "  "+l.String())
		}
	}
	if len(res.Faults) == 0 && len(res.Events) == 0 && res.Inevitable > 0 {
		fmt.Fprintln(w, "nothing in that interval is in the trace (no fault, no output): what made the failure inevitable there is the programs' own work, such as a write acknowledged before it was synced, or a message sent; compare the world at both ends (below) for the difference: pending writes, connections, who is up")
	}
	// The world its forks start from at each end: where the failure can
	// still be avoided (before what was due at After), and where it cannot.
	debug := fmt.Sprintf("seedfall debug %s -seed %d", s.args, seed)
	if from != "" && !SamePath(from, s.SchedulePath(seed)) {
		debug += " -faults " + ShellQuote(from) // the schedule it explained
	}
	if res.After > 0 {
		debug += fmt.Sprintf(" -at %v", res.After-1)
	}
	fmt.Fprintf(w, "%s in all, %s; the world at both ends: %s -at %v\n", Plural(res.Runs, "run"), cost(res), debug, res.Inevitable)
}

// cost says what the forks cost in runs of the seed: their scheduler
// steps over the failing run's, which unlike their wall time is the same
// every time.
func cost(res *cause.Result) string {
	if res.Failure.Steps == 0 {
		return fmt.Sprintf("%d scheduler steps", res.Steps)
	}
	return fmt.Sprintf("%.1f times the failing run's scheduler steps", float64(res.Steps)/float64(res.Failure.Steps))
}
