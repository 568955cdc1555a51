//go:build !linux

package proto

import (
	"errors"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// COW maps snapshots copy-on-write; only on Linux.
type COW struct{ snap *pauseoverlay.Snapshot }

// NewCOW fails outside Linux: restores copy the snapshot instead.
func NewCOW(s *pauseoverlay.Snapshot, dir string) (*COW, error) {
	return nil, errors.New("pause: copy-on-write snapshots need Linux")
}

// Allocate implements experimental.MemoryAllocator.
func (c *COW) Allocate(capacity, max uint64) experimental.LinearMemory { return nil }

// Close does nothing.
func (c *COW) Close() error { return nil }

type cowMemory struct{}

func (c *COW) memory(base *byte) *cowMemory { return nil }

func (m *cowMemory) reset() error { return nil }
