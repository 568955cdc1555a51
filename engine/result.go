package engine

import (
	"time"

	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// Verdict classes of a failed run.
const (
	ClassWorkload        = "workload"        // a workload exited non-zero
	ClassFinally         = "finally"         // the finally check exited non-zero
	ClassPanic           = "panic"           // a program panicked (exit status 2)
	ClassExit            = "exit"            // a node exited with an error and is not supervised
	ClassTrap            = "trap"            // a program trapped (out of bounds, unreachable, ...)
	ClassMemory          = "memory"          // a program ran out of memory: it asked for more than its memory_limit
	ClassDeadlock        = "deadlock"        // everything is blocked and nothing can wake it
	ClassWatchdog        = "watchdog"        // a program ran too long in real time without yielding
	ClassLiveness        = "liveness"        // with liveness.within: the workloads did not finish in time once faults stopped
	ClassLinearizability = "linearizability" // the operations recorded with sim.Put, Get and Invoke are not linearizable
	ClassIsolation       = "isolation"       // the transactions recorded with sim.Txn show an anomaly the world's consistency models forbid
	ClassProperty        = "property"        // a sim.Always or AlwaysOrUnreachable was false, or an Unreachable was reached
	// ReasonHorizon is the reason of a run that passed by reaching its
	// horizon with a workload still running: its check never ran.
	ReasonHorizon = "hit the time horizon"
	// ClassInconclusive is no failure and no pass: a run of RunOptions.Check
	// that ended at its horizon before every workload exited, so its check
	// never ran.
	ClassInconclusive = "inconclusive"
)

// RunOptions say which seed to run and, for a replay, which faults.
type RunOptions struct {
	Seed uint64
	// Schedule, if set, is applied exactly instead of drawing faults from
	// the world's rates.
	Schedule *faults.Schedule
	// Check makes this run the check of a saved schedule (a pin, a replay
	// of a failure after the code changed): one that ends at its horizon
	// before every workload exited never reached the workload's check,
	// and is inconclusive (ClassInconclusive, not passed), not a pass.
	Check bool
	// StopAt, if positive, ends the run at that virtual time, passed, so
	// its disks can be inspected as they were then (seedfall inspect -at).
	StopAt time.Duration
	// KeepDisks fills Result.Disks.
	KeepDisks bool
	// State fills Result.State with the world as the run ends (at StopAt,
	// for seedfall debug).
	State bool
	// StatesAt fills Result.States with the world at each of these
	// moments the run reaches, as State shows it at a StopAt there (after
	// what was due then): several moments of seedfall debug in one run.
	StatesAt []time.Duration
	// GuestProfile, if set, hears where the run's guest time goes
	// (guestprof.go). The run's trace and digest are the same without it.
	GuestProfile *GuestProfile
	// Mutant, if set, weakens one durability guarantee (mutant.go).
	Mutant Mutant
	// ColdBoot makes every start of a program run its Go runtime's and
	// packages' init, instead of starting from the snapshot taken after
	// them (snapshot.go): slower, and the trace differs (the runtime's
	// random state is drawn differently); for comparison.
	ColdBoot bool
	// NoPause makes guests wait inside their host calls instead of
	// pausing (wasi.Process.NoPause): for comparison; the trace is the
	// same.
	NoPause bool
	// Checkpoints asks for a Checkpoint at each of these moments
	// (Result.Checkpoints), from which forks can start (checkpoint.go).
	Checkpoints []time.Duration
	// From makes this run a fork of a checkpoint's run: the world as it
	// was at the checkpoint is rebuilt by playing the run's tapes back,
	// and only from then on do the guests run. The schedule must agree
	// with the checkpoint's before it; the trace is the trace of the
	// same run from scratch.
	From *Checkpoint
}

// Result is what one run of one seed gives.
type Result struct {
	Seed   uint64
	Passed bool
	Class  string // "" when passed
	Reason string
	// Stopped: the run reached RunOptions.StopAt and was stopped there
	// to be inspected. It is passed, but nothing was checked: it says
	// nothing of whether the seed passes.
	Stopped bool
	Node    string // the program the verdict is about, if any
	SimNs   int64  // virtual time at the end
	WallNs  int64  // real time the run took (never part of the digest)
	Steps   uint64 // scheduler steps
	Pauses  uint64 // times a guest paused to wait (never part of the digest)
	// Checkpoints are RunOptions.Checkpoints' (a Checkpoint's Reason
	// says if no fork can start from it).
	Checkpoints []*Checkpoint
	Digest      string // sha256 of the trace and the verdict
	Schedule    *faults.Schedule
	Lines       []trace.Line
	// Heals are the moments (virtual ns, in time order) at which every
	// fault in force ended at once: faults stopped for good (liveness's
	// recovery phase, the finally check), or a program asked for a quiet
	// period (sim.QuietFor).
	Heals []int64

	Disks   []NodeDisk      // with RunOptions.KeepDisks: every program's disk at the end
	State   *State          // with RunOptions.State: the world at the end
	States  []*State        // with RunOptions.StatesAt: the world at each moment the run reached, in order
	History *HistorySummary // operations recorded with sim.Put, Get and Invoke and transactions with sim.Txn, and the checks' verdicts; nil if none

	Properties []Property // sim properties this run reached or its programs declare (properties.go)
	// Guidance is each time a rich assertion's operands came closer than
	// before in the run (properties.go).
	Guidance []Guidance
	// Coverage is which blocks of the user's code ran, and when each ran
	// first, in a world with "coverage" on (coverage.go); nil otherwise.
	Coverage *cover.Run

	// Mutant is RunOptions.Mutant, and Weakened how many calls and
	// renames it weakened. Reach counts what any mutant could have
	// weakened, with or without one (mutant.go).
	Mutant   Mutant
	Weakened uint64
	Reach    disk.Reach
	// Moved says, for a replay of a schedule, each fault that fires at an
	// operation number and hit another file than the schedule names: the
	// program's operations changed since it was saved.
	Moved []string
}

// NodeDisk is one program's disk at the end of a run, for inspection.
type NodeDisk struct {
	Node string
	Disk *disk.Disk
}
