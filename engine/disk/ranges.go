package disk

// span is the half-open byte range [off, end) of a file.
type span struct{ off, end int64 }

// spans is a set of byte ranges, sorted and without overlap or adjacency.
// Crash corruption uses it for the bytes a crash wrote back; damage records
// use it for what a fault broke on disk.
type spans []span

// add puts [off, end) into the set.
func (s *spans) add(off, end int64) {
	if off >= end {
		return
	}
	out := (*s)[:0:0]
	placed := false
	for _, r := range *s {
		switch {
		case r.end < off:
			out = append(out, r)
		case r.off > end:
			if !placed {
				out = append(out, span{off, end})
				placed = true
			}
			out = append(out, r)
		default: // overlaps or touches: merge into the new range
			off, end = min(off, r.off), max(end, r.end)
		}
	}
	if !placed {
		out = append(out, span{off, end})
	}
	*s = out
}

// cut removes [off, end) from the set.
func (s *spans) cut(off, end int64) {
	if off >= end || len(*s) == 0 {
		return
	}
	out := (*s)[:0:0]
	for _, r := range *s {
		if r.end <= off || r.off >= end {
			out = append(out, r)
			continue
		}
		if r.off < off {
			out = append(out, span{r.off, off})
		}
		if r.end > end {
			out = append(out, span{end, r.end})
		}
	}
	*s = out
}

// total is the number of bytes in the set.
func (s spans) total() int64 {
	var t int64
	for _, r := range s {
		t += r.end - r.off
	}
	return t
}

// nth returns the offset of the i-th byte of the set, counting from 0 in
// offset order; i must be below total().
func (s spans) nth(i int64) int64 {
	for _, r := range s {
		if n := r.end - r.off; i < n {
			return r.off + i
		} else {
			i -= n
		}
	}
	panic("disk: spans.nth out of range")
}
