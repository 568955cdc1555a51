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
type memPool struct {
	mu   sync.Mutex
	free []*linearMemory
}

// reserve is the address space set aside per memory: wasm32's 4 GiB.
// MAP_NORESERVE commits nothing until a page is touched.
const reserve = 4 << 30

// clearLimit is how much used memory Free zeroes by hand; beyond it,
// returning the pages to the kernel is cheaper.
const clearLimit = 64 << 20

const maxPooled = 64

var pool = &memPool{}

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
		clear(m.buf[:m.used])
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

func memoryAllocator() experimental.MemoryAllocator { return pool }
