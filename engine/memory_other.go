//go:build !linux

package engine

import "github.com/tetratelabs/wazero/experimental"

// memoryAllocator is wazero's default outside Linux.
func memoryAllocator() experimental.MemoryAllocator { return nil }
