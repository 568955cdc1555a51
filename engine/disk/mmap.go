package disk

import (
	"bytes"
	"slices"

	"github.com/seedfall/seedfall/engine/errno"
)

// Shared mappings. A Mapping is a view of a file's page cache held in
// memory the disk does not own (a guest's linear memory): the disk keeps it
// coherent with the cache, and takes stores made into a writable mapping
// back into the cache.
//
//   - Every change to the cache (a write, a truncate, a take-in from
//     another mapping) is copied into the mappings that cover it, so the
//     cost is proportional to the bytes changed, not to the mappings' size.
//   - Stores into a writable mapping are found by comparing its memory with
//     the cache page by page, and taken in as ordinary pending writes of
//     whole pages (clipped to the file's size), so crash models apply to
//     them. That happens before the file is read, written, truncated,
//     synced or mapped (over the range the operation touches; all of the
//     file for truncate and sync), and when the mapping is flushed or
//     unmapped.
//   - Stores past the end of the file are never taken in.
//   - At a crash the mappings are gone; their dirty pages are lost unless
//     the engine keeps some with KeepMapped (mmap_early_writeback).

// Mapping is one shared mapping of [Off, Off+Len) of a file.
type Mapping struct {
	d        *Disk
	n        *inode
	off      int64
	length   int64
	mem      func() []byte
	writable bool
	gone     bool

	// Scan, if set, stands between the disk and every comparison of the
	// mapped memory with the cache: it gets the comparison to run (which
	// reads the memory) and returns the dirty pages the disk goes on with.
	// A recorder of the guest (wasi.Tape) runs it and keeps the result; a
	// playback returns the kept result without reading any memory. The
	// pages are what the guest stored, the one thing the disk learns from
	// the memory.
	Scan func(compare func() []Dirty) []Dirty
}

// Dirty is a page of a mapping whose mapped bytes differ from the cache:
// its file offset and its content (the cache's bytes with the mapped ones
// over them, up to the file's size).
type Dirty struct {
	Off  int64
	Data []byte
}

// MappedPage is a dirty page of a writable mapping: a page whose mapped
// bytes differ from the page cache.
type MappedPage struct {
	Ino  uint64
	Path string // the file's path when the page was found dirty
	Off  int64  // the page's offset in the file, a multiple of 4096
	// Data is the page as the mapping holds it: the cache's bytes with the
	// mapped ones over them, up to the file's size.
	Data []byte
	n    *inode
}

// PageSize is the size of a page: mappings, dirty tracking and early
// writeback work on 4096-byte pages of the file.
const PageSize = pageSize

// Map maps [off, off+length) of the open file into mem, which must return
// length bytes each time it is called (the same bytes, wherever they now
// live). Map fills them with the file's cached content, zeros past its end.
// off must be a multiple of PageSize. A writable mapping needs a handle open
// for writing. The mapping keeps the file's page cache alive after the
// handle is closed, as Linux does, until Unmap, Drop or a crash.
func (h *Handle) Map(off, length int64, writable bool, mem func() []byte) (*Mapping, errno.Errno) {
	if e := h.check(); e != 0 {
		return nil, e
	}
	switch {
	case h.n.typ != TypeRegular:
		return nil, errno.ENODEV
	case !h.readable, writable && !h.writable:
		return nil, errno.EACCES
	case length <= 0, off < 0, off%pageSize != 0, off > maxFileSize, length > maxFileSize-off:
		return nil, errno.EINVAL
	}
	d, n := h.d, h.n
	d.takeIn(n, off, off+length)
	m := &Mapping{d: d, n: n, off: off, length: length, mem: mem, writable: writable}
	buf := mem()
	got := n.data.readAt(buf, off)
	clear(buf[got:])
	n.maps = append(n.maps, m)
	d.maps = append(d.maps, m)
	return m, 0
}

// Writable reports whether stores into the mapping are taken in.
func (m *Mapping) Writable() bool { return m.writable }

// SetWritable changes whether stores into the mapping are taken in. Stores
// made while it was writable are taken in first.
func (m *Mapping) SetWritable(w bool) {
	if m.gone || w == m.writable {
		return
	}
	if m.writable {
		m.d.takeInFrom(m, m.off, m.off+m.length)
	}
	m.writable = w
}

// Flush takes the stores in [from, to) of the mapping (offsets into the
// mapping, not the file) into the page cache.
func (m *Mapping) Flush(from, to int64) {
	if m.gone || !m.writable {
		return
	}
	m.d.takeInFrom(m, m.off+max(0, from), m.off+min(to, m.length))
}

