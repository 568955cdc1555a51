//go:build !linux

package engine

import "github.com/tetratelabs/wazero/experimental"

// newMemPool gives wazero's default allocator outside Linux.
func newMemPool(keep [][2]uint32) experimental.MemoryAllocator { return nil }
