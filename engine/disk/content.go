package disk

// pageSize is the unit of storage and of later writeback faults (torn and
// reordered writeback, lost and misdirected writes all work on 4 KiB pages).
const pageSize = 4096

// maxFileSize bounds a file's size. Pages are kept in a flat slice, so a
// sparse file costs 8 bytes per 4 KiB of apparent size; 64 GiB of holes is
// 128 MiB of pointers, which is where we say EFBIG rather than exhaust memory.
const maxFileSize = 1 << 36

type page [pageSize]byte

// content is the bytes of one file, either its page cache or its durable
// copy. A nil page is a hole and reads as zeros. Bytes past size in the last
// page are always zero, so growing a file never reveals old data.
//
// The cache and the durable copy of one inode may share pages (after a
// crash, after WriteFile). A page is shared exactly when both hold the same
// pointer at the same index; the side that writes copies it first. No page
// is ever shared between inodes or at different indices.
type content struct {
	size  int64
	pages []*page
}

// clone returns a copy that shares every page; writes copy on demand.
func (c *content) clone() content {
	if len(c.pages) == 0 {
		return content{size: c.size}
	}
	return content{size: c.size, pages: append([]*page(nil), c.pages...)}
}

func (c *content) readAt(p []byte, off int64) int {
	if off >= c.size {
		return 0
	}
	n := len(p)
	if rem := c.size - off; int64(n) > rem {
		n = int(rem)
	}
	done := 0
	for done < n {
		i := int((off + int64(done)) / pageSize)
		o := int((off + int64(done)) % pageSize)
		k := min(pageSize-o, n-done)
		if pg := c.pages[i]; pg != nil {
			copy(p[done:done+k], pg[o:o+k])
		} else {
			clear(p[done : done+k])
		}
		done += k
	}
	return n
}

// own returns page i ready to be written, copying it if other shares it.
func (c *content) own(i int, other *content) *page {
	pg := c.pages[i]
	if pg == nil {
		pg = new(page)
		c.pages[i] = pg
		return pg
	}
	if other != nil && i < len(other.pages) && other.pages[i] == pg {
		np := new(page)
		*np = *pg
		c.pages[i] = np
		return np
	}
	return pg
}

func pagesFor(size int64) int { return int((size + pageSize - 1) / pageSize) }

// grow makes room for size bytes of pages; new pages are holes.
func (c *content) grow(size int64) {
	if n := pagesFor(size); n > len(c.pages) {
		if n <= cap(c.pages) {
			c.pages = c.pages[:n]
		} else {
			np := make([]*page, n, max(n, 2*cap(c.pages)))
			copy(np, c.pages)
			c.pages = np
		}
	}
}

// writeAt writes p at off; the caller has checked off+len(p) <= maxFileSize.
func (c *content) writeAt(p []byte, off int64, other *content) {
	if len(p) == 0 {
		return
	}
	end := off + int64(len(p))
	c.grow(end)
	done := 0
	for done < len(p) {
		i := int((off + int64(done)) / pageSize)
		o := int((off + int64(done)) % pageSize)
		k := min(pageSize-o, len(p)-done)
		pg := c.own(i, other)
		copy(pg[o:o+k], p[done:done+k])
		done += k
	}
	if end > c.size {
		c.size = end
	}
}

// crashWrite is writeAt for what a crash writes back to the durable copy
// of the file whose page cache is cache. Where p covers a whole page that
// holds the same bytes in the cache (share says so for page i, or p is that
// page itself), the durable copy shares the cache's page instead of copying
// it: the cache becomes a clone of the durable copy after the crash anyway.
func (c *content) crashWrite(p []byte, off int64, cache *content, share func(i int) bool) {
	if len(p) == 0 {
		return
	}
	end := off + int64(len(p))
	c.grow(end)
	for at := off; at < end; {
		i := int(at / pageSize)
		o := int(at % pageSize)
		k := min(pageSize-o, int(end-at))
		src := p[at-off : at-off+int64(k)]
		if k == pageSize && i < len(cache.pages) && cache.pages[i] != nil && (&cache.pages[i][0] == &src[0] || share(i)) {
			c.pages[i] = cache.pages[i]
		} else {
			copy(c.own(i, cache)[o:o+k], src)
		}
		at += int64(k)
	}
	if end > c.size {
		c.size = end
	}
}

func (c *content) truncate(size int64, other *content) {
	switch {
	case size < c.size:
		n := pagesFor(size)
		if o := int(size % pageSize); o != 0 && c.pages[n-1] != nil {
			pg := c.own(n-1, other)
			clear(pg[o:])
		}
		clear(c.pages[n:]) // let dropped pages be collected
		c.pages = c.pages[:n]
	case size > c.size:
		c.grow(size)
	}
	c.size = size
}

// syncWrite applies one pending write, of length bytes at off, of the file
// whose page cache is cache, as fsync does with the whole log in order,
// taking the write's bytes from src. Where the durable copy has no page of
// its own, it takes the cache's page instead of copying into a new one, so
// bulk and page-aligned writes are kept once, not twice. A shared page
// already holds the final content of this fsync, which the later
// operations of the log would only write again, so they skip it.
//
// An fsync of part of the log (SyncTo) passes in later the bytes that the
// operations it leaves pending changed: a page that has some holds bytes
// this fsync must not make durable, so it is never shared, only filled
// from src. Any other page holds what it will once this fsync is done.
func (c *content) syncWrite(cache *content, off, length int64, src opSource, later spans) {
	if length == 0 {
		return
	}
	end := off + length
	c.grow(end)
	for at := off; at < end; {
		i := int(at / pageSize)
		o := int(at % pageSize)
		k := min(pageSize-o, int(end-at))
		pg := c.pages[i]
		var cpg *page
		if i < len(cache.pages) {
			cpg = cache.pages[i]
		}
		if later != nil && later.hits(int64(i)*pageSize, int64(i+1)*pageSize) {
			cpg = nil // not this fsync's content: fill from src
		}
		switch {
		case pg != nil && pg == cpg:
		case pg == nil && cpg != nil:
			c.pages[i] = cpg
		default:
			src.fill(c.own(i, cache)[o:o+k], at)
		}
		at += int64(k)
	}
	if end > c.size {
		c.size = end
	}
}

// apply performs one logged data operation.
func (c *content) apply(op *DataOp, other *content) {
	switch op.Kind {
	case DataWrite:
		c.writeAt(op.Data, op.Off, other)
	case DataTruncate:
		c.truncate(op.Size, other)
	}
}
