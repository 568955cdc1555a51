package engine

import (
	"fmt"
	"strings"

	"github.com/seedfall/seedfall/engine/world"
)

// pct sizes its change points from the calls each node really makes
// (preempt.steps "auto", the default). The spec draws them over each
// node's first 1,048,576 counted calls (world.SpecSteps), but most nodes
// make far fewer, so most change points fell after the node's last call
// and never fired. Under "auto" each node's span is the count of calls it
// made in a calibration run: seed pctCalibrationSeed of the same prepared
// world with no schedule under strategy none, everything else the same.
// That count is a pure function of the world and its binaries, so every
// seed's change points stay a pure function of (world, binaries, seed).
// The calibration runs once per Prepared, whichever seed needs it first,
// while seeds that run in parallel wait for it.

// pctCalibrationSeed is the seed of the calibration run.
const pctCalibrationSeed = 1

// span is the number of counted calls the node's change points are drawn
// over: preempt.steps, or under "auto" the node's calls in the
// calibration run. A node that made none there (it never started: a
// finally check after a failed seed 1, say) gets the most calls any node
// made, or world.SpecSteps if none made any; note then says which.
func (pr *preemptFamily) span(name string) (span uint64, note string) {
	if pr.w.Preempt.Steps != world.StepsAuto {
		return uint64(pr.w.Preempt.Steps), ""
	}
	if n := pr.calib[name]; n > 0 {
		return n, ""
	}
	for _, n := range pr.calib {
		span = max(span, n)
	}
	if span == 0 {
		return world.SpecSteps, "no node made a call there: the spec's default"
	}
	return span, "it made no call there: the most of any node"
}

// end writes the trace's last line under pct: each node's counted
// calls, so that a user can size preempt.steps, and what the change points
// were drawn over. In the calibration run it hands the counts over.
func (pr *preemptFamily) end() {
	if pr.calls != nil {
		for name, pn := range pr.nodes {
			pr.calls[name] = pn.calls()
		}
		return
	}
	if pr.strategy != world.StrategyPCT {
		return
	}
	var b strings.Builder
	b.WriteString("pct:")
	sep := " "
	for _, n := range pr.nodeList() { // world order
		if pn := pr.nodes[n.prog.Name]; pn != nil {
			fmt.Fprintf(&b, "%s%s %d calls", sep, n.prog.Name, pn.calls())
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" no node made a counted call")
	}
	p := pr.w.Preempt
	switch {
	case p.Depth <= 1:
		b.WriteString("; depth 1: no change points")
	case p.Steps != world.StepsAuto:
		fmt.Fprintf(&b, "; change points are drawn over each node's first %d calls (preempt.steps)", p.Steps)
	default:
		fmt.Fprintf(&b, "; change points are drawn over each node's calls in the calibration run (seed %d, strategy none):", pctCalibrationSeed)
		sep = " "
		for _, n := range pr.nodeList() {
			span, note := pr.span(n.prog.Name)
			fmt.Fprintf(&b, "%s%s %d", sep, n.prog.Name, span)
			if note != "" {
				fmt.Fprintf(&b, " (%s)", note)
			}
			sep = ", "
		}
	}
	pr.worldEvent(b.String())
}
