package disk

import (
	"slices"
	"sort"

	"github.com/seedfall/seedfall/engine/errno"
)

// An fsync that takes time. On Linux an fsync makes durable what was
// written before it started; what other threads write to the file (or
// into the directory) while it runs is left as dirty page cache, which a
// later fsync or the writeback a crash model allows may or may not make
// durable. SyncMark is the start of such an fsync and SyncTo its
// completion: every pending operation is numbered (DataOp.Seq, DirOp.Seq),
// a mark is the last number given out when the fsync started, and SyncTo
// makes durable the operations numbered up to it.
//
// The operations after the mark stay pending exactly as they were logged:
// in order, each write with its own bytes (still live in the page cache,
// or saved when a later write replaced them), so every crash model sees
// them as the writes they were. The operations up to the mark become
// durable with their own bytes too: a byte one of them wrote that a later
// one has since overwritten is written from the bytes saved for it, not
// from the page cache.
//
// Sync is SyncTo(SyncMark()): when nothing was logged for the file after
// the mark, the common case, SyncTo is Sync and costs what it does.

// SyncMark returns a mark for this moment: SyncTo(mark) later makes durable
// exactly what Sync would have made durable if called now. For a file with
// shared mappings, their stores are taken in now, as Sync does, so they are
// before the mark. It is not a disk operation; an invalid handle gives 0.
func (h *Handle) SyncMark() uint64 {
	if h.check() != 0 {
		return 0
	}
	if len(h.n.maps) > 0 {
		h.d.takeIn(h.n, 0, h.n.data.size)
	}
	return h.d.seq
}

// SyncTo is the completion of an fsync started at mark (from SyncMark on
// this disk):
//
//   - A file: its pending writes and truncates logged up to mark become
//     durable, each with the bytes it wrote, and its durable size becomes
//     the size they give it. Everything logged after mark stays pending,
//     in order, with its own bytes, for a later Sync or SyncTo, or a crash
//     model, to decide. The durable times are the file's times at the
//     completion.
//   - A directory (strict dirs): its pending entries logged up to mark
//     become durable, with the earlier operations they depend on, as Sync
//     decides them; entries logged after mark stay pending.
//
// It counts as one disk op, an fsync (Options.OnOp sees OpSync), and the
// sync faults apply as they do to Sync, to what it makes durable:
// FailSync drops the operations up to mark from durable storage and
// leaves the later ones pending; LoseWrite and MisdirectWrite pick a page
// the operations up to mark write. A mark older than operations that an
// earlier Sync or SyncTo already made durable is no error: they are not
// written again.
func (h *Handle) SyncTo(mark uint64) errno.Errno { return h.SyncToAs(mark, SyncFsync) }

// SyncToAs is SyncTo asked for by another call than fsync (fdatasync, a
// write through O_SYNC), which only Options.Weaken tells apart.
func (h *Handle) SyncToAs(mark uint64, kind SyncKind) errno.Errno {
	if e := h.check(); e != 0 {
		return e
	}
	n := h.n
	if h.d.weakened(n, mark, kind) {
		return 0
	}
	if e := h.d.syncOp(n, mark); e != 0 {
		return e
	}
	switch n.typ {
	case TypeRegular:
		h.d.syncFileTo(n, mark)
	case TypeDirectory:
		h.d.syncDir(n, mark)
	}
	return 0
}

// syncOp numbers an fsync up to mark and asks the hook about it.
func (d *Disk) syncOp(n *inode, mark uint64) errno.Errno {
	d.syncMark = mark
	return d.op(OpSync, n, 0, 0)
}

// syncFileTo makes the file's pending operations up to mark durable.
func (d *Disk) syncFileTo(n *inode, mark uint64) {
	k := n.opsTo(mark)
	if k == n.pending.len() {
		d.syncFile(n)
		return
	}
	if k > 0 {
		n.syncPrefix(k)
	}
	n.durAtim, n.durMtim, n.durCtim = n.atim, n.mtim, n.ctim
}

// opsTo returns how many of the file's pending operations were logged at
// or before mark: they come first, as the log is in Seq order.
func (n *inode) opsTo(mark uint64) int {
	l := n.pending.len()
	if l == 0 || n.pending.at(l-1).seq <= mark {
		return l
	}
	return sort.Search(l, func(k int) bool { return n.pending.at(k).seq > mark })
}

// atMark returns how many pending operations are up to mark and the size
// the page cache had after them.
func (n *inode) atMark(mark uint64) (int, int64) {
	k := n.opsTo(mark)
	return k, n.sizeAt(k)
}

// sizeAt returns the page cache's size after the first k pending
// operations.
func (n *inode) sizeAt(k int) int64 {
	if k == n.pending.len() {
		return n.data.size
	}
	size := n.pendBase
	for j := range k {
		op := n.pending.at(j)
		if op.isTruncate() {
			size = op.off
		} else {
			size = max(size, op.end())
		}
	}
	return size
}

// changed returns the bytes that pending operations [from, to) changed in
// the page cache: each write's range, and from a truncate's size on.
func (n *inode) changed(from, to int) spans {
	var rs spans
	for j := from; j < to; j++ {
		op := n.pending.at(j)
		switch {
		case op.isTruncate():
			rs = append(rs, span{op.off, maxFileSize + 1})
		case op.n > 0:
			rs = append(rs, span{op.off, op.end()})
		}
	}
	if len(rs) == 0 {
		return nil
	}
	slices.SortFunc(rs, func(a, b span) int { return cmpInt(a.off, b.off) })
	out := rs[:1]
	for _, r := range rs[1:] {
		if last := &out[len(out)-1]; r.off <= last.end {
			last.end = max(last.end, r.end)
		} else {
			out = append(out, r)
		}
	}
	return out
}