// Sync is msync with MS_SYNC: it takes in the stores of every writable
// mapping of the file, then makes the file's data durable as fsync does,
// as a disk op (OnOp sees an fsync). It works after the handle the mapping
// was made from is closed.
func (m *Mapping) Sync() errno.Errno {
	if m.gone {
		return errno.EBADF
	}
	return m.SyncTo(m.SyncMark())
}

// SyncMark is the start of an msync(MS_SYNC) that takes time: it takes in
// the stores of every writable mapping of the file, and returns what the
// msync covers, for SyncTo. It is 0 once the mapping is gone.
func (m *Mapping) SyncMark() uint64 {
	if m.gone {
		return 0
	}
	m.d.takeIn(m.n, 0, m.n.data.size)
	return m.d.seq
}

// SyncTo is the completion of an msync(MS_SYNC) started at mark (from
// SyncMark): the file's writes logged up to mark become durable, as
// Handle.SyncTo makes them; to a mutant it is an fdatasync. An msync in
// flight completes even if the mapping has been unmapped since.
func (m *Mapping) SyncTo(mark uint64) errno.Errno {
	d, n := m.d, m.n
	if d.weakened(n, mark, SyncData) {
		return 0
	}
	if e := d.syncOp(n, mark); e != 0 {
		return e
	}
	d.syncFileTo(n, mark)
	return 0
}

// Unmap takes the mapping's stores into the page cache and ends it.
func (m *Mapping) Unmap() {
	if m.gone {
		return
	}
	if m.writable {
		m.d.takeInFrom(m, m.off, m.off+m.length)
	}
	m.Drop()
}

// Drop ends the mapping without looking at its memory again: its stores
// not taken in yet are lost. Use it when the memory is gone.
func (m *Mapping) Drop() {
	if m.gone {
		return
	}
	m.gone = true
	m.n.maps = slices.DeleteFunc(m.n.maps, func(x *Mapping) bool { return x == m })
	m.d.maps = slices.DeleteFunc(m.d.maps, func(x *Mapping) bool { return x == m })
	m.mem = nil
	m.d.maybeFree(m.n)
}

// Detach ends the mapping as a process that dies does: its dirty pages
// are set aside as the disk's orphaned pages, which a crash loses unless
// KeepMapped keeps some, and its memory is not looked at again. Call it
// while the memory is still readable.
func (m *Mapping) Detach() {
	if m.gone {
		return
	}
	if m.writable {
		m.d.orphans = mergePages(m.d.orphans, m.d.dirtyPages(m))
	}
	m.Drop()
}

// Mappings returns how many mappings are live on the disk.
func (d *Disk) Mappings() int { return len(d.maps) }

// MappedDirty detaches every live mapping and returns the dirty pages that
// dead processes left: what a crash now would lose. Pages are in inode,
// then offset order; where two mappings had the same page dirty, the one
// mapped later wins.
func (d *Disk) MappedDirty() []MappedPage {
	for len(d.maps) > 0 {
		d.maps[0].Detach()
	}
	return slices.Clone(d.orphans)
}

// KeepMapped makes the next crash write these pages (from MappedDirty)
// back durably, after whatever the crash model keeps: the kernel wrote them
// back before the power went.
func (d *Disk) KeepMapped(pages []MappedPage) { d.keepMapped = pages }

// dirtyPages returns the pages of m whose mapped bytes differ from the
// page cache, in offset order.
func (d *Disk) dirtyPages(m *Mapping) []MappedPage {
	return d.scan(m, m.off, m.off+m.length, nil)
}

// scan compares the pages of m that overlap [from, to) and are inside the
// file with the cache. With fn nil, it returns the dirty ones; otherwise
// it calls fn with each dirty page's offset and content and returns nil.
func (d *Disk) scan(m *Mapping, from, to int64, fn func(off int64, data []byte)) []MappedPage {
	n := m.n
	from, to = max(from, m.off), min(to, m.off+m.length, n.data.size)
	if from >= to {
		return nil
	}
	compare := func() []Dirty {
		mem := m.mem()
		var dirty []Dirty
		var cache [pageSize]byte
		for pg := from / pageSize * pageSize; pg < to; pg += pageSize {
			end := min(pg+pageSize, n.data.size)
			lo, hi := max(pg, m.off), min(end, m.off+m.length)
			c := cache[:end-pg]
			n.data.readAt(c, pg)
			if bytes.Equal(mem[lo-m.off:hi-m.off], c[lo-pg:hi-pg]) {
				continue
			}
			data := make([]byte, end-pg)
			copy(data, c)
			copy(data[lo-pg:], mem[lo-m.off:hi-m.off])
			dirty = append(dirty, Dirty{pg, data})
		}
		return dirty
	}
	var dirty []Dirty
	if m.Scan != nil {
		dirty = m.Scan(compare)
	} else {
		dirty = compare()
	}
	// Each page is taken in (fn) after all are compared: fn writes the
	// cache of its own page only.
	var out []MappedPage
	for _, p := range dirty {
		if fn != nil {
			fn(p.Off, p.Data)
			continue
		}
		out = append(out, MappedPage{Ino: n.ino, Path: d.pathOf(n), Off: p.Off, Data: p.Data, n: n})
	}
	return out
}

