package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/mutate"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"mutate", "-c seedfall.json -seeds 1-50 [-mutants fsync,dirsync,...] [-parallel K] [-json]", mutateCmd})
	descriptions["mutate"] = "Check that the workload notices weakened durability: run the seeds again with fsync, fdatasync or a directory's fsync made a no-op, O_SYNC ignored, or renames torn by a crash, one mutant at a time, and report each mutant under which every seed still passes. The world must pass the seeds without mutants first. Exit status 0 when every mutant the programs reach is killed, 1 when one survives."
}

func mutateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("mutate", stderr)
	cfg := worldFlags(fs)
	seeds := fs.String("seeds", "", "the seeds to run under each mutant: 1-50, or lists like 2-3,9")
	names := fs.String("mutants", strings.Join(engine.MutantKinds, ","), "the mutants to run, comma-separated; NAME/K weakens one call in K, drawn per call")
	parallel := fs.Int("parallel", defaultParallel(), "worlds run at once (one per core; a world never spreads over cores)")
	asJSON := fs.Bool("json", false, "print one JSON object per mutant")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *seeds == "" {
		return fmt.Errorf("say which seeds to run under each mutant: -seeds 1-50")
	}
	list, err := parseSeeds(*seeds)
	if err != nil {
		return err
	}
	mutants, err := parseMutants(*names)
	if err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	ctx, stop := onInterrupt(context.Background())
	defer stop()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return stoppedBy(ctx, err)
	}
	worldsAtOnce(*parallel) // after Prepare, which compiles programs side by side
	defer s.Close()
	start := time.Now()

	// Without mutants first: a seed that fails already says nothing about
	// a mutant. The runs also say which seeds each mutant can change.
	ran, failed, reached, err := mutate.Reach(ctx, s.Prepared(), list, *parallel, mutants)
	runs := ran
	switch {
	case interrupted(ctx):
		fmt.Fprintf(stderr, "%s without mutants; no mutant ran\n", session.InterruptedLine(ran, list.Len()))
		return errInterrupted
	case err != nil:
		return err
	case failed != nil:
		if *asJSON {
			writeJSON(stdout, failed, "")
		} else {
			s.WriteVerdict(stdout, failed, s.ReplayCommand(failed.Seed))
		}
		return fmt.Errorf("seed %d fails without any mutant: mutate needs a world that passes its seeds, so that a failure under a mutant is the mutant's doing; fix the world, or leave the seed out of -seeds", failed.Seed)
	}
	if !*asJSON {
		fmt.Fprintf(stdout, "without mutants: %s passed\n", plural(list.Len(), "seed"))
	}

	var killed, survived, unreached []string
	for i, m := range mutants {
		o, err := mutate.Search(ctx, s.Prepared(), m, reached[i], *parallel)
		runs += o.Runs
		if err != nil {
			return err
		}
		if o.Res != nil {
			o.Replay = s.ReplayCommand(o.Seed) + " -mutant " + m.String()
		}
		if interrupted(ctx) {
			fmt.Fprintf(stderr, "interrupted while running mutant %s; %d of %s done\n", m, i, plural(len(mutants), "mutant"))
			return errInterrupted
		}
		switch o.Verdict {
		case mutate.Killed:
			killed = append(killed, m.String())
		case mutate.Survived:
			survived = append(survived, m.String())
		default:
			unreached = append(unreached, m.String())
		}
		if *asJSON {
			b, _ := json.Marshal(o)
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			printMutant(s, stdout, m, o, list.Len())
		}
	}
	if !*asJSON {
		el := time.Since(start)
		fmt.Fprintf(stdout, "%s: %d killed, %d survived%s, %d not reached; %s in %s (%.0f seeds/s)\n",
			plural(len(mutants), "mutant"), len(killed), len(survived), listed(survived), len(unreached),
			plural(runs, "run"), el.Round(time.Millisecond), float64(runs)/el.Seconds())
		switch {
		case len(killed) == 0 && len(survived) == 0:
			fmt.Fprintf(stdout, "no mutant could change a run: these seeds never sync anything a crash would lose, so mutate cannot tell what the workload checks\n")
		case len(killed) == 0:
			fmt.Fprintf(stdout, "the workload killed no mutant: a workload that kills no mutant checks nothing durable\n")
		}
	}
	if len(survived) > 0 || len(killed) == 0 {
		return errFailed
	}
	return nil
}

