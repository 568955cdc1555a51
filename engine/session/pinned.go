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
	failing := 0
	for _, p := range pins {
		res, err := s.p.Run(ctx, engine.RunOptions{Seed: p.Schedule.Seed, Schedule: p.Schedule})
		if err != nil {
			return 0, fmt.Errorf("pinned regression %s: %w", p.Name, err)
		}
		r := results.NewRecord(res, DisplayPath(p.Path), Version())
		rec := results.PinnedRecord{Name: p.Name, Path: DisplayPath(p.Path), Result: r.Raw,
			Replay: fmt.Sprintf("seedfall replay %s -seed %d -faults %s", s.args, p.Schedule.Seed, ShellQuote(DisplayPath(p.Path)))}
		if !res.Passed {
			failing++
		}
		WritePinned(stdout, asJSON, rec, &r.Line)
		if each != nil {
			each(rec, r)
		}
	}
	WritePinnedTotal(stdout, asJSON, len(pins), failing)
	return failing, nil
}

// WritePinned prints one pinned regression's replay.
func WritePinned(w io.Writer, asJSON bool, rec results.PinnedRecord, res *results.Line) {
	switch {
	case asJSON:
		fmt.Fprintf(w, "%s\n", rec.Result)
	case res.Passed:
		fmt.Fprintf(w, "pinned %s (seed %d): passes now\n", rec.Name, res.Seed)
	default:
		fmt.Fprintf(w, "pinned %s (seed %d): STILL FAILS at t=%s: %s: %s\n", rec.Name, res.Seed, SimTime(res.SimNs), res.Class, res.Reason)
		fmt.Fprintf(w, "  replay: %s\n", rec.Replay)
	}
}

// WritePinnedTotal prints how many pinned regressions still fail.
func WritePinnedTotal(w io.Writer, asJSON bool, n, failing int) {
	if !asJSON && n > 0 {
		fmt.Fprintf(w, "%s: %d pass, %d still fail\n", Plural(n, "pinned regression"), n-failing, failing)
	}
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
