package engine

import (
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

// memGuard holds one incarnation of a program to its memory_limit: every
// grow of its linear memory past the limit is refused, which makes wasm's
// memory.grow return -1 (Go's runtime then dies with "fatal error: out of
// memory" and exit status 2). It remembers the first refusal, so that exit
// can be told apart from a panic.
type memGuard struct {
	limit uint64 // bytes the memory may grow to
	size  uint64 // bytes the memory has now; it never shrinks
	// refused is set by the first grow refused; had and asked are the
	// memory's size then and the size it asked for.
	refused    bool
	had, asked uint64
	// onRefuse, if set, hears of the first refusal, on the guest's
	// goroutine, inside its memory.grow.
	onRefuse func()
	// mem is the memory it guards, once allocated.
	mem *guardedMemory
}

// allocator gives the instance's memory from pool (nil: an ordinary Go
// slice), guarded by g. Pass it with experimental.WithMemoryAllocator when
// instantiating.
func (g *memGuard) allocator(pool experimental.MemoryAllocator) experimental.MemoryAllocator {
	return experimental.MemoryAllocatorFunc(func(capacity, max uint64) experimental.LinearMemory {
		var m experimental.LinearMemory
		if pool != nil {
			m = pool.Allocate(capacity, max)
		}
		if m == nil { // outside Linux, or no address space to reserve
			m = &sliceMemory{limit: g.limit}
		}
		g.mem = &guardedMemory{inner: m, g: g}
		return g.mem
	})
}

type guardedMemory struct {
	inner   experimental.LinearMemory
	g       *memGuard
	started bool
	// slack is how much larger the memory is than its guest knows: an
	// instance reused from an earlier incarnation keeps the size it grew
	// to (wasm memories do not shrink), but the guest restored into it
	// starts from the snapshot's size, and only what it grows from there
	// counts against its limit (see adopt).
	slack uint64
}

// adopt makes m, the memory of an instance reused from an earlier
// incarnation, g's: the guest it holds now has size bytes.
func (m *guardedMemory) adopt(g *memGuard, size, physical uint64) {
	m.g, m.slack, m.started = g, physical-size, true
	g.mem, g.size = m, size
}

func (m *guardedMemory) Reallocate(size uint64) []byte {
	g := m.g
	// The first call makes the module's initial memory, which Prepare
	// checked against the limit: wazero cannot take a refusal there.
	if m.started && size-m.slack > g.limit {
		if !g.refused {
			g.refused, g.had, g.asked = true, g.size, size-m.slack
			if g.onRefuse != nil {
				g.onRefuse()
			}
		}
		return nil
	}
	m.started = true
	b := m.inner.Reallocate(size)
	if b != nil {
		g.size = size - m.slack
	}
	return b
}

func (m *guardedMemory) Free() { m.inner.Free() }

// sliceMemory is a linear memory in a Go slice, grown by copying: where
// memPool cannot reserve address space. Its capacity never passes the
// limit, so the host never holds more than the guest may use.
type sliceMemory struct {
	buf   []byte
	limit uint64
}

func (m *sliceMemory) Reallocate(size uint64) []byte {
	if size > uint64(cap(m.buf)) {
		c := max(size, min(2*uint64(cap(m.buf)), m.limit))
		b := make([]byte, size, c)
		copy(b, m.buf)
		m.buf = b
	}
	m.buf = m.buf[:size]
	return m.buf[:size:size]
}

func (m *sliceMemory) Free() { m.buf = nil }

// refusedPrefix starts the trace's line for a grow refused.
const refusedPrefix = "out of memory: refused to grow its memory"

// refusedText is the trace's line for the first grow refused.
func refusedText(g *memGuard) string {
	return fmt.Sprintf("%s from %s to %s, over its memory_limit of %s",
		refusedPrefix, memText(g.had), memText(g.asked), memText(g.limit))
}

// CauseLine returns the index in Lines of the line to show a failure from
// when the end of the output says little, or -1. A Go program that ran out
// of memory ends with the stacks of all its goroutines; the line to show
// from is the grow refused, which the runtime's "fatal error: out of
// memory" and the stack of the goroutine that allocated follow.
func (res *Result) CauseLine() int {
	if res.Class != ClassMemory {
		return -1
	}
	for i := len(res.Lines) - 1; i >= 0; i-- {
		l := res.Lines[i]
		if l.Kind == trace.Event && l.Node == res.Node && strings.HasPrefix(l.Text, refusedPrefix) {
			return i
		}
	}
	return -1
}

// memText writes a memory size: exactly in its unit when it has one
// (world.SizeText), else in MiB to a tenth.
func memText(n uint64) string {
	switch {
	case n%(1<<20) == 0 || n < 1<<20:
		return world.SizeText(int64(n))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
