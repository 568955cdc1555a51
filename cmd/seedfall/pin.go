package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
)

func init() {
	register(command{"pin", "-c seedfall.json -seed N [-name NAME] [-faults FILE]", pinCmd})
}

// regressionsDir holds pinned regressions, next to the config, to be kept
// in version control.
const regressionsDir = "regressions"

var pinName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// pinCmd keeps a failing seed's schedule as a regression: seedfall run
// replays it before any new seed, and says whether it still fails.
func pinCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pin", stderr)
	cfg := worldFlags(fs)
	name := fs.String("name", "", "the regression's name (default: seed-N)")
	sa := seedFlags(fs, "pin")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *name == "" {
		*name = fmt.Sprintf("seed-%d", *sa.seed)
	}
	if !pinName.MatchString(*name) {
		return fmt.Errorf("-name %q: use letters, digits, '.', '_' and '-', such as lost-ack-after-crash", *name)
	}
	ctx := context.Background()
	s, sch, _, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	seed := sa.seed
	path := filepath.Join(s.w.Dir, regressionsDir, *name+".faults.json")
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s already exists; choose another -name, or remove it first", displayPath(path))
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch})
	if err != nil {
		return err
	}
	if res.Passed {
		return fmt.Errorf("seed %d passes (%s): only a failing run can be pinned as a regression", *seed, res.Reason)
	}
	// Pin what the run did: the faults that happened, and the schedule's
	// branches and shrink record, so the regression replays the same run.
	pinned := *res.Schedule
	if sch != nil {
		pinned.Duration, pinned.ShrunkFrom, pinned.ShrinkRuns = sch.Duration, sch.ShrunkFrom, sch.ShrinkRuns
	}
	pinned.Config = s.configName()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := pinned.Save(path); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pinned seed %d (%s: %s) as %s\n", *seed, res.Class, res.Reason, displayPath(path))
	fmt.Fprintf(stdout, "seedfall run %s replays it before any new seed\n", s.args)
	return nil
}

// pinned is one regression kept next to the config.
type pinned struct {
	name, path string
	sch        *faults.Schedule
}

// loadPinned reads the regressions pinned for this world (its file,
// profile and -set), in name order.
func (s *session) loadPinned() ([]pinned, error) {
	paths, _ := filepath.Glob(filepath.Join(s.w.Dir, regressionsDir, "*.faults.json"))
	slices.Sort(paths)
	var out []pinned
	for _, path := range paths {
		sch, err := faults.Load(path, checkConfig(s.w))
		if err != nil {
			return nil, fmt.Errorf("pinned regression: %w", err)
		}
		if sch.Config != "" && sch.Config != s.configName() {
			continue // pinned for another world file in this directory
		}
		out = append(out, pinned{name: strings.TrimSuffix(filepath.Base(path), ".faults.json"), path: path, sch: sch})
	}
	return out, nil
}

// runPinned replays every pinned regression and reports each one; it
// returns how many still fail.
func (s *session) runPinned(ctx context.Context, stdout io.Writer, asJSON bool) (int, error) {
	return s.runPinnedEach(ctx, stdout, asJSON, nil)
}

// runPinnedEach is runPinned, and hands each replay to each, if not nil,
// as a results directory keeps it.
func (s *session) runPinnedEach(ctx context.Context, stdout io.Writer, asJSON bool, each func(p results.PinnedRecord, rec *results.Record)) (int, error) {
	pins, err := s.loadPinned()
	if err != nil || len(pins) == 0 {
		return 0, err
	}
	failing := 0
	for _, p := range pins {
		res, err := s.p.Run(ctx, engine.RunOptions{Seed: p.sch.Seed, Schedule: p.sch})
		if err != nil {
			return 0, fmt.Errorf("pinned regression %s: %w", p.name, err)
		}
		r := results.NewRecord(res, displayPath(p.path), seedfallVersion())
		rec := results.PinnedRecord{Name: p.name, Path: displayPath(p.path), Result: r.Raw,
			Replay: fmt.Sprintf("seedfall replay %s -seed %d -faults %s", s.args, p.sch.Seed, shellQuote(displayPath(p.path)))}
		if !res.Passed {
			failing++
		}
		printPinned(stdout, asJSON, rec, &r.Line)
		if each != nil {
			each(rec, r)
		}
	}
	printPinnedTotal(stdout, asJSON, len(pins), failing)
	return failing, nil
}

// printPinned prints one pinned regression's replay.
func printPinned(w io.Writer, asJSON bool, rec results.PinnedRecord, res *results.Line) {
	switch {
	case asJSON:
		fmt.Fprintf(w, "%s\n", rec.Result)
	case res.Passed:
		fmt.Fprintf(w, "pinned %s (seed %d): passes now\n", rec.Name, res.Seed)
	default:
		fmt.Fprintf(w, "pinned %s (seed %d): STILL FAILS at t=%s: %s: %s\n", rec.Name, res.Seed, simTime(res.SimNs), res.Class, res.Reason)
		fmt.Fprintf(w, "  replay: %s\n", rec.Replay)
	}
}

// printPinnedTotal prints how many pinned regressions still fail.
func printPinnedTotal(w io.Writer, asJSON bool, n, failing int) {
	if !asJSON && n > 0 {
		fmt.Fprintf(w, "%s: %d pass, %d still fail\n", plural(n, "pinned regression"), n-failing, failing)
	}
}
