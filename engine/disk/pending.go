package disk

import (
	"math"
	"slices"
	"sort"
)

// The pending log of a file keeps each unsynced write's bytes once. A
// write's bytes are in the page cache when it happens, so its entry in the
// log holds only where it went; the live set says which bytes of the cache
// still hold it. Before anything changes those bytes in the cache (a later
// write over them, a truncate below them) they are saved with the write:
// copied out, or, for a page the change replaces in full and that holds
// nothing but this write's bytes, kept by taking the page from the cache,
// which then gets a new one. A write's bytes are therefore always either
// live in the cache or saved, never both, and every version of a byte that
// a crash could bring back is held exactly once. A crash model sees the
// log as []DataOp; each write's Data is made then (dataOps), from the
// cache or the saved bytes without a copy where they are one piece, and
// a whole page written back that the cache holds as it is becomes the
// durable copy's without a copy either (liveShare). Only an fsync or a
// crash reads saved bytes, so saving one only appends to the file's parts.

// pendOp is one pending data operation.
type pendOp struct {
	off int64 // a write: where its bytes go; a truncate: the new size
	n   int64 // a write: how many bytes; a truncate: -1
	seq uint64
}

func (op *pendOp) isTruncate() bool { return op.n < 0 }

func (op *pendOp) end() int64 { return op.off + op.n }

// savedPart is bytes [off, off+len(b)) of write op (an index into the
// pending log), no longer in the cache.
type savedPart struct {
	off int64
	b   []byte
	op  int
}

// chunked is a list that grows in chunks of listChunk elements rather than
// by reallocating, so a long one leaves no copies of itself behind as
// garbage; the first chunk grows as a slice, so a short one costs what it
// holds.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const listChunk = 1024

func (l *chunked[T]) len() int { return l.n }

func (l *chunked[T]) at(k int) *T { return &l.chunks[k/listChunk][k%listChunk] }

func (l *chunked[T]) push(v T) {
	if l.n%listChunk == 0 && l.n > 0 || len(l.chunks) == 0 {
		var c []T
		if l.n > 0 {
			c = make([]T, 0, listChunk)
		}
		l.chunks = append(l.chunks, c)
	}
	last := len(l.chunks) - 1
	l.chunks[last] = append(l.chunks[last], v)
	l.n++
}

// reset empties the list, keeping a small first chunk for reuse.
func (l *chunked[T]) reset() {
	if len(l.chunks) == 0 {
		return
	}
	first := l.chunks[0]
	if cap(first) > listKeep {
		*l = chunked[T]{}
		return
	}
	clear(first)
	l.chunks = l.chunks[:1:1]
	l.chunks[0] = first[:0]
	l.n = 0
}

// listKeep bounds the first chunk a list keeps when it is emptied.
const listKeep = 64

// liveSpan says that bytes [off, end) of the cache hold the bytes write op
// (an index into the pending log) wrote there.
type liveSpan struct {
	off, end int64
	op       int
}

// liveSet is a file's live spans, in offset order and disjoint, kept in
// chunks so that a change in the middle of many spans moves few of them.
type liveSet struct {
	chunks []liveChunk
	spare  []liveSpan // an emptied chunk's spans, for the next chunk made
}

// liveChunk is up to chunkSpans spans, sorted and never none.
type liveChunk struct {
	end   int64 // where the last span ends
	spans []liveSpan
}

const chunkSpans = 128

