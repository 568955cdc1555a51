// Package sim is the guest API of seedfall: programs under test import it to
// learn whether they run inside a simulated world and to tell the simulator
// about their progress. Outside seedfall (a native build, or SEEDFALL unset)
// every call is a harmless no-op, so the same program runs unchanged in
// production.
//
// Clients record what they do to the system under test, for seedfall to
// check when the run is about to pass: single-key operations with Put, Get
// and Invoke, checked for linearizability (history.go), and transactions
// with Txn, whose micro-operations Append, ReadList, Write and Read, and
// whose read results List, Value and None, are checked for the isolation
// anomalies the world's consistency models forbid (txn.go):
//
//	t := sim.Txn(sim.Append(3, 7), sim.ReadList(4)) // as the transaction begins
//	list, err := store.Run(...)
//	switch {
//	case err == nil:
//		t.Ok(sim.List(list...)) // committed: one result per read, in order
//	case errors.Is(err, ErrAborted):
//		t.Fail() // certainly not committed
//	} // otherwise the outcome is unknown: leave it open
//
// The module has no dependencies on purpose: adding it to a program under
// test must not pull anything else into that program's go.mod.
//
// Host ABI (the "seedfall" wasm import module):
//
//	setup_complete()
//	buggify(site_ptr i32, site_len i32, prob_bits i64) -> i32
//	quiet_for(ns i64)
//
// buggify passes the site's "file:line" as bytes in guest memory and the
// firing probability as the bits of a float64; it returns 1 when the site
// fires at this hit and 0 when it does not.
package sim

import (
	"os"
	"runtime"
	"strconv"
	"time"
)

// Enabled reports whether the program runs as a node of a seedfall world.
// seedfall sets SEEDFALL=1 in every node's environment.
func Enabled() bool { return os.Getenv("SEEDFALL") == "1" }

// Node returns the name of this node in the world (SEEDFALL_NODE), or ""
// outside seedfall.
func Node() string { return os.Getenv("SEEDFALL_NODE") }

// SetupComplete tells seedfall that the node finished starting up (listening,
// recovered its data, ...). seedfall records it in the run's trace; with
// "faults_after_setup" it holds back every fault until the first node calls it.
// Outside seedfall it does nothing.
func SetupComplete() {
	if Enabled() {
		setupComplete()
	}
}

// QuietFor asks seedfall to stop injecting faults for d of virtual time
// from now: partitions, clogs, slowdowns and pauses end at once, crashed
// nodes restart at once, and no new fault starts until d has passed. A
// workload calls it before a check that needs a healthy cluster ("after
// the faults stop, every replica converges within 5s"). Outside seedfall it
// does nothing.
func QuietFor(d time.Duration) {
	if Enabled() && d > 0 {
		quietFor(int64(d))
	}
}

// BuggifyProb is how often an enabled Buggify site fires: one hit in twenty.
const BuggifyProb = 0.05

// Buggify reports whether the calling site should take its rare path now.
// Under seedfall with "buggify": true, each site (its file:line) is enabled
// in a quarter of runs and then fires at BuggifyProb of its hits; every
// firing is recorded in the run's schedule and replays exactly. Outside
// seedfall, or without "buggify", it returns false.
func Buggify() bool { return buggify(BuggifyProb) }

// BuggifyWithProb is Buggify with the site's own firing rate p (0 to 1).
func BuggifyWithProb(p float64) bool { return buggify(p) }

// buggify names its caller's caller as the site: -trimpath builds make the
// name the same on every machine.
func buggify(p float64) bool {
	if !Enabled() {
		return false
	}
	_, file, line, ok := runtime.Caller(2)
	if !ok {
		return false
	}
	return buggifyHost(file+":"+strconv.Itoa(line), p)
}
