package engine

import (
	"fmt"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Crashes: a node killed as a power cut would kill it, its disk crashed
// with it, and restarted later. Timed crashes come from crash_per_sec;
// the disk family crashes a node in the middle of a disk operation
// (crash_io) through links.crashInCall.

func init() {
	register(familyDef{name: "crash", open: openCrash})
}

// crashFamily is the crash family of one run. It has no state of its own:
// what a crash leaves is the node's.
type crashFamily struct {
	*env
}

func openCrash(e *env) (family, error) {
	c := &crashFamily{env: e}
	return family{plan: c.plan, apply: c.apply, crashInCall: c.crashInCall}, nil
}

// crashable lists the programs crash_per_sec applies to: nodes, and
// workloads under include_workload or their own "faults": true.
func (c *crashFamily) crashable() []string {
	var names []string
	for _, n := range c.nodeList() {
		if c.w.NodeFaults(n.prog.Program) {
			names = append(names, n.prog.Name)
		}
	}
	return names
}

// plan draws every node's crashes from crash_per_sec.
func (c *crashFamily) plan() []faults.Fault {
	return faults.PlanCrashes(c.seed, faults.CrashPlan{
		Nodes:        c.crashable(),
		PerSec:       c.w.Faults.CrashPerSec,
		RestartAfter: [2]time.Duration{c.w.Faults.RestartAfter.Min, c.w.Faults.RestartAfter.Max},
		Horizon:      c.w.Duration,
	})
}

// apply kills a node that is up and schedules its restart.
func (c *crashFamily) apply(f faults.Fault) bool {
	if f.Kind != faults.Crash {
		return false
	}
	n := c.byName(f.Node)
	if n == nil || !n.up {
		return true
	}
	c.record(f)
	c.crash(n, f.Until)
	return true
}

// crash kills a node now, as a power cut would, and restarts it at until.
// It runs on the scheduler, while the node waits.
func (c *crashFamily) crash(n *node, until time.Duration) {
	n.crash = true
	c.kill(n.proc)
	c.crashed(n, until)
}

// crashInCall crashes n from inside one of its own host calls (a crash in
// the middle of a disk operation): the same as crash, then the guest
// unwinds and never returns from the call.
func (c *crashFamily) crashInCall(n *node, until time.Duration) {
	n.crash = true
	c.crashed(n, until)
	panic(sys.NewExitError(wasi.ExitKilled))
}

// crashed is what a crash does to the world once the process is gone.
func (c *crashFamily) crashed(n *node, until time.Duration) {
	n.up = false
	n.served = true // it ran until a fault stopped it: no "never served" (run.go)
	n.wp.FlushOutput()
	if c.net != nil {
		c.net.HostDown(n.host)
	}
	c.links.crashed(n)
	c.event(n, fmt.Sprintf("crash, restart at %v", until))
	n.restartAt = int64(until)
	inc := n.inc
	c.at(int64(until), func() {
		if !c.over() && !n.up && n.inc == inc {
			c.start(n)
		}
	})
}
