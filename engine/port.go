package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/sched"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
)

// Fault families. A family is one group of fault kinds (crashes, network,
// disk, node faults, buggify, preemption, mutants) or of checks that ride
// on the same hooks (history, properties, CPU time). The runner opens each
// family once per run and hands it an env: the port, through which it
// reads the clock, schedules events, draws seeds, finds nodes and writes
// the trace, and the run's fixed facts. A family keeps its own state; it
// never sees the runner. What it needs of another family is a hook in
// links, which the runner sets up; what the runner needs of it is a hook
// in the family it returns. The files of the families (crash.go,
// netfaults.go, diskfaults.go, nodefaults.go, buggify.go, preempt.go,
// mutant.go, history.go, properties.go, cpu.go)
// call nothing of the runner's but the port.

// port is what a family may ask of the run it is part of.
type port interface {
	// now is the virtual time.
	now() int64
	// at runs f at virtual time t, after what is already due then.
	at(t int64, f func())
	// seedFor is the seed a stream draws from now: the run's seed,
	// re-keyed by the branches applied so far (branch.go).
	seedFor(stream string) uint64
	// nodeList is every program of the run, in world order.
	nodeList() []*node
	// byName is the program named name, or nil.
	byName(name string) *node
	// event and worldEvent write an event line to the trace, about one
	// program or the whole world.
	event(n *node, text string)
	worldEvent(text string)
	// note writes an event line about who ("net", say) to the trace.
	note(who, text string)
	// record adds a fault that happened to the run's schedule.
	record(f faults.Fault)
	// faultsActive reports whether a fault may start now.
	faultsActive() bool
	// over reports whether the run has its verdict.
	over() bool
	// heals counts the heals so far, so that the planned end of a fault
	// that a heal already ended can do nothing.
	heals() int
	// fail ends the run with a verdict of class about n (nil: none).
	fail(class string, n *node, reason string)
	// start launches a new incarnation of n; kill stops a process now.
	start(n *node)
	kill(p *sched.Proc)
}

// env is what a family is given when a run opens it.
type env struct {
	port
	w     *world.World     // the world as this run has it (swarm's choices made)
	seed  uint64           // the run's seed
	given *faults.Schedule // a replay's schedule; nil when faults are drawn
	net   *netsim.Network  // the simulated network; nil without net_overlay
	hosts int              // the number of programs, nodes to come included
	links *links

	mutant Mutant // RunOptions.Mutant
	// calls is set in pct's calibration run, which fills it (preempt.go).
	calls map[string]uint64
	// calibrate returns each node's counted calls in pct's calibration
	// run, running it first if no run did yet (preempt.go).
	calibrate func() (map[string]uint64, error)
	// declared lists the properties the programs' source declares
	// (properties.go).
	declared func() []Property
}

// links are what one family needs of another, set up by the runner before
// any program starts.
type links struct {
	// crashInCall crashes n from inside one of its own host calls, to
	// restart at until (the crash family, for crash_io). It does not
	// return.
	crashInCall func(n *node, until time.Duration)
	// crashed tells every family that n has just crashed, then crashes
	// its disk (the disk family's crash model, or a plain crash).
	crashed func(n *node)
}

