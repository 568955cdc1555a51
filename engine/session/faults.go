package session

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
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// ShiftFlags collects repeated -shift N=AMOUNT.
type ShiftFlags []faults.Shift

func (s *ShiftFlags) String() string { return "" }
func (s *ShiftFlags) Set(v string) error {
	sh, err := faults.ParseShift(v)
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), fmt.Sprintf("-shift %q: ", v)))
	}
	*s = append(*s, sh)
	return nil
}

// AddFlags collects repeated -add JSON faults.
type AddFlags []faults.Fault

func (a *AddFlags) String() string { return "" }
func (a *AddFlags) Set(v string) error {
	var f faults.Fault
	if err := json.Unmarshal([]byte(v), &f); err != nil {
		return fmt.Errorf("not a fault like {\"at\":\"1s\",\"kind\":\"pause\",\"node\":\"server\",\"until\":\"1.5s\"}: %v", err)
	}
	*a = append(*a, f)
	return nil
}

// FaultsOptions say which schedule faults lists, how to edit it and where
// to write it.
type FaultsOptions struct {
	Seed  uint64
	File  string // the schedule to start from; "": the seed's own file, else the faults it draws
	Edits faults.Edits
	Out   string // where to write the result; "": back to the file it came from
}

// FaultsEdit is a seed's schedule as faults lists it, edited and
// written as asked.
type FaultsEdit struct {
	seed     uint64
	sch      *faults.Schedule
	from     string        // where it came from: "from FILE", "drawn from the seed"
	wrote    string        // the file it was written to, or ""
	file     string        // the file that holds it now: the one written, else the one read
	duration time.Duration // the world's, for a schedule that has none
	replay   string        // the command that replays the seed with it
	check    error         // the world's rules it breaks: then nothing was written
}

// EditFaults reads a seed's schedule (drawing the seed's own faults, in
// one run, when there is no file to start from), applies the edits, checks
// the result against the world and writes it: back to where it came from,
// or to o.Out. Listing and editing need only the world; the engine is
// built, or opt.Engine used, only when the seed must run.
func EditFaults(ctx context.Context, w *world.World, opt Options, o FaultsOptions) (*FaultsEdit, error) {
	s := unprepared(w, opt)
	sch, source, err := s.readSchedule(o.File, o.Seed, o.Out != "")
	if err != nil {
		return nil, err
	}
	r := &FaultsEdit{seed: o.Seed, from: "from " + DisplayPath(source), duration: w.Duration}
	drawn := sch == nil
	if drawn {
		if sch, err = s.drawSchedule(ctx, opt, o.Seed); err != nil {
			return nil, err
		}
		r.from = "drawn from the seed"
	}
	edited := len(o.Edits.Remove)+len(o.Edits.Shift)+len(o.Edits.Add) > 0 || o.Edits.Duration > 0
	if edited {
		if sch, err = faults.Edit(sch, o.Edits); err != nil {
			return nil, err
		}
	}
	r.sch = sch
	target := ""
	if edited || drawn || o.Out != "" {
		target = cmp.Or(o.Out, source)
	}
	r.file = cmp.Or(target, source)
	if r.check = faults.Check(sch, CheckConfig(w)); target != "" && r.check == nil {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		if err := sch.Save(target); err != nil {
			return nil, err
		}
		r.wrote = target
	}
	r.replay = s.ReplayCommand(o.Seed)
	if !SamePath(r.file, s.SchedulePath(o.Seed)) {
		r.replay += " -faults " + ShellQuote(DisplayPath(r.file))
	}
	return r, nil
}

