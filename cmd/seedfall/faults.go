package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"faults", "-c seedfall.json -seed N [-faults FILE] [-remove N]... [-shift N=AMOUNT]... [-add JSON]... [-duration D] [-out FILE]", faultsCmd})
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

func faultsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("faults", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "the seed whose schedule to list or edit")
	faultsFile := fs.String("faults", "", "the schedule to start from (default: .seedfall/seed-N.faults.json next to the config, else the faults seed N draws, which takes one run)")
	var edits faults.Edits
	fs.Var((*removeFlags)(&edits.Remove), "remove", "remove the fault at position N, counting from 1 as listed (repeatable)")
	fs.Var((*session.ShiftFlags)(&edits.Shift), "shift", "move fault N: by a signed duration (2=-50ms) if timed, by a signed count (1=+2) if it fires at an operation (repeatable)")
	fs.Var((*session.AddFlags)(&edits.Add), "add", `add a fault, such as {"at":"1s","kind":"pause","node":"server","until":"1.5s"} (repeatable)`)
	fs.Var(durationFlag{&edits.Duration}, "duration", "set the schedule's horizon, such as 5s: longer, so that a fault can move past the old end, or shorter")
	out := fs.String("out", "", "write the result here (default: back to the file it came from)")
	asJSON := fs.Bool("json", false, "print the schedule file as it now stands as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed's schedule to list or edit: -seed N")
	}
	w, err := cfg.load()
	if err != nil {
		return err
	}
	r, err := session.EditFaults(context.Background(), w, cfg.options(stderr), session.FaultsOptions{Seed: *seed, File: *faultsFile, Edits: edits, Out: *out})
	if err != nil {
		return err
	}
	if *asJSON {
		if err := r.Err(); err != nil {
			return err
		}
		rep, err := r.Report()
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
	return r.Write(stdout)
}

// durationFlag is a flag of a virtual duration above 0, such as 5s.
type durationFlag struct{ d *time.Duration }

func (f durationFlag) String() string {
	if f.d == nil || *f.d == 0 {
		return ""
	}
	return f.d.String()
}

func (f durationFlag) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a duration above 0, such as 5s", v)
	}
	*f.d = d
	return nil
}