// listed writes " (a, b)" for a non-empty list.
func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// parseMutants reads -mutants: names, each once.
func parseMutants(spec string) ([]engine.Mutant, error) {
	var out []engine.Mutant
	seen := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		if strings.TrimSpace(name) == "" {
			continue
		}
		m, err := engine.ParseMutant(name)
		if err != nil {
			return nil, fmt.Errorf("-mutants: %v", err)
		}
		if seen[m.String()] {
			return nil, fmt.Errorf("-mutants: %s named twice; name each mutant once", m)
		}
		seen[m.String()] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-mutants: name at least one of %s", strings.Join(engine.MutantKinds, ", "))
	}
	return out, nil
}

// printMutant prints one mutant's outcome for a person.
func printMutant(s *session.Session, w io.Writer, m engine.Mutant, o mutate.Outcome, total int) {
	name := fmt.Sprintf("%-10s", m.String())
	switch o.Verdict {
	case mutate.Killed:
		fmt.Fprintf(w, "%s killed by seed %d (the %s of the %d seeds it reaches; %s)\n", name, o.Seed, ordinal(o.Runs), o.Seeds, session.WeakenedText(m, o.Weakened))
		fmt.Fprintf(w, "  %s: %s\n", o.Class, o.Reason)
		for _, l := range o.Res.FailureLines(4) {
			fmt.Fprintf(w, "  %s\n", l.String())
		}
		fmt.Fprintf(w, "  replay: %s\n", o.Replay)
	case mutate.Survived:
		if o.Weakened == 0 {
			fmt.Fprintf(w, "%s survived the %s it reaches without taking effect: its draws spared every call; try more seeds or a smaller K\n", name, plural(o.Seeds, "seed"))
			return
		}
		fmt.Fprintf(w, "%s survived the %s it reaches: the workload did not notice that %s (%s)\n", name, plural(o.Seeds, "seed"), m.Describe(), session.WeakenedText(m, o.Weakened))
	default:
		fmt.Fprintf(w, "%s not reached in %s: %s\n", name, plural(total, "seed"), unreachedWhy(s, m))
	}
}

// unreachedWhy says what no seed did, so that m could not change a run.
func unreachedWhy(s *session.Session, m engine.Mutant) string {
	strict := s.World().Faults.StrictDirs
	switch m.Kind {
	case engine.MutantFsync:
		return "no program fsynced a file with unsynced data"
	case engine.MutantFdatasync:
		return "no program called fdatasync on a file with unsynced data"
	case engine.MutantOsync:
		return "no program wrote through O_SYNC or O_DSYNC"
	case engine.MutantDirsync:
		if !strict {
			return "no directory fsync had anything to make durable (without strict_dirs, directory entries are durable at once)"
		}
		return "no program fsynced a directory with entries pending"
	case engine.MutantRename:
		if !strict {
			return "no crash found a rename pending (without strict_dirs, renames are durable at once)"
		}
		return "no crash found a rename that the fsync of its directory had not made durable yet"
	}
	return "nothing to weaken"
}

// ordinal writes 1st, 2nd, 3rd, 4th, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// withMutant gives a command about one seed's run the -mutant flag, to
// look at a seed as seedfall mutate ran it.
func (a *seedArgs) withMutant() *seedArgs {
	a.mutant = a.fs.String("mutant", "", "run under this mutant, as seedfall mutate does: "+strings.Join(engine.MutantKinds, ", ")+", or NAME/K (without -faults, the seed draws its own faults)")
	return a
}

// readMutant reads -mutant, when the command has it.
func (a *seedArgs) readMutant() error {
	if a.mutant == nil || *a.mutant == "" {
		return nil
	}
	m, err := engine.ParseMutant(*a.mutant)
	if err != nil {
		return fmt.Errorf("-mutant: %v", err)
	}
	a.mut = m
	return nil
}