// Write lists the schedule for a person. It returns the error of a
// schedule that breaks the world's rules, after listing it.
func (r *FaultsEdit) Write(w io.Writer) error {
	header := fmt.Sprintf("seed %d, %s %s", r.seed, Plural(len(r.sch.Faults), "fault"), r.from)
	if r.wrote != "" {
		header += ", wrote " + DisplayPath(r.wrote)
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

// Err is the error of a schedule that breaks the world's rules, which
// Write returns after listing it; nil when it keeps them.
func (r *FaultsEdit) Err() error {
	if r.check == nil {
		return nil
	}
	return r.checkError()
}

// checkError says which of the world's rules the schedule breaks, and that
// nothing was written.
func (r *FaultsEdit) checkError() error {
	msg := r.check.Error()
	hint := ""
	if strings.Contains(msg, "is after the end of the run") {
		hint = " (-duration makes the run longer)"
	}
	if n := strings.Count(msg, "\n") + 1; n > 1 {
		return fmt.Errorf("%d rules broken, nothing written%s:\n  %s", n, hint, strings.ReplaceAll(msg, "\n", "\n  "))
	}
	return fmt.Errorf("%s; nothing written%s", msg, hint)
}

// FaultsReport is faults -json's object, and seedfall_faults_edit's
// structured result: the schedule file as it now stands.
type FaultsReport struct {
	File     string          `json:"file"`
	Faults   []string        `json:"fault_list"`
	Schedule json.RawMessage `json:"schedule"`
}

// Report reads back the file that holds the schedule now.
func (r *FaultsEdit) Report() (*FaultsReport, error) {
	return readScheduleReport(r.file)
}

func readScheduleReport(file string) (*FaultsReport, error) {
	b, err := faults.ReadFile(file)
	if err != nil {
		return nil, err
	}
	sch, err := faults.Parse(DisplayPath(file), b)
	if err != nil {
		return nil, err
	}
	rep := &FaultsReport{File: DisplayPath(file), Faults: []string{}, Schedule: json.RawMessage(bytes.TrimSpace(b))}
	for _, f := range sch.Faults {
		rep.Faults = append(rep.Faults, faults.Describe(f))
	}
	return rep, nil
}

// readSchedule reads -faults, else the seed's saved schedule next to the
// config. It returns a nil schedule, and where to save the seed's own
// faults, when there is no file to start from. Unlike LoadSchedule it does
// not check the faults: an edit may be what fixes them, and Check runs on
// the result.
func (s *Session) readSchedule(path string, seed uint64, hasOut bool) (*faults.Schedule, string, error) {
	implicit := path == ""
	if implicit {
		path = s.SchedulePath(seed)
		if _, err := os.Stat(path); err != nil {
			return nil, path, nil
		}
	}
	b, err := faults.ReadFile(DisplayPath(path))
	if err != nil {
		return nil, "", err
	}
	sch, err := faults.Parse(DisplayPath(path), b)
	if err != nil {
		return nil, "", err
	}
	if sch.Seed != seed {
		return nil, "", fmt.Errorf("%s holds the schedule of seed %d, not seed %d", DisplayPath(path), sch.Seed, seed)
	}
	// A world file's profiles and -set overrides share its schedules: another
	// one's schedule is edited only when named, and never overwritten unasked.
	if own := s.ConfigName(); implicit && sch.Config != "" && sch.Config != own {
		if !hasOut {
			return nil, "", fmt.Errorf("%s was saved by %s, not %s: pass -faults %s to edit it, or -out FILE to start from seed %d's own faults",
				DisplayPath(path), sch.Config, own, DisplayPath(path), seed)
		}
		fmt.Fprintf(s.stderr, "note: %s was saved by %s, not %s; starting from seed %d's own faults\n", DisplayPath(path), sch.Config, own, seed)
		return nil, path, nil
	}
	return sch, path, nil
}

// drawSchedule runs the seed once for the faults it draws on its own, in
// a session opened as opt says.
func (s *Session) drawSchedule(ctx context.Context, opt Options, seed uint64) (*faults.Schedule, error) {
	full, err := Open(ctx, s.w, opt)
	if err != nil {
		return nil, err
	}
	defer full.Close()
	res, err := full.p.Run(ctx, engine.RunOptions{Seed: seed})
	if err != nil {
		return nil, err
	}
	sch := *res.Schedule
	sch.Config = s.ConfigName()
	return &sch, nil
}