// chunkAt returns the index of the first chunk that ends after x.
func (s *liveSet) chunkAt(x int64) int {
	lo, hi := 0, len(s.chunks)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s.chunks[m].end > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// spanAt returns the index in c of the first span that ends after x.
func spanAt(c []liveSpan, x int64) int {
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m].end > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// before reports whether every span ends at or before x (the common case
// of a write that appends).
func (s *liveSet) before(x int64) bool {
	return len(s.chunks) == 0 || s.chunks[len(s.chunks)-1].end <= x
}

// collect appends to out the parts of live spans inside [x, y), in order.
func (s *liveSet) collect(x, y int64, out []liveSpan) []liveSpan {
	if x >= y {
		return out
	}
	for ci := s.chunkAt(x); ci < len(s.chunks); ci++ {
		c := s.chunks[ci].spans
		for j := spanAt(c, x); j < len(c); j++ {
			sp := c[j]
			if sp.off >= y {
				return out
			}
			out = append(out, liveSpan{max(sp.off, x), min(sp.end, y), sp.op})
		}
	}
	return out
}

// cut removes [x, y) from the set.
func (s *liveSet) cut(x, y int64) {
	if x >= y {
		return
	}
	ci := s.chunkAt(x)
	for ci < len(s.chunks) {
		c := s.chunks[ci].spans
		j := spanAt(c, x)
		if c[j].off >= y {
			return
		}
		if sp := c[j]; sp.off < x && sp.end > y { // [x, y) inside one span: split it
			c[j].end = x
			s.insert(ci, j+1, liveSpan{y, sp.end, sp.op})
			return
		}
		out := c[:j]
		k := j
		for ; k < len(c) && c[k].off < y; k++ {
			sp := c[k]
			if sp.off < x {
				out = append(out, liveSpan{sp.off, x, sp.op})
			}
			if sp.end > y {
				out = append(out, liveSpan{y, sp.end, sp.op})
			}
		}
		out = append(out, c[k:]...)
		clear(c[len(out):])
		if len(out) == 0 {
			s.spare = out
			s.chunks = slices.Delete(s.chunks, ci, ci+1)
		} else {
			s.chunks[ci] = liveChunk{out[len(out)-1].end, out}
			ci++
		}
		if k < len(c) {
			return // the chunk had spans past y: nothing further is in range
		}
	}
}

// add puts [x, y) for op into the set; no span may overlap it.
func (s *liveSet) add(x, y int64, op int) {
	sp := liveSpan{x, y, op}
	if s.before(x) { // past every span: the common append
		if last := len(s.chunks) - 1; last >= 0 && len(s.chunks[last].spans) < chunkSpans {
			s.chunks[last] = liveChunk{y, append(s.chunks[last].spans, sp)}
		} else {
			s.chunks = append(s.chunks, liveChunk{y, append(s.newSpans(len(s.chunks) > 0), sp)})
		}
		return
	}
	ci := s.chunkAt(x)
	s.insert(ci, spanAt(s.chunks[ci].spans, x), sp)
}

// reset empties the set, keeping a small first chunk's room for reuse.
func (s *liveSet) reset() {
	if s.spare != nil && cap(s.spare) > 16 {
		s.spare = nil
	}
	if len(s.chunks) > 0 && cap(s.chunks[0].spans) <= 16 {
		c := s.chunks[0].spans
		clear(c)
		s.spare = c[:0]
	}
	if cap(s.chunks) > 16 {
		s.chunks = nil
	} else {
		clear(s.chunks)
		s.chunks = s.chunks[:0]
	}
}

// newSpans returns an empty slice for a chunk's spans: room for all of
// them when full, else a little, to grow with use, as a file's first chunk
// does; a file with few pending writes then costs little.
func (s *liveSet) newSpans(full bool) []liveSpan {
	if c := s.spare; c != nil && (!full || cap(c) == chunkSpans) {
		s.spare = nil
		return c[:0]
	}
	if !full {
		return make([]liveSpan, 0, 4)
	}
	return make([]liveSpan, 0, chunkSpans)
}

// insert puts sp at index j of chunk ci, splitting the chunk when full.
func (s *liveSet) insert(ci, j int, sp liveSpan) {
	c := s.chunks[ci].spans
	if len(c) < chunkSpans {
		c = slices.Insert(c, j, sp)
		s.chunks[ci] = liveChunk{c[len(c)-1].end, c}
		return
	}
	half := len(c) / 2
	lo := c[:half]
	hi := append(s.newSpans(true), c[half:]...)
	clear(c[half:])
	if j <= half {
		lo = slices.Insert(lo, j, sp)
	} else {
		hi = slices.Insert(hi, j-half, sp)
	}
	s.chunks[ci] = liveChunk{lo[len(lo)-1].end, lo}
	s.chunks = slices.Insert(s.chunks, ci+1, liveChunk{hi[len(hi)-1].end, hi})
}

// Saved bytes of up to arenaMax bytes are copied into arena chunks of up to
// arenaChunk bytes rather than allocated one by one; bigger ones get an
// allocation of their own. A chunk is never reused: crash models may keep
// the Data they were given.
const (
	arenaMax   = 8 << 10
	arenaChunk = 64 << 10
)

// keep returns room for size saved bytes.
func (n *inode) keep(size int) []byte {
	if size > arenaMax {
		return make([]byte, size)
	}
	if cap(n.arena)-len(n.arena) < size {
		c := min(arenaChunk, max(4096, 2*cap(n.arena), size))
		n.arena = make([]byte, 0, c)
	}
	start := len(n.arena)
	n.arena = n.arena[:start+size]
	return n.arena[start : start+size : start+size]
}

// release saves the bytes of pending writes that [x, y) of the cache
// holds, before the caller changes them, and forgets that they are live.
// The caller then replaces every page wholly inside [x, y) (a write over
// it, or a truncate that drops it), so such a page, when it holds nothing
// but one write's bytes, is taken from the cache instead of copied.
func (n *inode) release(x, y int64) {
	if x >= y || n.live.before(x) {
		return
	}
	var buf [16]liveSpan
	spans := n.live.collect(x, y, buf[:0])
	for _, sp := range spans {
		p0, p1 := (sp.off+pageSize-1)/pageSize, sp.end/pageSize // whole pages of the span
		if p0 >= p1 {
			n.saveCopy(sp.op, sp.off, sp.end)
			continue
		}
		n.saveCopy(sp.op, sp.off, p0*pageSize)
		for pg := p0; pg < p1; pg++ {
			if pg < int64(len(n.dur.pages)) && n.dur.pages[pg] == n.data.pages[pg] {
				// Never so: a write copies a page it shares with the
				// durable copy first, and only an fsync or a crash, which
				// end the log, shares one again. But the durable copy
				// writes its own pages in place, so never give it one.
				n.saveCopy(sp.op, pg*pageSize, (pg+1)*pageSize)
				continue
			}
			n.save(sp.op, pg*pageSize, n.data.pages[pg][:])
			n.data.pages[pg] = nil
		}
		n.saveCopy(sp.op, p1*pageSize, sp.end)
	}
	n.live.cut(x, y)
}

// saveCopy saves a copy of the cache's bytes [from, to) for write k.
func (n *inode) saveCopy(k int, from, to int64) {
	if from >= to {
		return
	}
	b := n.keep(int(to - from))
	n.data.readAt(b, from)
	n.save(k, from, b)
}

// save records b as write k's bytes at off.
func (n *inode) save(k int, off int64, b []byte) {
	n.parts.push(savedPart{off: off, b: b, op: k})
}

// partIndex says where each write's saved parts are: the parts of write k
// are parts.at(order[start[k]]) to parts.at(order[start[k+1]-1]), by
// offset. Nothing needs that between an fsync or a crash, so save only
// appends, and an fsync or a crash builds it once: a counting sort, linear
// in parts and writes, in 4 bytes of each.
type partIndex struct {
	start []int32
	order []int32
}

func (n *inode) partIndex() partIndex {
	if n.parts.len() == 0 {
		return partIndex{}
	}
	if n.parts.len() >= math.MaxInt32 {
		panic("disk: too many saved parts of pending writes")
	}
	start := make([]int32, n.pending.len()+1)
	for i := range n.parts.len() {
		start[n.parts.at(i).op+1]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	order := make([]int32, n.parts.len())
	next := slices.Clone(start)
	for i := range n.parts.len() {
		k := n.parts.at(i).op
		order[next[k]] = int32(i)
		next[k]++
	}
	byOff := func(a, b int32) int { return cmpInt(n.parts.at(int(a)).off, n.parts.at(int(b)).off) }
	for k := range len(start) - 1 { // parts of a write are mostly saved in offset order
		if g := order[start[k]:start[k+1]]; len(g) > 1 && !slices.IsSortedFunc(g, byOff) {
			slices.SortFunc(g, byOff)
		}
	}
	return partIndex{start, order}
}

// partsOf appends write k's saved parts to buf, by offset.
func (n *inode) partsOf(ix partIndex, k int, buf []savedPart) []savedPart {
	if ix.start == nil {
		return buf
	}
	for _, i := range ix.order[ix.start[k]:ix.start[k+1]] {
		buf = append(buf, *n.parts.at(int(i)))
	}
	return buf
}

// opSource is where a pending write's bytes are: its saved parts (from
// partsOf), and the file's cache for the rest, which is live there.
type opSource struct {
	n     *inode
	parts []savedPart
}

// fill fills dst with the write's bytes at [at, at+len(dst)).
func (src opSource) fill(dst []byte, at int64) {
	n, parts := src.n, src.parts
	if len(parts) == 0 {
		n.data.readAt(dst, at)
		return
	}
	i := sort.Search(len(parts), func(i int) bool { return parts[i].off+int64(len(parts[i].b)) > at })
	end := at + int64(len(dst))
	for pos := at; pos < end; {
		if i < len(parts) && parts[i].off <= pos {
			p := parts[i]
			pos += int64(copy(dst[pos-at:], p.b[pos-p.off:]))
			i++
			continue
		}
		next := end
		if i < len(parts) {
			next = min(end, parts[i].off)
		}
		n.data.readAt(dst[pos-at:next-at], pos)
		pos = next
	}
}

// dataOps returns the pending log as a crash model sees it. A write's
// Data shares the bytes where they are one piece (saved whole, or live
// within one page of the cache) and is a copy otherwise.
func (n *inode) dataOps() []DataOp {
	out := make([]DataOp, n.pending.len())
	ix := n.partIndex()
	var parts []savedPart
	for k := range out {
		op := n.pending.at(k)
		if op.isTruncate() {
			out[k] = DataOp{Kind: DataTruncate, Size: op.off, Seq: op.seq}
			continue
		}
		parts = n.partsOf(ix, k, parts[:0])
		var data []byte
		switch {
		case len(parts) == 1 && int64(len(parts[0].b)) == op.n:
			data = parts[0].b
		case len(parts) == 0 && op.off/pageSize == (op.end()-1)/pageSize:
			o := op.off % pageSize
			data = n.data.pages[op.off/pageSize][o : o+op.n]
		default:
			data = make([]byte, op.n)
			opSource{n, parts}.fill(data, op.off)
		}
		out[k] = DataOp{Kind: DataWrite, Off: op.off, Data: data[:op.n:op.n], Seq: op.seq}
	}
	return out
}

// liveShare returns, for a write a crash writes back, which whole pages it
// writes that the cache holds as they are: op is part of a pending write's
// Data as log (from dataOps) gave it, at its own offset, and that write's
// bytes are live over all of page i. Any other op shares nothing.
func (n *inode) liveShare(log []DataOp, op *DataOp) func(i int) bool {
	no := func(int) bool { return false }
	k, found := sort.Find(len(log), func(k int) int { return cmpUint(op.Seq, log[k].Seq) })
	if !found || len(op.Data) == 0 {
		return no
	}
	src := &log[k]
	if src.Kind != DataWrite || op.Off < src.Off || op.Off+int64(len(op.Data)) > src.Off+int64(len(src.Data)) ||
		&op.Data[0] != &src.Data[op.Off-src.Off] {
		return no
	}
	return func(i int) bool {
		var buf [2]liveSpan
		sp := n.live.collect(int64(i)*pageSize, int64(i+1)*pageSize, buf[:0])
		return len(sp) == 1 && sp[0].op == k && sp[0].off == int64(i)*pageSize && sp[0].end == int64(i+1)*pageSize
	}
}
