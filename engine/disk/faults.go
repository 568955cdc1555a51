package disk

import (
	"fmt"
	"slices"
)

// Operation faults. Whether a fault fires is the engine's decision, drawn
// per operation; the methods here apply a fault that was decided and say
// what it hit, for the schedule. The per-operation ones are called from
// inside Options.OnOp for the operation being decided:
//
//	write_eio, write_enospc, read_eio: OnOp returns errno.EIO or
//	    errno.ENOSPC; the disk is unchanged. Nothing to call.
//	fsync_eio:         FailSync, then OnOp returns errno.EIO.
//	lost_write:        LoseWrite, then OnOp returns 0.
//	misdirected_write: MisdirectWrite, then OnOp returns 0.
//	read_corrupt:      CorruptRead, then OnOp returns 0.
//
// Bitrot is timed, not tied to an operation, and is called between
// operations. Which page, byte or bit is hit comes from a Draw the caller
// keys by seed, fault kind, node and operation number.

// Draw returns a uniform choice in [0, n), for n >= 1. Every random choice
// the disk makes comes from one, so the caller decides how it is seeded.
type Draw func(n int) int

func (dr Draw) pick(n int) int {
	v := dr(n)
	if v < 0 || v >= n {
		panic(fmt.Sprintf("disk: draw(%d) returned %d, want 0 <= v < %d", n, v, n))
	}
	return v
}

// Fault kinds, as the schedule names them.
const (
	KindFsyncEIO         = "fsync_eio"
	KindLostWrite        = "lost_write"
	KindMisdirectedWrite = "misdirected_write"
	KindReadCorrupt      = "read_corrupt"
	KindBitrot           = "bitrot"
	KindCorruptOnCrash   = "corrupt_on_crash"
)

// Fired says what an applied fault hit, for the schedule and the trace.
type Fired struct {
	Kind   string
	Path   string // the file's path from the disk root
	Offset int64  // the byte flipped, or the page (lost, misdirected) that kept its old content
	Target int64  // misdirected_write: the page that received the data
	Bit    int    // read_corrupt, bitrot, corrupt_on_crash: which bit of the byte, 0-7
}

// Damage is a byte range of a file's durable copy that a fault broke:
// what `seedfall inspect` lists as corrupted ranges. A later fsync or
// crash writeback that rewrites the bytes heals it.
type Damage struct {
	Off, Len int64
	Kind     string // KindLostWrite, KindMisdirectedWrite, KindBitrot or KindCorruptOnCrash
}

func (n *inode) addDamage(dm Damage) {
	if dm.Len <= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(n.damage, dm, func(a, b Damage) int {
		if a.Off != b.Off {
			return cmpInt(a.Off, b.Off)
		}
		return 0
	})
	n.damage = slices.Insert(n.damage, i, dm)
}

// heal removes [off, end) from the damage records.
func (n *inode) heal(off, end int64) {
	if len(n.damage) == 0 || off >= end {
		return
	}
	out := n.damage[:0:0]
	for _, dm := range n.damage {
		dEnd := dm.Off + dm.Len
		if dEnd <= off || dm.Off >= end {
			out = append(out, dm)
			continue
		}
		if dm.Off < off {
			out = append(out, Damage{Off: dm.Off, Len: off - dm.Off, Kind: dm.Kind})
		}
		if dEnd > end {
			out = append(out, Damage{Off: end, Len: dEnd - end, Kind: dm.Kind})
		}
	}
	n.damage = out
}

