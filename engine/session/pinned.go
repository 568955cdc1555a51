package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

// RegressionsDir holds pinned regressions, next to the config, to be kept
// in version control.
const RegressionsDir = "regressions"

// Pinned is one regression kept next to the config.
type Pinned struct {
	Name, Path string
	Schedule   *faults.Schedule
}

// LoadPinned reads the regressions pinned for this world (its file,
// profile and -set), in name order.
func (s *Session) LoadPinned() ([]Pinned, error) {
	paths, _ := filepath.Glob(filepath.Join(s.w.Dir, RegressionsDir, "*.faults.json"))
	slices.Sort(paths)
	var out []Pinned
	for _, path := range paths {
		sch, err := faults.Load(path, CheckConfig(s.w))
		if err != nil {
			return nil, fmt.Errorf("pinned regression: %w", err)
		}
		if sch.Config != "" && sch.Config != s.ConfigName() {
			continue // pinned for another world file in this directory
		}
		out = append(out, Pinned{Name: strings.TrimSuffix(filepath.Base(path), ".faults.json"), Path: path, Schedule: sch})
	}
	return out, nil
}

// RunPinned replays every pinned regression and prints each one, and
// hands each replay to each, if not nil, as a results directory keeps it.
// It returns how many still fail.
func (s *Session) RunPinned(ctx context.Context, stdout io.Writer, asJSON bool, each func(p results.PinnedRecord, rec *results.Record)) (int, error) {
	pins, err := s.LoadPinned()
	if err != nil || len(pins) == 0 {
		return 0, err
	}
	var tally PinnedTally
	for _, p := range pins {
		// A pin is checked to the horizon of the run that failed, and a
		// replay that ends there before its workload's check is
		// inconclusive, not a pass (docs/schedules.md).
		res, err := s.p.Run(ctx, engine.RunOptions{Seed: p.Schedule.Seed, Schedule: s.fullHorizon(p.Schedule), Check: true})
		if err != nil {
			return 0, fmt.Errorf("pinned regression %s: %w", p.Name, err)
		}
		r := results.NewRecord(res, DisplayPath(p.Path), Version())
		rec := results.PinnedRecord{Name: p.Name, Path: DisplayPath(p.Path), Result: r.Raw,
			Replay: fmt.Sprintf("seedfall replay %s -seed %d -faults %s", s.args, p.Schedule.Seed, ShellQuote(DisplayPath(p.Path)))}
		tally.Add(&r.Line)
		WritePinned(stdout, asJSON, rec, &r.Line)
		for _, m := range res.Moved {
			if !asJSON {
				fmt.Fprintf(stdout, "  note: %s\n", m)
			}
		}
		if each != nil {
			each(rec, r)
		}
	}
	WritePinnedTotal(stdout, asJSON, tally)
	return tally.Failing + tally.Inconclusive, nil
}

// PinnedTally counts pinned regressions' replays: those that still fail,
// and those that reached no verdict.
type PinnedTally struct{ N, Failing, Inconclusive int }

// Add counts one replay.
func (t *PinnedTally) Add(l *results.Line) {
	t.N++
	switch {
	case l.Class == engine.ClassInconclusive:
		t.Inconclusive++
	case !l.Passed:
		t.Failing++
	}
}

// fullHorizon is sch to run to the world's horizon when seedfall shrink
// (before it kept the horizon) cut it to just past the failure it kept:
// after the code changed, the program may reach its check later than
// that. A schedule edited since keeps its own.
func (s *Session) fullHorizon(sch *faults.Schedule) *faults.Schedule {
	if sch == nil || sch.ShrunkFrom == 0 || sch.Duration <= 0 || sch.Duration >= s.w.Duration || s.w.Liveness.Within > 0 {
		return sch
	}
	c := *sch
	c.Duration = s.w.Duration
	return &c
}

// WritePinned prints one pinned regression's replay.
func WritePinned(w io.Writer, asJSON bool, rec results.PinnedRecord, res *results.Line) {
	switch {
	case asJSON:
		fmt.Fprintf(w, "%s\n", rec.Result)
	case res.Passed:
		fmt.Fprintf(w, "pinned %s (seed %d): passes now\n", rec.Name, res.Seed)
	case res.Class == engine.ClassInconclusive:
		fmt.Fprintf(w, "pinned %s (seed %d): INCONCLUSIVE at t=%s: %s\n", rec.Name, res.Seed, SimTime(res.SimNs), res.Reason)
		fmt.Fprintf(w, "  replay: %s\n", rec.Replay)
	default:
		fmt.Fprintf(w, "pinned %s (seed %d): STILL FAILS at t=%s: %s: %s\n", rec.Name, res.Seed, SimTime(res.SimNs), res.Class, res.Reason)
		fmt.Fprintf(w, "  replay: %s\n", rec.Replay)
	}
}

// WritePinnedTotal prints how many pinned regressions still fail, and
// how many reached no verdict.
func WritePinnedTotal(w io.Writer, asJSON bool, t PinnedTally) {
	if asJSON || t.N == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d pass, %d still fail", Plural(t.N, "pinned regression"), t.N-t.Failing-t.Inconclusive, t.Failing)
	if t.Inconclusive > 0 {
		fmt.Fprintf(w, ", %d inconclusive (never reached the workload's check)", t.Inconclusive)
	}
	fmt.Fprintln(w)
}

// Pin is a failing seed's run kept as a regression, which a sweep replays
// before any new seed (RunPinned).
type Pin struct {
	*engine.Result
	Path string // the file written
	args string
}

// Pin runs seed with the schedule sch (nil: the faults the seed draws)
// and keeps what the run did as the regression name, next to the world
// file; a seed that passes, or a name already taken, is refused.
func (s *Session) Pin(ctx context.Context, seed uint64, sch *faults.Schedule, name string) (*Pin, error) {
	path := filepath.Join(s.w.Dir, RegressionsDir, name+".faults.json")
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("%s already exists; choose another -name, or remove it first", DisplayPath(path))
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: seed, Schedule: sch})
	if err != nil {
		return nil, err
	}
	if res.Passed {
		return nil, fmt.Errorf("seed %d passes (%s): only a failing run can be pinned as a regression", seed, res.Reason)
	}
	// Pin what the run did: the faults that happened, and the schedule's
	// branches and shrink record, so the regression replays the same run.
	pinned := *res.Schedule
	if sch != nil {
		pinned.Duration, pinned.ShrunkFrom, pinned.ShrinkRuns = sch.Duration, sch.ShrunkFrom, sch.ShrinkRuns
	}
	pinned.Config = s.ConfigName()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := pinned.Save(path); err != nil {
		return nil, err
	}
	return &Pin{Result: res, Path: path, args: s.args}, nil
}

// Write says what was pinned, and how it runs.
func (p *Pin) Write(w io.Writer) {
	fmt.Fprintf(w, "pinned seed %d (%s: %s) as %s\n", p.Seed, p.Class, p.Reason, DisplayPath(p.Path))
	fmt.Fprintf(w, "seedfall run %s replays it before any new seed\n", p.args)
}
