package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/trace"
)

func logsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logs", stderr)
	cfg := worldFlags(fs)
	node := fs.String("node", "", "print only this program's lines")
	tail := fs.Int("tail", 0, "print only the last N lines (0: all)")
	asJSON := fs.Bool("json", false, "print the lines and the verdict as JSON")
	sa := seedFlags(fs, "print the logs of").withMutant()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	l, err := seedLogs(ctx, s, logsOptions{seed: *sa.seed, sch: sch, from: from, mut: sa.mut, node: *node, tail: *tail})
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(l.report())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return l.print(stdout)
}

// logsOptions say which seed's run logs shows, and which of its lines.
type logsOptions struct {
	seed uint64
	sch  *faults.Schedule // nil: the faults the seed draws
	from string           // the file sch came from, for the result
	mut  engine.Mutant
	node string // only this program's lines
	tail int    // only the last tail lines; 0: all
}

// logsResult is a seed's run and the lines of it that logs shows.
type logsResult struct {
	res   *engine.Result
	from  string
	node  string
	lines []trace.Line // what trace.Write shows of them, for node
	total int          // the lines of node, or of the run, before the tail
	cut   bool         // the tail left out some of them
}

// seedLogs runs a seed and keeps the lines that logs shows: those of node,
// or all, and the last tail of them when tail is above 0.
func seedLogs(ctx context.Context, s *session, o logsOptions) (*logsResult, error) {
	if o.node != "" && s.w.Program(o.node) == nil {
		var names []string
		for _, p := range s.w.Programs() {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("-node %q: no such program in %s (it has %v)", o.node, s.cfg, names)
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: o.seed, Schedule: o.sch, Mutant: o.mut})
	if err != nil {
		return nil, err
	}
	l := &logsResult{res: res, from: o.from, node: o.node, lines: res.Lines}
	if l.total = len(tailLines(res.Lines, o.node, len(res.Lines))); o.tail > 0 && l.total > o.tail {
		l.lines, l.cut = tailLines(res.Lines, o.node, o.tail), true
	}
	return l, nil
}

// print writes the lines, a line at a time (a run's lines can be 64 MiB,
// docs/limits.md), then the verdict.
func (l *logsResult) print(stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	if l.cut {
		fmt.Fprintf(w, "(the last %d of %d lines; a tail of 0 gives them all)\n", len(l.lines), l.total)
	}
	if err := trace.Write(w, l.lines, l.node); err != nil {
		return err
	}
	verdict := "PASS"
	if !l.res.Passed {
		verdict = "FAIL " + l.res.Class + ":"
	}
	fmt.Fprintf(w, "%s %s\n", verdict, l.res.Reason)
	return w.Flush()
}

// logsReport is logs -json's object, and seedfall_logs's structured result:
// the run as replay -json gives it, and the lines logs prints.
type logsReport struct {
	results.Line
	Lines      []string `json:"lines"`
	TotalLines int      `json:"total_lines"` // before the tail: more than lines when it cut some
}

func (l *logsResult) report() logsReport {
	rep := logsReport{Line: results.NewLine(l.res, l.from), Lines: []string{}, TotalLines: l.total}
	for _, line := range l.lines {
		if l.node == "" || line.Node == l.node || line.Gap() { // as trace.Write shows them
			rep.Lines = append(rep.Lines, line.String())
		}
	}
	return rep
}
