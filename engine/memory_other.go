//go:build !linux

package engine

import "github.com/tetratelabs/wazero/experimental"

// newMemPool gives no pool outside Linux: each memory is a Go slice
// (sliceMemory), still held to its memory_limit by memGuard.
func newMemPool(keep [][2]uint32) experimental.MemoryAllocator { return nil }
