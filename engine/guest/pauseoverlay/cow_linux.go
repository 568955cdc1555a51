package pauseoverlay

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/tetratelabs/wazero/experimental"
)

// COW is a snapshot's memory in an unlinked file in /dev/shm (tmpfs), mapped copy-on-write into every
// instance restored from it: a restore maps the file instead of copying
// it, and an instance pays a page fault (and a 4 KiB copy) only for each
// page it reads or writes. It is an experimental.MemoryAllocator whose
// memories are reused: freeing one maps the file over it again, which drops
// the pages the instance dirtied.
type COW struct {
	snap *Snapshot
	file *os.File

	mu   sync.Mutex
	free []*cowMemory
}

// reserve is the address space set aside per memory: wasm32's 4 GiB.
// MAP_NORESERVE commits nothing until a page is touched.
const reserve = 4 << 30

// NewCOW writes s's memory to an unlinked file in dir ("" for /dev/shm,
// whose pages are memory). Close it when no instance uses it.
func NewCOW(s *Snapshot, dir string) (*COW, error) {
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
	return &COW{snap: s, file: f}, nil
}

// Allocate implements experimental.MemoryAllocator.
func (c *COW) Allocate(capacity, max uint64) experimental.LinearMemory {
	if max > reserve {
		return nil
	}
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		m := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return m
	}
	c.mu.Unlock()
	buf, err := syscall.Mmap(-1, 0, reserve, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil
	}
	m := &cowMemory{buf: buf, c: c}
	if err := m.mapSnapshot(); err != nil {
		syscall.Munmap(buf)
		return nil
	}
	return m
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

// mapSnapshot maps the snapshot privately over the start of the
// reservation, dropping whatever was there; the rest stays inaccessible
// until Reallocate.
func (m *cowMemory) mapSnapshot() error {
	n := len(m.c.snap.Memory)
	if n > 0 {
		if err := mmapFixed(m.buf[:n], int(m.c.file.Fd()), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE); err != nil {
			return err
		}
	}
	m.used = uint64(n)
	return nil
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
	snap := uint64(len(m.c.snap.Memory))
	if m.used > snap {
		// Back to inaccessible, never-touched pages.
		tail := m.buf[snap:m.used]
		if err := mmapFixed(tail, -1, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE); err != nil {
			syscall.Munmap(m.buf)
			return
		}
	}
	if err := m.mapSnapshot(); err != nil {
		syscall.Munmap(m.buf)
		return
	}
	m.c.mu.Lock()
	m.c.free = append(m.c.free, m)
	m.c.mu.Unlock()
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