// takeIn takes the stores of every writable mapping of n that overlap
// [from, to) into the page cache, in the order the mappings were made.
func (d *Disk) takeIn(n *inode, from, to int64) {
	for i := 0; i < len(n.maps); i++ {
		if m := n.maps[i]; m.writable {
			d.takeInFrom(m, from, to)
		}
	}
}

// takeInFrom writes m's dirty pages in [from, to) into the cache as
// pending writes, and merges them into the other mappings of the file:
// where another mapping's byte still equals the cache's old byte it takes
// the new one; where it differs, it is a store of that mapping's own, kept
// to be taken in after.
func (d *Disk) takeInFrom(m *Mapping, from, to int64) {
	n := m.n
	d.scan(m, from, to, func(off int64, data []byte) {
		var old []byte
		if len(n.maps) > 1 {
			old = make([]byte, len(data))
			n.data.readAt(old, off)
		}
		d.writeCache(n, data, off)
		now := d.now()
		n.mtim, n.ctim = now, now
		if old == nil {
			return
		}
		for _, o := range n.maps {
			if o != m {
				o.merge(off, old, data)
			}
		}
	})
}

// merge updates the mapped bytes at file offset off, where they overlap,
// from old to new: each byte still equal to old takes new's.
func (m *Mapping) merge(off int64, old, new []byte) {
	lo, hi := max(off, m.off), min(off+int64(len(new)), m.off+m.length)
	if lo >= hi {
		return
	}
	mem := m.mem()[lo-m.off : hi-m.off]
	old, new = old[lo-off:hi-off], new[lo-off:hi-off]
	if bytes.Equal(mem, old) {
		copy(mem, new)
		return
	}
	for i := range mem {
		if mem[i] == old[i] {
			mem[i] = new[i]
		}
	}
}

// copyIn copies b, the file's bytes at off, into the mapping where they
// overlap.
func (m *Mapping) copyIn(off int64, b []byte) {
	lo, hi := max(off, m.off), min(off+int64(len(b)), m.off+m.length)
	if lo < hi {
		copy(m.mem()[lo-m.off:hi-m.off], b[lo-off:hi-off])
	}
}

// mapWrite copies a write of p at off into every mapping of n.
func (d *Disk) mapWrite(n *inode, p []byte, off int64) {
	for _, m := range n.maps {
		m.copyIn(off, p)
	}
}

// mapRefresh copies the cache's content of [from, to) into every mapping
// of n, zeros past the end of the file: after a truncate or a replaced
// file.
func (d *Disk) mapRefresh(n *inode, from, to int64) {
	for _, m := range n.maps {
		lo, hi := max(from, m.off), min(to, m.off+m.length)
		if lo >= hi {
			continue
		}
		buf := m.mem()[lo-m.off : hi-m.off]
		got := n.data.readAt(buf, lo)
		clear(buf[got:])
	}
}

// mergePages adds pages to a sorted list of pages, replacing those at the
// same inode and offset.
func mergePages(list, add []MappedPage) []MappedPage {
	for _, p := range add {
		i, found := slices.BinarySearchFunc(list, p, cmpPage)
		if found {
			list[i] = p
		} else {
			list = slices.Insert(list, i, p)
		}
	}
	return list
}

func cmpPage(a, b MappedPage) int {
	if a.Ino != b.Ino {
		return cmpUint(a.Ino, b.Ino)
	}
	return cmpInt(a.Off, b.Off)
}

// crashMappings is a crash's part in mappings: every mapping ends, the
// pages KeepMapped kept are written back durably to the files that exist
// after the crash, and the other dirty pages are lost.
func (d *Disk) crashMappings() {
	for len(d.maps) > 0 {
		d.maps[0].Drop()
	}
	for _, p := range d.keepMapped {
		n := p.n
		if n == nil || n.mark != d.epoch || n.typ != TypeRegular {
			continue
		}
		op := DataOp{Kind: DataWrite, Off: p.Off, Data: p.Data}
		n.dur.apply(&op, &n.data)
		if len(n.damage) > 0 {
			n.healOp(&op)
		}
	}
	d.keepMapped, d.orphans = nil, nil
}