// family is what a family gives the runner when a run opens it. Each hook
// is optional. Families open and run in the order of their names, so a run
// never depends on the order init functions ran in.
type family struct {
	disk    func(n *node, o *disk.Options)      // per node, before its disk is made
	process func(n *node, p *wasi.Process)      // per incarnation, before it runs
	plan    func() []faults.Fault               // timed faults drawn from the world's rates
	apply   func(f faults.Fault) (handled bool) // a planned fault's moment has come
	heal    func(why string)                    // end every fault in force now; why ends each trace line
	// check runs when the run is about to pass; a non-empty class fails
	// it instead (a property that never held, a history that is not
	// linearizable). n, if set, is the program the verdict is about.
	check func() (class string, n *node, reason string)
	// crash hears that a program has just crashed, before its disk does.
	crash func(n *node)
	// result adds the family's findings to a finished run's result.
	result func(res *Result)
	// end has the last word in the trace: the run is over and its
	// processes are gone, but the digest is not computed yet.
	end func()
	// advance: virtual time is about to move on from now, every process
	// parked. over: the run has its verdict; its processes are not gone yet.
	advance func(now int64)
	over    func()
	// keep is what a checkpoint keeps of the family's state; a fork from
	// the checkpoint gives it back to resume at the checkpoint's moment.
	keep   func() any
	resume func(any)

	// Hooks that the runner hands on to the run or to other families.
	crashInCall func(n *node, until time.Duration)              // crash: links.crashInCall
	crashDisk   func(n *node)                                   // disk: how a node's disk crashes (default n.disk.Crash())
	datagram    func(from, to int, seq uint64) (drop, dup bool) // net: UDP loss and duplication
	rekey       func(on func(stream string) bool)               // a branch re-keyed the streams on names: restart the long-lived ones
	ended       func(n *node, wp *wasi.Process)                 // an incarnation's guest has ended
	copied      func(n *node, m api.Module)                     // a fork's guest now runs as its copy m (checkpoint.go)
	clocks      nodeClocks                                      // node: slowdowns and wall clocks
}

// nodeClocks is what the runner reads of the node family: how slow each
// host runs and how far its wall clock is off.
type nodeClocks interface {
	// stretch scales a delay on host h by its slowdown factor.
	stretch(h int, d int64) int64
	// clock is host h's slowdown factor (1: none) and wall clock offset.
	clock(h int) (slow float64, wall int64)
}

// familyDef is a registered family: its name and how a run opens it.
type familyDef struct {
	name string
	// open makes the family's state for one run, before any program
	// starts; an error ends the run before it begins.
	open func(e *env) (family, error)
}

var families []familyDef

// register adds a fault family; call it from an init function.
func register(f familyDef) {
	families = append(families, f)
	slices.SortFunc(families, func(a, b familyDef) int { return strings.Compare(a.name, b.name) })
}

type node struct {
	prog  *Program
	host  int
	disk  *disk.Disk
	etc   *disk.Disk
	inc   int
	up    bool
	done  bool // exited 0 (a workload that finished, a node that ended)
	crash bool // being killed by a crash
	// ended is how the last incarnation ended by itself ("exited 1",
	// "trapped: ..."), for a program that is down and stays down.
	ended string
	// failedStarts counts the incarnations that exited with an error,
	// each the same way (lastWords: the last line each printed, numbers
	// masked, and the status), while no incarnation of the node did
	// anything else (served: exited otherwise, or ran until a crash): a
	// node that never served (neverServed).
	failedStarts int
	lastWords    string
	served       bool
	// quietStarts counts the failed starts in a row, the same way, while
	// nothing was faulted (quietFailure); quietSince is when the first of
	// them exited. Enough of them end the run (giveUp).
	quietStarts int
	quietSince  int64
	gaveUp      bool // the run ended at its last failed start (its verdict says why)
	// restartAt is when a program that is down comes back (0: it does not).
	restartAt int64
	proc      *sched.Proc
	wp        *wasi.Process
	rst       rng.Stream // supervised restarts
	mem       *memGuard  // the current incarnation's memory_limit
	img       *bootImage // the snapshot it started from; nil: it booted cold
}

// running is the program n's current incarnation runs: its upgrade_to from
// the first restart on.
func (n *node) running() *Program {
	if n.inc > 1 && n.prog.Upgrade != nil {
		return n.prog.Upgrade
	}
	return n.prog
}

func (n *node) label() string { return fmt.Sprintf("%s#%d", n.prog.Name, n.inc) }

// poisson calls at for each event of a Poisson process of rate perSec over
// [0, horizon), drawing the waits from s.
func poisson(s *rng.Stream, perSec float64, horizon time.Duration, at func(t time.Duration)) {
	if perSec <= 0 {
		return
	}
	for t := s.Exp(perSec); t < horizon; t += s.Exp(perSec) {
		at(t)
	}
}
