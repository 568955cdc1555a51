package wasi

import (
	"context"
	"slices"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
)

// The `seedfall` host functions behind the compat overlay's mmap and flock
// shims; engine/guest/compat's package documentation is the ABI. A shared
// mapping is guest memory the node's disk keeps equal to the file's page
// cache (disk.Mapping); a private one is a copy the host forgets at once.

// Constants with their Linux values, as the ABI says.
const (
	protRead  = 0x1
	protWrite = 0x2
	protExec  = 0x4

	mapShared  = 0x1
	mapPrivate = 0x2
	mapAnon    = 0x20

	msAsync      = 0x1
	msInvalidate = 0x2
	msSync       = 0x4

	lockSh = 1
	lockEx = 2
	lockNb = 4
	lockUn = 8
)

func init() {
	seedfallFuncs = append(seedfallFuncs,
		fn("mmap", vt(i32, i64, i32, i32, i32, i32), mmap),
		fn("munmap", vt(i32, i32), munmap),
		fn("msync", vt(i32, i32, i32), msync),
		fn("mprotect", vt(i32, i32, i32), mprotect),
		fn("flock", vt(i32, i32), flock),
	)
}

// procMap is one mapping of the process, shared or private.
type procMap struct {
	addr, length uint32
	prot         uint32
	fdWrite      bool          // made from an fd open for writing (not append)
	m            *disk.Mapping // nil for a private mapping
}

func (pm *procMap) end() uint64 { return uint64(pm.addr) + uint64(pm.length) }

func mmap(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	fd, off, length, prot, flags, addr := uint32(s[0]), int64(s[1]), uint32(s[2]), uint32(s[3]), uint32(s[4]), uint32(s[5])
	if off < 0 || off%disk.PageSize != 0 || flags&mapAnon != 0 {
		return errno.EINVAL
	}
	e := p.fd(fd)
	if e == nil {
		return errno.EBADF
	}
	shared := flags&mapShared != 0
	if length == 0 || shared == (flags&mapPrivate != 0) || prot&^(protRead|protWrite|protExec) != 0 {
		return errno.EINVAL
	}
	if uint64(addr)+uint64(length) > uint64(m.Memory().Size()) {
		return errno.EFAULT
	}
	if e.kind != kindFile {
		return errno.ENODEV
	}
	fdWrite := e.write && !e.append && !e.readonly
	if !e.read || (shared && prot&protWrite != 0 && !fdWrite) {
		return errno.EACCES
	}
	mem := p.mappedMemory(addr, length)
	// A mapping over memory that is mapped already replaces it, as
	// MAP_FIXED does.
	p.unmapRange(addr, length, true)
	dm, en := e.h.Map(off, int64(length), shared && prot&protWrite != 0, mem)
	if en != 0 {
		return en
	}
	dm.Scan = p.scanMapping
	pm := &procMap{addr: addr, length: length, prot: prot, fdWrite: fdWrite}
	if shared {
		pm.m = dm
	} else {
		dm.Drop() // a private mapping is the copy Map just made
	}
	i, _ := slices.BinarySearchFunc(p.maps, addr, func(x *procMap, a uint32) int { return cmpU32(x.addr, a) })
	p.maps = slices.Insert(p.maps, i, pm)
	return 0
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func munmap(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	addr, length := uint32(s[0]), uint32(s[1])
	for i, pm := range p.maps {
		if pm.addr == addr && pm.length == length {
			p.maps = slices.Delete(p.maps, i, i+1)
			if pm.m != nil {
				pm.m.Unmap()
			}
			return 0
		}
	}
	return errno.EINVAL
}

// covering returns the mappings that together cover [addr, addr+length),
// in address order, or false if some byte of it is not mapped.
func (p *Process) covering(addr, length uint32) ([]*procMap, bool) {
	cur, end := uint64(addr), uint64(addr)+uint64(length)
	var out []*procMap
	for _, pm := range p.maps {
		if cur >= end {
			break
		}
		if pm.end() <= cur {
			continue
		}
		if uint64(pm.addr) > cur {
			return nil, false
		}
		out = append(out, pm)
		cur = pm.end()
	}
	return out, cur >= end
}

// msync called directly (a prebuilt module, or one built without the
// fsync overlay) waits here: a slow MS_SYNC holds up the whole node.
func msync(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	if r := p.takeReissue(); r != nil && r.sync != nil {
		return p.await(ctx, m, r.sync) // issued again after a pause
	}
	op, en := p.startMsync(uint32(s[0]), uint32(s[1]), uint32(s[2]))
	if en != 0 {
		return en
	}
	return p.await(ctx, m, op)
}

func mprotect(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	addr, length, prot := uint32(s[0]), uint32(s[1]), uint32(s[2])
	if prot&^(protRead|protWrite|protExec) != 0 {
		return errno.EINVAL
	}
	if length == 0 {
		return 0
	}
	maps, ok := p.covering(addr, length)
	if !ok || len(maps) != 1 {
		return errno.ENOMEM
	}
	pm := maps[0]
	if pm.m != nil && prot&protWrite != 0 && !pm.fdWrite {
		return errno.EACCES
	}
	pm.prot = prot
	if pm.m != nil {
		pm.m.SetWritable(prot&protWrite != 0)
	}
	return 0
}

func flock(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	var how disk.FlockHow
	switch uint32(s[1]) &^ lockNb {
	case lockSh:
		how = disk.LockShared
	case lockEx:
		how = disk.LockExclusive
	case lockUn:
		how = disk.Unlock
	default:
		return errno.EINVAL
	}
	if e.kind != kindFile && e.kind != kindDir {
		return errno.EINVAL
	}
	return e.h.Flock(how)
}

// unmapRange ends every mapping that overlaps [addr, addr+length), taking
// in their stores when takeIn is set.
func (p *Process) unmapRange(addr, length uint32, takeIn bool) {
	end := uint64(addr) + uint64(length)
	p.maps = slices.DeleteFunc(p.maps, func(pm *procMap) bool {
		if pm.end() <= uint64(addr) || uint64(pm.addr) >= end {
			return false
		}
		if pm.m != nil {
			if takeIn {
				pm.m.Unmap()
			} else {
				pm.m.Drop()
			}
		}
		return true
	})
}

// unmapAll ends every mapping at a clean exit: stores into writable shared
// mappings reach the page cache, as they would when the process ends.
func (p *Process) unmapAll() {
	for _, pm := range p.maps {
		if pm.m != nil {
			pm.m.Unmap()
		}
	}
	p.maps = nil
}

// dropMappings ends every mapping without reading guest memory, which may
// be gone: what was not taken in is lost.
func (p *Process) dropMappings() {
	for _, pm := range p.maps {
		if pm.m != nil {
			pm.m.Drop()
		}
	}
	p.maps = nil
}

// detachMappings ends every mapping of a process being killed, while its
// memory is still there: the disk keeps their dirty pages for the crash to
// lose, or to write back early.
func (p *Process) detachMappings() {
	for _, pm := range p.maps {
		if pm.m != nil {
			pm.m.Detach()
		}
	}
	p.maps = nil
}
