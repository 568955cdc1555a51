package engine

import (
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// memPool backs guests' linear memories with address space reserved up
// front and reused across instances. A Go guest's memory grows from about
// 2 MiB in many small steps; with wazero's default allocator each step copies
// the whole memory, and every instance's memory is garbage the host must
// scavenge. Here growing is a reslice, and a freed memory is cleared and
// handed to the next instance.
//
// Each program has its own pool, so a freed memory only goes to another
// instance of the same module: the ranges its data segments write (keep)
// are overwritten at instantiation and need no clearing.
type memPool struct {
	mu   sync.Mutex
	free []*linearMemory
	keep [][2]uint32 // sorted, disjoint
}

// reserve is the address space set aside per memory: wasm32's 4 GiB.
// MAP_NORESERVE commits nothing until a page is touched.
const reserve = 4 << 30

// clearLimit is how much used memory Free zeroes by hand; beyond it,
// returning the pages to the kernel is cheaper.
const clearLimit = 64 << 20

const maxPooled = 64

func (p *memPool) Allocate(capacity, max uint64) experimental.LinearMemory {
	if max > reserve {
		return nil
	}
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return m
	}
	p.mu.Unlock()
	buf, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	return &linearMemory{buf: buf, pool: p}
}

type linearMemory struct {
	buf  []byte // the whole reservation
	used uint64 // high-water mark of Reallocate
	pool *memPool
}

func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.used {
		m.used = size
	}
	return m.buf[:size:size]
}

func (m *linearMemory) Free() {
	if m.used > clearLimit {
		_ = syscall.Madvise(m.buf[:m.used], syscall.MADV_DONTNEED)
	} else {
		// Clear all but what the next instance's data segments rewrite.
		from := uint64(0)
		for _, r := range m.pool.keep {
			if uint64(r[0]) >= m.used {
				break
			}
			clear(m.buf[from:r[0]])
			from = min(uint64(r[1]), m.used)
		}
		clear(m.buf[from:m.used])
	}
	m.used = 0
	m.pool.mu.Lock()
	if len(m.pool.free) < maxPooled {
		m.pool.free = append(m.pool.free, m)
		m.pool.mu.Unlock()
		return
	}
	m.pool.mu.Unlock()
	_ = syscall.Munmap(m.buf)
}

// newMemPool returns the allocator for one program's instances; keep is
// what its data segments write (build.DataRanges).
func newMemPool(keep [][2]uint32) experimental.MemoryAllocator { return &memPool{keep: keep} }
