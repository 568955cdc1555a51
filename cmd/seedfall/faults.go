package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	asJSON := fs.Bool("json", false, "print the schedule file as it now stands as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed's schedule to list or edit: -seed N")
	}
	r, err := editFaults(context.Background(), cfg, openOptions{stderr: stderr}, faultsOptions{seed: *seed, file: *faultsFile, edits: edits, out: *out})
	if err != nil {
		return err
	}
	if *asJSON {
		if r.check != nil {
			return r.checkError()
		}
		rep, err := r.report()
		if err != nil {
			return err
		}
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return r.print(stdout)
}

// faultsOptions say which schedule faults lists, how to edit it and where
// to write it.
type faultsOptions struct {
	seed  uint64
	file  string // the schedule to start from; "": the seed's own file, else the faults it draws
	edits faults.Edits
	out   string // where to write the result; "": back to the file it came from
}

// faultsResult is a seed's schedule as faults lists it, edited and
// written as asked.
type faultsResult struct {
	seed     uint64
	sch      *faults.Schedule
	from     string        // where it came from: "from FILE", "drawn from the seed"
	wrote    string        // the file it was written to, or ""
	file     string        // the file that holds it now: the one written, else the one read
	duration time.Duration // the world's, for a schedule that has none
	replay   string        // the command that replays the seed with it
	check    error         // the world's rules it breaks: then nothing was written
}

// editFaults reads a seed's schedule (drawing the seed's own faults, in
// one run, when there is no file to start from), applies the edits, checks
// the result against the world and writes it: back to where it came from,
// or to o.out. Listing and editing need only the world; the engine is
// built, or opt.engine used, only when the seed must run.
func editFaults(ctx context.Context, wa *worldArgs, opt openOptions, o faultsOptions) (*faultsResult, error) {
	w, err := wa.load()
	if err != nil {
		return nil, err
	}
	s := &session{cfg: *wa.cfg, args: wa.String(), stderr: opt.stderr, w: w}
	sch, source, err := s.readSchedule(o.file, o.seed, o.out != "")
	if err != nil {
		return nil, err
	}
	r := &faultsResult{seed: o.seed, from: "from " + displayPath(source), duration: w.Duration}
	drawn := sch == nil
	if drawn {
		if sch, err = s.drawSchedule(ctx, wa, opt, o.seed); err != nil {
			return nil, err
		}
		r.from = "drawn from the seed"
	}
	edited := len(o.edits.Remove)+len(o.edits.Shift)+len(o.edits.Add) > 0
	if edited {
		if sch, err = faults.Edit(sch, o.edits); err != nil {
			return nil, err
		}
	}
	r.sch = sch
	target := ""
	if edited || drawn || o.out != "" {
		target = cmp.Or(o.out, source)
	}
	r.file = cmp.Or(target, source)
	if r.check = faults.Check(sch, checkConfig(w)); target != "" && r.check == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := sch.Save(target); err != nil {
			return nil, err
		}
		r.wrote = target
	}
	r.replay = s.replayCommand(o.seed)
	if !samePath(r.file, s.schedulePath(o.seed)) {
		r.replay += " -faults " + shellQuote(displayPath(r.file))
	}
	return r, nil
}

// print lists the schedule for a person. It returns the error of a
// schedule that breaks the world's rules, after listing it.
func (r *faultsResult) print(w io.Writer) error {
	header := fmt.Sprintf("seed %d, %s %s", r.seed, plural(len(r.sch.Faults), "fault"), r.from)
	if r.wrote != "" {
		header += ", wrote " + displayPath(r.wrote)
	}
	fmt.Fprintln(w, header)
	for i, f := range r.sch.Faults {
		fmt.Fprintf(w, "  %-3d  %s\n", i+1, faults.Describe(f))
	}
	if r.check != nil {
		return r.checkError()
	}
	if r.sch.Duration > 0 {
		fmt.Fprintf(w, "duration %v\n", r.sch.Duration)
	} else {
		fmt.Fprintf(w, "duration %v (the config's)\n", r.duration)
	}
	for _, b := range r.sch.Branches {
		stream := "every stream"
		if b.Stream != "" {
			stream = "stream " + b.Stream
		}
		fmt.Fprintf(w, "branch at %v re-keys %s (key %d)\n", b.At, stream, b.Key)
	}
	fmt.Fprintf(w, "replay: %s\n", r.replay)
	return nil
}

// checkError says which of the world's rules the schedule breaks, and that
// nothing was written.
func (r *faultsResult) checkError() error {
	msg := r.check.Error()
	if n := strings.Count(msg, "\n") + 1; n > 1 {
		return fmt.Errorf("%d rules broken, nothing written:\n  %s", n, strings.ReplaceAll(msg, "\n", "\n  "))
	}
	return fmt.Errorf("%s; nothing written", msg)
}

// faultsReport is faults -json's object, and seedfall_faults_edit's
// structured result: the schedule file as it now stands.
type faultsReport struct {
	File     string          `json:"file"`
	Faults   []string        `json:"fault_list"`
	Schedule json.RawMessage `json:"schedule"`
}

// report reads back the file that holds the schedule now.
func (r *faultsResult) report() (*faultsReport, error) {
	return readScheduleReport(r.file)
}

func readScheduleReport(file string) (*faultsReport, error) {
	b, err := faults.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sch, err := faults.Parse(displayPath(file), b)
	if err != nil {
		return nil, err
	}
	rep := &faultsReport{File: displayPath(file), Faults: []string{}, Schedule: json.RawMessage(bytes.TrimSpace(b))}
	for _, f := range sch.Faults {
		rep.Faults = append(rep.Faults, faults.Describe(f))
	}
	return rep, nil
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

// drawSchedule runs the seed once for the faults it draws on its own, in
// a session opened as opt says.
func (s *session) drawSchedule(ctx context.Context, wa *worldArgs, opt openOptions, seed uint64) (*faults.Schedule, error) {
	full, err := openWith(ctx, wa, opt)
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
