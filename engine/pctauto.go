package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

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

// pctCalibration is a Prepared's calibration run: each node's counted
// calls, made once and kept.
type pctCalibration struct {
	mu    sync.Mutex
	done  bool
	calls map[string]uint64 // by program name; a node that never started is missing
	wall  time.Duration     // the real time it took (never in a trace)
}

// calibrationWorld is w under strategy none, as the calibration runs it.
func calibrationWorld(w *world.World) *world.World {
	c := *w
	c.Preempt.Strategy, c.Preempt.Interleave = world.StrategyNone, false
	return &c
}

// pctCalls returns each node's counted calls in the calibration run,
// running it first if no run of p did yet. A calibration that fails (the
// context is cancelled) is not kept: the next run tries again.
func (p *Prepared) pctCalls(ctx context.Context) (map[string]uint64, error) {
	c := &p.pct
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.calls, nil
	}
	start := time.Now()
	calls := map[string]uint64{}
	if _, err := p.run(ctx, RunOptions{Seed: pctCalibrationSeed}, calls); err != nil {
		return nil, fmt.Errorf("pct's calibration run (seed %d under strategy none, which sizes preempt.steps \"auto\"): %w; set preempt.steps to a count to run without it", pctCalibrationSeed, err)
	}
	c.calls, c.wall, c.done = calls, time.Since(start), true
	return calls, nil
}

// span is the number of counted calls the node's change points are drawn
// over: preempt.steps, or under "auto" the node's calls in the
// calibration run. A node that made none there (it never started: a
// finally check after a failed seed 1, say) gets the most calls any node
// made, or world.SpecSteps if none made any; note then says which.
func (pr *preemptRun) span(w *world.World, name string) (span uint64, note string) {
	if w.Preempt.Steps != world.StepsAuto {
		return uint64(w.Preempt.Steps), ""
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

// preemptEnd writes the trace's last line under pct: each node's counted
// calls, so that a user can size preempt.steps, and what the change points
// were drawn over. In the calibration run it hands the counts over.
func (r *runner) preemptEnd() {
	pr := r.pre
	if r.calls != nil {
		for name, pn := range pr.nodes {
			r.calls[name] = pn.calls()
		}
		return
	}
	if pr.strategy != world.StrategyPCT {
		return
	}
	var b strings.Builder
	b.WriteString("pct:")
	sep := " "
	for _, n := range r.nodes { // world order
		if pn := pr.nodes[n.prog.Name]; pn != nil {
			fmt.Fprintf(&b, "%s%s %d calls", sep, n.prog.Name, pn.calls())
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" no node made a counted call")
	}
	p := r.w.Preempt
	switch {
	case p.Depth <= 1:
		b.WriteString("; depth 1: no change points")
	case p.Steps != world.StepsAuto:
		fmt.Fprintf(&b, "; change points are drawn over each node's first %d calls (preempt.steps)", p.Steps)
	default:
		fmt.Fprintf(&b, "; change points are drawn over each node's calls in the calibration run (seed %d, strategy none):", pctCalibrationSeed)
		sep = " "
		for _, n := range r.nodes {
			span, note := pr.span(r.w, n.prog.Name)
			fmt.Fprintf(&b, "%s%s %d", sep, n.prog.Name, span)
			if note != "" {
				fmt.Fprintf(&b, " (%s)", note)
			}
			sep = ", "
		}
	}
	r.worldEvent(b.String())
}
