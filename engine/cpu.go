package engine

import (
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
)

// cpuQuantum is the most virtual time a node computes before it gives the
// other nodes their turn (wasi.CPU.Quantum): a busy loop that never waits
// lets the world go on every 100µs of its own time.
const cpuQuantum = 100_000

func init() {
	register(familyDef{name: "cpu", open: func(e *env) (family, error) {
		return family{process: func(n *node, p *wasi.Process) { cpuProcess(e, n, p) }}, nil
	}})
	Implemented["cpu"] = true
}

// cpuProcess makes the node's work take virtual time (world.CPU), drawing
// its jitter from a stream of the incarnation's own.
func cpuProcess(e *env, n *node, p *wasi.Process) {
	c := e.w.CPU
	if c.NsPerCall <= 0 || !n.running().counted {
		return
	}
	p.CPU = &wasi.CPU{
		NsPerCall: c.NsPerCall,
		Jitter:    c.Jitter,
		Stream:    rng.ForName(e.seedFor("cpu"), "cpu", n.prog.Name, uint64(n.inc)),
		Quantum:   cpuQuantum,
	}
}

// cpuCap is the largest count of calls to load: the count must run out at
// least once a quantum, so that a node computing without host calls still
// pays for its work.
func cpuCap(c world.CPU) uint64 {
	if c.NsPerCall <= 0 {
		return world.MaxPreemptCalls
	}
	return uint64(max(1, min(float64(world.MaxPreemptCalls), cpuQuantum/c.NsPerCall)))
}
