package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

func init() {
	register(command{"faults", "-c seedfall.json -seed N [-faults FILE] [-remove N]... [-shift N=AMOUNT]... [-add JSON]... [-out FILE]", faultsCmd})
}

// removeFlags collects repeated -remove positions.
type removeFlags []int

func (r *removeFlags) String() string { return fmt.Sprint([]int(*r)) }
func (r *removeFlags) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not a fault position (they count from 1, as listed)", v)
	}
	*r = append(*r, n)
	return nil
}

// shiftFlags collects repeated -shift N=AMOUNT.
type shiftFlags []faults.Shift

func (s *shiftFlags) String() string { return "" }
func (s *shiftFlags) Set(v string) error {
	sh, err := faults.ParseShift(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("-shift %q: ", v)))
	}
	*s = append(*s, sh)
	return nil
}

// addFlags collects repeated -add JSON faults.
type addFlags []faults.Fault

func (a *addFlags) String() string { return "" }
func (a *addFlags) Set(v string) error {
	var f faults.Fault
	if err := json.Unmarshal([]byte(v), &f); err != nil {
		return fmt.Errorf("not a fault like {\"at\":\"1s\",\"kind\":\"pause\",\"node\":\"server\",\"until\":\"1.5s\"}: %v", err)
	}
	*a = append(*a, f)
	return nil
}

func faultsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("faults", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "the seed whose schedule to list or edit")
	faultsFile := fs.String("faults", "", "the schedule to start from (default: .seedfall/seed-N.faults.json next to the config, else the faults seed N draws, which takes one run)")
	var edits faults.Edits
	fs.Var((*removeFlags)(&edits.Remove), "remove", "remove the fault at position N, counting from 1 as listed (repeatable)")
	fs.Var((*shiftFlags)(&edits.Shift), "shift", "move fault N: by a signed duration (2=-50ms) if timed, by a signed count (1=+2) if it fires at an operation (repeatable)")
	fs.Var((*addFlags)(&edits.Add), "add", `add a fault, such as {"at":"1s","kind":"pause","node":"server","until":"1.5s"} (repeatable)`)
	out := fs.String("out", "", "write the result here (default: back to the file it came from)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed's schedule to list or edit: -seed N")
	}
	// Listing and editing need only the world; the engine is built only
	// when the seed must run to draw its faults.
	w, err := cfg.load()
	if err != nil {
		return err
	}
	s := &session{cfg: *cfg.cfg, args: cfg.String(), stderr: stderr, w: w}
	sch, source, err := s.readSchedule(*faultsFile, *seed, *out != "")
	if err != nil {
		return err
	}
	from := "from " + displayPath(source)
	drawn := sch == nil
	if drawn {
		if sch, err = s.drawSchedule(cfg, *seed); err != nil {
			return err
		}
		from = "drawn from the seed"
	}
	edited := len(edits.Remove)+len(edits.Shift)+len(edits.Add) > 0
	if edited {
		if sch, err = faults.Edit(sch, edits); err != nil {
			return err
		}
	}
	target := ""
	if edited || drawn || *out != "" {
		target = source
		if *out != "" {
			target = *out
		}
	}

	checkErr := faults.Check(sch, checkConfig(w))
	header := fmt.Sprintf("seed %d, %s %s", *seed, plural(len(sch.Faults), "fault"), from)
	if target != "" && checkErr == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := sch.Save(target); err != nil {
			return err
		}
		header += ", wrote " + displayPath(target)
	}
	fmt.Fprintln(stdout, header)
	for i, f := range sch.Faults {
		fmt.Fprintf(stdout, "  %-3d  %s\n", i+1, faults.Describe(f))
	}
	if checkErr != nil {
		msg := checkErr.Error()
		if n := strings.Count(msg, "\n") + 1; n > 1 {
			return fmt.Errorf("%d rules broken, nothing written:\n  %s", n, strings.ReplaceAll(msg, "\n", "\n  "))
		}
		return fmt.Errorf("%s; nothing written", msg)
	}
	if sch.Duration > 0 {
		fmt.Fprintf(stdout, "duration %v\n", sch.Duration)
	} else {
		fmt.Fprintf(stdout, "duration %v (the config's)\n", w.Duration)
	}
	for _, b := range sch.Branches {
		stream := "every stream"
		if b.Stream != "" {
			stream = "stream " + b.Stream
		}
		fmt.Fprintf(stdout, "branch at %v re-keys %s (key %d)\n", b.At, stream, b.Key)
	}
	replay := s.replayCommand(*seed)
	if file := cmp.Or(target, source); !samePath(file, s.schedulePath(*seed)) {
		replay += " -faults " + shellQuote(displayPath(file))
	}
	fmt.Fprintf(stdout, "replay: %s\n", replay)
	return nil
}

func samePath(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

func checkConfig(w *world.World) faults.CheckConfig {
	c := faults.CheckConfig{Duration: w.Duration, PreemptPCT: w.Preempt.Strategy == world.StrategyPCT}
	for _, p := range w.Programs() {
		c.Programs = append(c.Programs, p.Name)
	}
	return c
}

// readSchedule reads -faults, else the seed's saved schedule next to the
// config. It returns a nil schedule, and where to save the seed's own
// faults, when there is no file to start from. Unlike loadSchedule it does
// not check the faults: an edit may be what fixes them, and Check runs on
// the result.
func (s *session) readSchedule(path string, seed uint64, hasOut bool) (*faults.Schedule, string, error) {
	implicit := path == ""
	if implicit {
		path = s.schedulePath(seed)
		if _, err := os.Stat(path); err != nil {
			return nil, path, nil
		}
	}
	b, err := faults.ReadFile(displayPath(path))
	if err != nil {
		return nil, "", err
	}
	sch, err := faults.Parse(displayPath(path), b)
	if err != nil {
		return nil, "", err
	}
	if sch.Seed != seed {
		return nil, "", fmt.Errorf("%s holds the schedule of seed %d, not seed %d", displayPath(path), sch.Seed, seed)
	}
	// A world file's profiles and -set overrides share its schedules: another
	// one's schedule is edited only when named, and never overwritten unasked.
	if own := s.configName(); implicit && sch.Config != "" && sch.Config != own {
		if !hasOut {
			return nil, "", fmt.Errorf("%s was saved by %s, not %s: pass -faults %s to edit it, or -out FILE to start from seed %d's own faults",
				displayPath(path), sch.Config, own, displayPath(path), seed)
		}
		fmt.Fprintf(s.stderr, "note: %s was saved by %s, not %s; starting from seed %d's own faults\n", displayPath(path), sch.Config, own, seed)
		return nil, path, nil
	}
	return sch, path, nil
}

// drawSchedule runs the seed once for the faults it draws on its own.
func (s *session) drawSchedule(wa *worldArgs, seed uint64) (*faults.Schedule, error) {
	ctx := callContext(s.stderr)
	full, err := open(ctx, wa, s.stderr)
	if err != nil {
		return nil, err
	}
	defer full.close()
	res, err := full.p.Run(ctx, engine.RunOptions{Seed: seed})
	if err != nil {
		return nil, err
	}
	sch := *res.Schedule
	sch.Config = s.configName()
	return &sch, nil
}
