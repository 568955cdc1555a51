package main

import (
	"fmt"
	"runtime"
)

// maxParallel bounds -parallel: each world in flight holds its programs'
// memories, so thousands at once only exhaust the host (issue 12).
const maxParallel = 256

// checkParallel says what is wrong with a -parallel value.
func checkParallel(n int) error {
	if n < 1 || n > maxParallel {
		return fmt.Errorf("-parallel %d: want from 1 to %d worlds at once (the default is one per core)", n, maxParallel)
	}
	return nil
}

// defaultParallel is one world per core, within maxParallel.
func defaultParallel() int { return min(runtime.NumCPU(), maxParallel) }
