package engine

import (
	"slices"

	"github.com/seedfall/seedfall/engine/trace"
)

// TailLines returns the last n output lines of a program, or of the whole
// run when node is "".
func TailLines(lines []trace.Line, node string, n int) []trace.Line {
	var out []trace.Line
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if node == "" || lines[i].Node == node {
			out = append(out, lines[i])
		}
	}
	slices.Reverse(out)
	return out
}

// FailureLines returns n lines of output that show why res failed: the
// last lines of the program it is about, or of the whole run, unless the
// run points at a line to show from (CauseLine). Every skin prints these
// under a failing verdict.
func (res *Result) FailureLines(n int) []trace.Line {
	i := res.CauseLine()
	if i < 0 {
		return TailLines(res.Lines, res.Node, n)
	}
	var out []trace.Line
	for _, l := range res.Lines[i:] {
		if len(out) == n {
			break
		}
		if res.Node == "" || l.Node == res.Node {
			out = append(out, l)
		}
	}
	return out
}
