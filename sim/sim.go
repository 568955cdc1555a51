// Package sim is the guest API of seedfall: programs under test import it to
// learn whether they run inside a simulated world and to tell the simulator
// about their progress. Outside seedfall (a native build, or SEEDFALL unset)
// every call is a harmless no-op, so the same program runs unchanged in
// production.
//
// The module has no dependencies on purpose: adding it to a program under
// test must not pull anything else into that program's go.mod.
package sim

import "os"

// Enabled reports whether the program runs as a node of a seedfall world.
// seedfall sets SEEDFALL=1 in every node's environment.
func Enabled() bool { return os.Getenv("SEEDFALL") == "1" }

// Node returns the name of this node in the world (SEEDFALL_NODE), or ""
// outside seedfall.
func Node() string { return os.Getenv("SEEDFALL_NODE") }

// SetupComplete tells seedfall that the node finished starting up (listening,
// recovered its data, ...). seedfall records it in the run's trace; with
// "faults_after_setup" (not built yet) it will hold back faults until then.
// Outside seedfall it does nothing.
func SetupComplete() {
	if Enabled() {
		setupComplete()
	}
}
