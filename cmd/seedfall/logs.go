package main

import (
	"bufio"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/trace"
)

func logsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logs", stderr)
	cfg := worldFlags(fs)
	node := fs.String("node", "", "print only this program's lines")
	tail := fs.Int("tail", 0, "print only the last N lines (0: all)")
	sa := seedFlags(fs, "print the logs of").withMutant()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx := callContext(stderr)
	s, sch, _, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	if *node != "" && s.w.Program(*node) == nil {
		var names []string
		for _, p := range s.w.Programs() {
			names = append(names, p.Name)
		}
		return fmt.Errorf("-node %q: no such program in %s (it has %v)", *node, s.cfg, names)
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *sa.seed, Schedule: sch, Mutant: sa.mut})
	if err != nil {
		return err
	}
	// A line at a time: a run's lines can be 64 MiB (docs/limits.md).
	w := bufio.NewWriter(stdout)
	lines := res.Lines
	if total := len(tailLines(lines, *node, len(lines))); *tail > 0 && total > *tail {
		lines = tailLines(lines, *node, *tail)
		fmt.Fprintf(w, "(the last %d of %d lines; a tail of 0 gives them all)\n", *tail, total)
	}
	if err := trace.Write(w, lines, *node); err != nil {
		return err
	}
	verdict := "PASS"
	if !res.Passed {
		verdict = "FAIL " + res.Class + ":"
	}
	fmt.Fprintf(w, "%s %s\n", verdict, res.Reason)
	return w.Flush()
}
