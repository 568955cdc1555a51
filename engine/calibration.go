package engine

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/world"
)

// pct's calibration run (pctauto.go): made by the runner, once per
// Prepared, for the preempt family that sizes its change points from it.

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
	if _, err := p.run(ctx, RunOptions{Seed: pctCalibrationSeed}, calls, nil); err != nil {
		return nil, fmt.Errorf("pct's calibration run (seed %d under strategy none, which sizes preempt.steps \"auto\"): %w; set preempt.steps to a count to run without it", pctCalibrationSeed, err)
	}
	c.calls, c.wall, c.done = calls, time.Since(start), true
	return calls, nil
}
