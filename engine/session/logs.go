package session

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/trace"
)

// LogsOptions say which seed's run logs shows, and which of its lines.
type LogsOptions struct {
	Seed     uint64
	Schedule *faults.Schedule // nil: the faults the seed draws
	From     string           // the file Schedule came from, for the result
	Mutant   engine.Mutant
	Node     string // only this program's lines
	Tail     int    // only the last Tail lines; 0: all
}

// Logs is a seed's run and the lines of it that logs shows.
type Logs struct {
	res   *engine.Result
	from  string
	node  string
	lines []trace.Line // what trace.Write shows of them, for node
	total int          // the lines of node, or of the run, before the tail
	cut   bool         // the tail left out some of them
}

// Logs runs a seed and keeps the lines that logs shows: those of node,
// or all, and the last tail of them when tail is above 0.
func (s *Session) Logs(ctx context.Context, o LogsOptions) (*Logs, error) {
	if o.Node != "" && s.w.Program(o.Node) == nil {
		var names []string
		for _, p := range s.w.Programs() {
			names = append(names, p.Name)
		}
		return nil, fmt.Errorf("-node %q: no such program in %s (it has %v)", o.Node, s.cfg, names)
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: o.Seed, Schedule: o.Schedule, Mutant: o.Mutant})
	if err != nil {
		return nil, err
	}
	l := &Logs{res: res, from: o.From, node: o.Node, lines: res.Lines}
	if l.total = len(engine.TailLines(res.Lines, o.Node, len(res.Lines))); o.Tail > 0 && l.total > o.Tail {
		l.lines, l.cut = engine.TailLines(res.Lines, o.Node, o.Tail), true
	}
	return l, nil
}

// Write writes the lines, a line at a time (a run's lines can be 64 MiB,
// docs/limits.md), then the verdict.
func (l *Logs) Write(stdout io.Writer) error {
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

// LogsReport is logs -json's object, and seedfall_logs's structured result:
// the run as replay -json gives it, and the lines logs prints.
type LogsReport struct {
	results.Line
	Lines      []string `json:"lines"`
	TotalLines int      `json:"total_lines"` // before the tail: more than lines when it cut some
}

func (l *Logs) Report() LogsReport {
	rep := LogsReport{Line: results.NewLine(l.res, l.from), Lines: []string{}, TotalLines: l.total}
	for _, line := range l.lines {
		if l.node == "" || line.Node == l.node || line.Gap() { // as trace.Write shows them
			rep.Lines = append(rep.Lines, line.String())
		}
	}
	return rep
}
