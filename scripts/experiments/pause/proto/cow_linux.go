package proto

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// COW is a snapshot's memory in an unlinked file in /dev/shm (tmpfs),
// mapped copy-on-write into every instance restored from it: a restore maps
// the file instead of copying it, and an instance pays a page fault (and a
// 4 KiB copy when it writes) only for each page it touches. It is an
// experimental.MemoryAllocator whose memories are reused, and Program.Reset
// puts an instance's memory back to the snapshot in place: both drop the
// pages the instance dirtied (madvise MADV_DONTNEED, after which a private
// file mapping reads the file again and anonymous pages read zero).
type COW struct {
	snap *pauseoverlay.Snapshot
	file *os.File

	mu   sync.Mutex
	free []*cowMemory
	live map[*byte]*cowMemory // by base address
}

// reserve is the address space set aside per memory: wasm32's 4 GiB.
// MAP_NORESERVE commits nothing until a page is touched.
const reserve = 4 << 30

// NewCOW writes s's memory to an unlinked file in dir ("" for /dev/shm,
// whose pages are memory). Close it when no instance uses it.
func NewCOW(s *pauseoverlay.Snapshot, dir string) (*COW, error) {
	if len(s.Memory)%os.Getpagesize() != 0 {
		return nil, fmt.Errorf("pause: a snapshot of %d bytes is not whole pages", len(s.Memory))
	}
	if dir == "" {
		dir = "/dev/shm"
	}
	f, err := os.CreateTemp(dir, "seedfall-snapshot-")
	if err != nil {
		return nil, fmt.Errorf("pause: a file for the snapshot: %v", err)
	}
	os.Remove(f.Name())
	if _, err := f.Write(s.Memory); err != nil {
		f.Close()
		return nil, fmt.Errorf("pause: writing the snapshot to %s: %v", f.Name(), err)
	}
	return &COW{snap: s, file: f, live: map[*byte]*cowMemory{}}, nil
}

// Allocate implements experimental.MemoryAllocator.
func (c *COW) Allocate(capacity, max uint64) experimental.LinearMemory {
	if max > reserve {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := len(c.free); n > 0 {
		m := c.free[n-1]
		c.free = c.free[:n-1]
		c.live[&m.buf[0]] = m
		return m
	}
	buf, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	m := &cowMemory{buf: buf, c: c}
	if n := len(c.snap.Memory); n > 0 {
		if err := mmapFixed(buf[:n], int(c.file.Fd()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE); err != nil {
			syscall.Munmap(buf)
			return nil
		}
	}
	m.used = uint64(len(c.snap.Memory))
	c.live[&buf[0]] = m
	return m
}

// memory returns the memory of c that starts at base, if it is one.
func (c *COW) memory(base *byte) *cowMemory {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live[base]
}

// Close releases the memfd and the pooled memories.
func (c *COW) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.free {
		syscall.Munmap(m.buf)
	}
	c.free = nil
	return c.file.Close()
}

type cowMemory struct {
	buf  []byte // the whole reservation
	used uint64 // how far it is readable and writable
	c    *COW
}

// reset drops every page the instance touched: the snapshot's part reads
// the file again, the rest reads zero.
func (m *cowMemory) reset() error {
	return syscall.Madvise(m.buf[:m.used], syscall.MADV_DONTNEED)
}

func (m *cowMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.used {
		// Pages past the snapshot are anonymous zero pages.
		if err := syscall.Mprotect(m.buf[m.used:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			return nil
		}
		m.used = size
	}
	return m.buf[:size:size]
}

func (m *cowMemory) Free() {
	c := m.c
	c.mu.Lock()
	delete(c.live, &m.buf[0])
	c.mu.Unlock()
	if err := m.reset(); err != nil {
		syscall.Munmap(m.buf)
		return
	}
	c.mu.Lock()
	c.free = append(c.free, m)
	c.mu.Unlock()
}

// mmapFixed maps fd from offset 0 (or anonymous memory, fd -1) over b.
func mmapFixed(b []byte, fd, prot, flags int) error {
	_, _, e := syscall.Syscall6(syscall.SYS_MMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)),
		uintptr(prot), uintptr(flags|syscall.MAP_FIXED), uintptr(fd), 0)
	if e != 0 {
		return e
	}
	return nil
}