// healOp heals what one data operation rewrote in the durable copy.
func (n *inode) healOp(op *DataOp) {
	switch op.Kind {
	case DataWrite:
		n.heal(op.Off, op.Off+int64(len(op.Data)))
	case DataTruncate:
		n.heal(op.Size, maxFileSize+1)
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// hooked returns the file of the operation OnOp is deciding, if it is of
// kind k on a regular file; it panics when called outside OnOp or for
// another operation, which is a mistake in the engine.
func (d *Disk) hooked(op Op, k OpKind, what string) *inode {
	if !d.inHook || d.hookOp.N != op.N || d.hookOp.Kind != op.Kind || d.hookOp.Ino != op.Ino {
		panic(fmt.Sprintf("disk: %s applied to %s #%d outside OnOp for that operation", what, op.Kind, op.N))
	}
	if op.Kind != k || d.hookNode.typ != TypeRegular {
		return nil
	}
	return d.hookNode
}

// FailSync applies fsync_eio to the file fsync op, with Linux's fsyncgate
// semantics: the file's pending writes are dropped from durable storage
// but stay in the page cache, readable, and are not written again, so the
// next fsync succeeds without them. A page that failed is written in full
// by the next fsync that writes into it. OnOp must then return errno.EIO.
// It applies only to the fsync of a regular file (ok is false otherwise).
// For SyncTo, what fails is what it would have made durable, the pending
// operations up to its mark; those logged after stay pending.
func (d *Disk) FailSync(op Op) (f Fired, ok bool) {
	n := d.hooked(op, OpSync, KindFsyncEIO)
	if n == nil {
		return Fired{}, false
	}
	if k := n.opsTo(d.syncMark); k < n.pending.len() {
		n.failPrefix(k)
	} else {
		n.dropPending()
		delete(d.dirty, n)
		n.markStale()
	}
	return Fired{Kind: KindFsyncEIO, Path: op.Path}, true
}

// dirtyPages returns the pages that the first k pending writes of n touch
// inside a file of size bytes, ascending.
func dirtyPages(n *inode, k int, size int64) []int {
	last := pagesFor(size)
	var pages []int
	for i := range k {
		w := n.pending.at(i)
		if w.n <= 0 {
			continue
		}
		for pg := int(w.off / pageSize); int64(pg)*pageSize < w.end() && pg < last; pg++ {
			pages = append(pages, pg)
		}
	}
	slices.Sort(pages)
	return slices.Compact(pages)
}

// LoseWrite applies lost_write to the file fsync op: the fsync happens,
// except that one dirty page (of the operations up to the mark, for
// SyncTo; so for MisdirectWrite, in a file of its size at the mark), draw(number of dirty pages), keeps its old
// durable content (zeros if the page is new). The page cache keeps the
// new content, so reads see it until a crash. OnOp must then return 0.
// ok is false, and nothing happens, when the fsync has no dirty page.
func (d *Disk) LoseWrite(op Op, draw Draw) (f Fired, ok bool) {
	n := d.hooked(op, OpSync, KindLostWrite)
	if n == nil {
		return Fired{}, false
	}
	k, size := n.atMark(d.syncMark)
	pages := dirtyPages(n, k, size)
	if len(pages) == 0 {
		return Fired{}, false
	}
	pg := pages[draw.pick(len(pages))]
	old := oldPage(n, pg)
	d.syncFileTo(n, d.syncMark)
	restorePage(n, pg, old)
	n.stalePage(pg)
	n.heal(int64(pg)*pageSize, int64(pg+1)*pageSize)
	n.addDamage(pageDamage(n, pg, KindLostWrite))
	return Fired{Kind: KindLostWrite, Path: op.Path, Offset: int64(pg) * pageSize}, true
}

// MisdirectWrite applies misdirected_write to the file fsync op: the
// fsync happens, except that one dirty page, draw(dirty pages), lands at
// another page of the file, draw(pages - 1) counting the others in order,
// overwriting it, while the intended page keeps its old content. The page
// cache keeps the right content of both. OnOp must then return 0. ok is
// false, and nothing happens, when the fsync has no dirty page or the
// file has fewer than two pages.
func (d *Disk) MisdirectWrite(op Op, draw Draw) (f Fired, ok bool) {
	n := d.hooked(op, OpSync, KindMisdirectedWrite)
	if n == nil {
		return Fired{}, false
	}
	k, size := n.atMark(d.syncMark)
	pages := dirtyPages(n, k, size)
	total := pagesFor(size)
	if len(pages) == 0 || total < 2 {
		return Fired{}, false
	}
	pg := pages[draw.pick(len(pages))]
	to := draw.pick(total - 1)
	if to >= pg {
		to++
	}
	old := oldPage(n, pg)
	d.syncFileTo(n, d.syncMark)
	if to >= len(n.dur.pages) || pg >= len(n.dur.pages) {
		// Only after a failed fsync can the durable copy be shorter
		// than the cache; then the write lands nowhere it can be seen.
		restorePage(n, pg, old)
	} else {
		var moved page
		if src := n.dur.pages[pg]; src != nil {
			moved = *src
		}
		restorePage(n, pg, old)
		dst := n.dur.own(to, &n.data)
		*dst = moved
		clearTail(&n.dur, to)
	}
	n.stalePage(pg)
	n.stalePage(to)
	for _, p := range []int{pg, to} {
		n.heal(int64(p)*pageSize, int64(p+1)*pageSize)
		n.addDamage(pageDamage(n, p, KindMisdirectedWrite))
	}
	return Fired{Kind: KindMisdirectedWrite, Path: op.Path, Offset: int64(pg) * pageSize, Target: int64(to) * pageSize}, true
}

// oldPage copies the durable page pg before an fsync, which may write
// into it in place; nil for a hole.
func oldPage(n *inode, pg int) *page {
	if pg < len(n.dur.pages) && n.dur.pages[pg] != nil {
		cp := *n.dur.pages[pg]
		return &cp
	}
	return nil
}

// restorePage puts a durable page back as it was before an fsync.
func restorePage(n *inode, pg int, old *page) {
	if pg >= len(n.dur.pages) {
		return
	}
	n.dur.pages[pg] = old
	clearTail(&n.dur, pg)
}

// clearTail keeps content's rule that bytes past the size are zero when pg
// is the last page: a page brought back from when the file was longer may
// hold some.
func clearTail(c *content, pg int) {
	if pg != len(c.pages)-1 || c.pages[pg] == nil {
		return
	}
	if o := int(c.size - int64(pg)*pageSize); o < pageSize {
		np := new(page)
		copy(np[:o], c.pages[pg][:o])
		c.pages[pg] = np
	}
}

func pageDamage(n *inode, pg int, kind string) Damage {
	off := int64(pg) * pageSize
	return Damage{Off: off, Len: min(off+pageSize, n.dur.size) - off, Kind: kind}
}

// CorruptRead applies read_corrupt to the read op: one bit of the bytes
// the read returns, draw(8 * bytes returned), comes back flipped. The disk
// is unchanged, so reading again returns the right bytes. OnOp must then
// return 0. ok is false, and nothing happens, when the read returns no
// bytes.
func (d *Disk) CorruptRead(op Op, draw Draw) (f Fired, ok bool) {
	n := d.hooked(op, OpRead, KindReadCorrupt)
	if n == nil || op.Off >= n.data.size || op.Len <= 0 {
		return Fired{}, false
	}
	got := min(op.Len, n.data.size-op.Off)
	bit := int64(draw.pick(int(got * 8)))
	d.readFlip = bit
	return Fired{Kind: KindReadCorrupt, Path: op.Path, Offset: op.Off + bit/8, Bit: int(bit % 8)}, true
}

// Bitrot flips one bit of durable data: a byte drawn uniformly over the
// durable bytes of every file the program can reach by name, draw(total
// bytes), taking files in Walk order and each file once, then the bit,
// draw(8). The program sees the flipped bit at once unless the byte has
// a pending write or truncate, or its page is stale. ok is false, and
// nothing happens, when no file holds durable data.
func (d *Disk) Bitrot(draw Draw) (f Fired, ok bool) {
	type file struct {
		n    *inode
		path string
	}
	var files []file
	var total int64
	seen := map[*inode]bool{}
	var walk func(prefix string, dir *inode)
	walk = func(prefix string, dir *inode) {
		for _, e := range dir.entries {
			switch n := e.node; n.typ {
			case TypeRegular:
				if !seen[n] && n.dur.size > 0 {
					seen[n] = true
					files = append(files, file{n, prefix + e.name})
					total += n.dur.size
				}
			case TypeDirectory:
				walk(prefix+e.name+"/", n)
			}
		}
	}
	walk("", d.root)
	if total == 0 {
		return Fired{}, false
	}
	at := int64(draw.pick(int(total)))
	bit := draw.pick(8)
	for _, fl := range files {
		if at >= fl.n.dur.size {
			at -= fl.n.dur.size
			continue
		}
		n := fl.n
		if len(n.maps) > 0 {
			d.takeIn(n, at, at+1) // a store there is a pending write
		}
		flipBit(&n.dur, &n.data, at, bit)
		if visible(n, at) {
			flipBit(&n.data, &n.dur, at, bit)
			if len(n.maps) > 0 {
				d.mapRefresh(n, at, at+1)
			}
		}
		n.addDamage(Damage{Off: at, Len: 1, Kind: KindBitrot})
		return Fired{Kind: KindBitrot, Path: fl.path, Offset: at, Bit: bit}, true
	}
	panic("disk: bitrot offset out of range")
}

// visible reports whether the page cache shows the durable byte at off:
// no pending operation changed it and its page is not stale.
func visible(n *inode, off int64) bool {
	if off >= n.data.size {
		return false
	}
	if _, ok := n.stale[int(off/pageSize)]; ok {
		return false
	}
	for i := range n.pending.len() {
		op := n.pending.at(i)
		if op.isTruncate() {
			if op.off <= off {
				return false
			}
		} else if off >= op.off && off < op.end() {
			return false
		}
	}
	return true
}

// Usage returns the bytes the disk's files use, the sum of their sizes as
// the program sees them (holes count in full), and the Capacity, 0 when
// unlimited. A truncate that grows a file is never refused, so used can
// exceed the capacity.
func (d *Disk) Usage() (used, capacity int64) { return d.used, d.capacity }

// FileInfo describes one regular file for `seedfall inspect`.
type FileInfo struct {
	Path        string
	Size        int64    // as the program sees it (page cache)
	DurableSize int64    // as a crash with nothing written back leaves it
	Pending     int      // data operations since its last fsync
	Damage      []Damage // corrupted ranges of the durable copy, by offset
}

// Files lists every regular file the program can reach by name, in Walk
// order (a file with two names is listed under both).
func (d *Disk) Files() []FileInfo {
	var out []FileInfo
	var walk func(prefix string, dir *inode)
	walk = func(prefix string, dir *inode) {
		for _, e := range dir.entries {
			switch n := e.node; n.typ {
			case TypeRegular:
				out = append(out, FileInfo{Path: prefix + e.name, Size: n.data.size, DurableSize: n.dur.size,
					Pending: n.pending.len(), Damage: slices.Clone(n.damage)})
			case TypeDirectory:
				walk(prefix+e.name+"/", n)
			}
		}
	}
	walk("", d.root)
	return out
}