// hits reports whether any byte of [x, y) is in the set.
func (s spans) hits(x, y int64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i].end > x })
	return i < len(s) && s[i].off < y
}

// syncPrefix makes the first k pending operations durable, 0 < k < all of
// them, and leaves the rest pending. It is syncFile with two differences.
// A page that a later operation changed holds bytes this fsync must not
// write, so the durable copy never shares it with the cache and each
// write's bytes come from the write's own source. And a stale page that it
// writes in full is the page as it was at the mark: the cache's bytes,
// except where later operations changed them, which are as the durable
// copy now has them.
func (n *inode) syncPrefix(k int) {
	later := n.changed(k, n.pending.len())
	touched, size := n.writeBack(k, later)
	if len(n.stale) > 0 {
		n.dropStale(size)
	}
	if len(touched) > 0 {
		n.dur.truncate(size, &n.data)
		for _, pg := range touched {
			if _, ok := n.stale[pg]; !ok || pg >= len(n.dur.pages) {
				continue
			}
			lo := int64(pg) * pageSize
			if pg < len(n.data.pages) && !later.hits(lo, lo+pageSize) {
				n.dur.pages[pg] = n.data.pages[pg] // shared: same index, writers copy
			} else {
				n.dur.pages[pg] = n.pageAtMark(pg, size, later)
			}
			delete(n.stale, pg)
			n.heal(lo, lo+pageSize)
		}
	}
	n.dropPendingTo(k, size)
}

// writeBack makes the first k pending operations durable in the durable
// copy, each write with its own bytes, except that bytes in later are
// never shared with the cache. It heals the damage they cover and returns
// the stale pages they wrote to and the file's size after them.
func (n *inode) writeBack(k int, later spans) (touched []int, size int64) {
	size = n.pendBase
	ix := n.partIndex()
	src := opSource{n: n}
	for j := range k {
		op := n.pending.at(j)
		if op.isTruncate() {
			n.dur.truncate(op.off, &n.data)
			if len(n.damage) > 0 {
				n.heal(op.off, maxFileSize+1)
			}
			size = op.off
			continue
		}
		src.parts = n.partsOf(ix, j, src.parts[:0])
		n.dur.syncWrite(&n.data, op.off, op.n, src, later)
		if len(n.damage) > 0 {
			n.heal(op.off, op.end())
		}
		if len(n.stale) > 0 && op.n > 0 {
			for pg := int(op.off / pageSize); int64(pg)*pageSize < op.end(); pg++ {
				if _, ok := n.stale[pg]; ok {
					touched = append(touched, pg)
				}
			}
		}
		size = max(size, op.end())
	}
	return touched, size
}

// pageAtMark returns a new copy of page pg of the cache as it was at the
// mark, for a file of size bytes then: where later operations changed
// it, the durable copy's bytes, which hold every write up to the mark.
func (n *inode) pageAtMark(pg int, size int64, later spans) *page {
	img := new(page)
	lo := int64(pg) * pageSize
	if pg < len(n.data.pages) && n.data.pages[pg] != nil {
		*img = *n.data.pages[pg]
	}
	i := sort.Search(len(later), func(i int) bool { return later[i].end > lo })
	for ; i < len(later) && later[i].off < lo+pageSize; i++ {
		a, b := max(later[i].off, lo), min(later[i].end, lo+pageSize)
		got := n.dur.readAt(img[a-lo:b-lo], a)
		clear(img[a-lo+int64(got) : b-lo])
	}
	if end := size - lo; end < pageSize {
		clear(img[max(end, 0):])
	}
	return img
}

// failPrefix is fsync_eio for the first k pending operations, k below all
// of them: they are dropped from durable storage, the pages they wrote
// that differ from the durable copy become stale, and the rest of the log
// stays pending.
func (n *inode) failPrefix(k int) {
	if k == 0 {
		return
	}
	size := n.sizeAt(k)
	for _, r := range n.changed(0, k) {
		last := min(int64(len(n.data.pages)), (r.end+pageSize-1)/pageSize)
		for pg := r.off / pageSize; pg < last; pg++ {
			n.markStaleAt(int(pg))
		}
	}
	n.dropPendingTo(k, size)
}

// dropPendingTo forgets the first k pending operations, fewer than all of
// them, and their saved bytes; the rest stay pending as they were, the
// page cache's size before them being base. The live set and the saved
// parts refer to operations by index, so theirs move down by k.
func (n *inode) dropPendingTo(k int, base int64) {
	var pend chunked[pendOp]
	for j := k; j < n.pending.len(); j++ {
		pend.push(*n.pending.at(j))
	}
	var parts chunked[savedPart]
	for i := range n.parts.len() {
		if p := *n.parts.at(i); p.op >= k {
			p.op -= k
			parts.push(p)
		}
	}
	var live liveSet
	for _, c := range n.live.chunks {
		for _, sp := range c.spans {
			if sp.op >= k {
				live.add(sp.off, sp.end, sp.op-k)
			}
		}
	}
	n.pending, n.parts, n.live = pend, parts, live
	n.pendBase = base
	// n.arena stays: the parts kept may hold bytes in it.
}
