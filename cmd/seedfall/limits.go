package main

import (
	"fmt"
	"runtime"

	"github.com/seedfall/seedfall/engine/session"
)

// maxParallel bounds -parallel (session.MaxParallel).
const maxParallel = session.MaxParallel

// checkParallel says what is wrong with a -parallel value.
func checkParallel(n int) error {
	if n < 1 || n > maxParallel {
		return fmt.Errorf("-parallel %d: want from 1 to %d worlds at once (the default is one per core)", n, maxParallel)
	}
	return nil
}

// worldsAtOnce gives Go one processor per world the command runs at once.
// A world is one goroutine group passing a baton: with idle processors
// around, every handoff wakes another OS thread for nothing, which made
// one world about 1.5 times slower with 2 processors than with 1
// (go test ./engine -bench TrivialWorld/snapshot -cpu 1,2). A spinning
// guest still lets the watchdog run: its loop budget brings it back into
// Go code, where it can be preempted, every millisecond or so. Call it
// once the world is prepared: Prepare compiles the programs side by side,
// which wants every processor (a cold compile is most of a first run).
func worldsAtOnce(n int) {
	if n < runtime.NumCPU() {
		runtime.GOMAXPROCS(n)
	}
}

// defaultParallel is one world per core, within maxParallel.
func defaultParallel() int { return session.DefaultParallel() }
