package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

func replayCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("replay", stderr)
	cfg := worldFlags(fs)
	sa := seedFlags(fs, "replay").withMutant()
	asJSON := fs.Bool("json", false, "print the result as JSON")
	gprof := guestProfileFlag(fs) // guestprofile.go
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := gprof.open(); err != nil {
		return err
	}
	defer gprof.write(stderr)
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	seed := sa.seed
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch, GuestProfile: gprof.profile(), Mutant: sa.mut})
	if err != nil {
		return err
	}
	if *asJSON {
		writeJSON(stdout, res, from)
	} else {
		s.printReplay(stdout, res, sch, from)
		fmt.Fprintf(stdout, "digest %s\n", res.Digest)
	}
	if !res.Passed {
		return errFailed
	}
	return nil
}

// printReplay prints a replayed run for a person, but for its digest:
// where its faults came from, the faults, the verdict and the properties.
func (s *session) printReplay(w io.Writer, res *engine.Result, sch *faults.Schedule, from string) {
	printSource(w, res.Seed, sch, from)
	printMutantLine(w, res)
	for i, f := range res.Schedule.Faults {
		fmt.Fprintf(w, "  %-3d %s\n", i+1, faults.Describe(f))
	}
	s.printVerdict(w, res, "")
	for _, p := range res.Properties {
		fmt.Fprintf(w, "property %s %q: %s\n", p.Kind, p.Message, propertyCounts(p))
	}
	if res.Passed && sch != nil && (sch.ShrunkFrom > 0 || sch.Duration > 0 && sch.Duration < s.w.Duration) {
		// A shrunk schedule stops just past the failure it kept.
		fmt.Fprintf(w, "note: this pass is within the schedule's shrunk %v: it shows that what was taken out of the schedule is needed for this failure, not that the program is fixed\n", sch.Duration)
	}
}

// propertyCounts says how one run fared on a property: "reached 12 times,
// true 12", "never reached", and "FAILED" when it failed the run.
func propertyCounts(p engine.Property) string {
	if p.Hits == 0 {
		return "never reached"
	}
	s := fmt.Sprintf("reached %s, true %d, false %d", plural(int(p.Hits), "time"), p.True, p.False)
	if p.Failed {
		s += ", FAILED"
	}
	return s
}
