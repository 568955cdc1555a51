package disk

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestContentPages(t *testing.T) {
	d := newDisk(false)
	h := open(t, d, "f", Read|Write|Create)
	// A write straddling two page boundaries, after a hole.
	data := bytes.Repeat([]byte("x"), 2*pageSize)
	write(t, h, string(data), 3*pageSize-5)
	if h.Size() != 5*pageSize-5 {
		t.Fatalf("size = %d", h.Size())
	}
	got := make([]byte, h.Size()+10)
	n, _ := h.ReadAt(got, 0)
	want := append(make([]byte, 3*pageSize-5), data...)
	if n != len(want) || !bytes.Equal(got[:n], want) {
		t.Errorf("read back %d bytes, mismatch with the written data after a zero hole", n)
	}
	if n, e := h.ReadAt(got, h.Size()); n != 0 || e != 0 {
		t.Errorf("read at EOF = %d, %v; want 0, nil", n, e)
	}
	if n, e := h.ReadAt(got, h.Size()+100); n != 0 || e != 0 {
		t.Errorf("read past EOF = %d, %v; want 0, nil", n, e)
	}
	// Shrinking into the middle of a page and growing again shows zeros.
	ok(t, "truncate", h.Truncate(3*pageSize-2))
	ok(t, "truncate", h.Truncate(3*pageSize+4))
	tail := make([]byte, 10)
	n, _ = h.ReadAt(tail, 3*pageSize-5)
	if !bytes.Equal(tail[:n], []byte("xxx\x00\x00\x00\x00\x00\x00")) {
		t.Errorf("after shrink+grow: %q", tail[:n])
	}
}

// The cache and the durable copy share pages after WriteFile and after a
// crash; a write to one must never show through the other.
func TestContentSharedPages(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "aaaaaaaa")
	h := open(t, d, "f", Write)
	write(t, h, "B", 1)
	if dur, _ := d.ReadDurable("f"); string(dur) != "aaaaaaaa" {
		t.Errorf("durable after a cache write = %q", dur)
	}
	ok(t, "sync", h.Sync())
	write(t, h, "C", 2)
	if dur, _ := d.ReadDurable("f"); string(dur) != "aBaaaaaa" {
		t.Errorf("durable after sync + cache write = %q", dur)
	}
	d.Crash()
	h = open(t, d, "f", Write)
	write(t, h, "D", 3)
	ok(t, "truncate", h.Truncate(5))
	if dur, _ := d.ReadDurable("f"); string(dur) != "aBaaaaaa" {
		t.Errorf("durable after a post-crash write = %q", dur)
	}
	if got, _ := d.ReadFile("f"); string(got) != "aBaDa" {
		t.Errorf("cache = %q", got)
	}
}

// A random sequence of writes, truncates, syncs and crashes against a
// plain byte-slice model of the cache and the durable copy.
func TestContentRandomAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		d := newDisk(false)
		seed(t, d, "f", "")
		var cache, durable []byte
		h := open(t, d, "f", Read|Write)
		for step := range 300 {
			switch r := rng.IntN(10); {
			case r < 5:
				off := rng.Int64N(5 * pageSize)
				maxLen := 2 * pageSize
				if rng.IntN(2) == 0 {
					maxLen = 16 // small records land inside one page
				}
				p := make([]byte, rng.IntN(maxLen)+1)
				for i := range p {
					p[i] = byte(rng.IntN(255) + 1)
				}
				write(t, h, string(p), off)
				if need := off + int64(len(p)); need > int64(len(cache)) {
					cache = append(cache, make([]byte, need-int64(len(cache)))...)
				}
				copy(cache[off:], p)
			case r < 7:
				size := rng.Int64N(6 * pageSize)
				ok(t, "truncate", h.Truncate(size))
				if size < int64(len(cache)) {
					cache = cache[:size]
				} else {
					cache = append(cache, make([]byte, size-int64(len(cache)))...)
				}
			case r < 9:
				ok(t, "sync", h.Sync())
				durable = append([]byte(nil), cache...)
			default:
				d.Crash()
				cache = append([]byte(nil), durable...)
				h = open(t, d, "f", Read|Write)
			}
			got, _ := d.ReadFile("f")
			dur, _ := d.ReadDurable("f")
			if !bytes.Equal(got, cache) || !bytes.Equal(dur, durable) {
				t.Fatalf("round %d step %d: cache match %v (len %d vs %d), durable match %v (len %d vs %d)",
					round, step, bytes.Equal(got, cache), len(got), len(cache), bytes.Equal(dur, durable), len(dur), len(durable))
			}
		}
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		New(Options{})
	}
}

// The common durable-log pattern: append a 4 KiB record, fsync.
func BenchmarkAppendSync4K(b *testing.B) {
	d := New(Options{})
	h, _ := d.Open(d.Root(), "log", true, Write|Create)
	rec := bytes.Repeat([]byte("r"), 4096)
	var off int64
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		h.WriteAt(rec, off)
		h.Sync()
		off += int64(len(rec))
		if off >= 64<<20 { // keep memory bounded over long runs
			h.Truncate(0)
			h.Sync()
			off = 0
		}
	}
}

// Sync after one small write to a big file must cost O(pending), not
// O(file): compare with BenchmarkAppendSync4K.
func BenchmarkSmallWriteSyncBigFile(b *testing.B) {
	d := New(Options{})
	if err := d.WriteFile("big", make([]byte, 64<<20)); err != nil {
		b.Fatal(err)
	}
	h, _ := d.Open(d.Root(), "big", true, Write)
	rec := []byte("a small record")
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		h.WriteAt(rec, (i*7919*pageSize)%(64<<20-pageSize))
		h.Sync()
		i++
	}
}

func BenchmarkReadAt4K(b *testing.B) {
	d := New(Options{})
	d.WriteFile("f", make([]byte, 1<<20))
	h, _ := d.Open(d.Root(), "f", true, Read)
	buf := make([]byte, 4096)
	b.SetBytes(4096)
	b.ReportAllocs()
	i := int64(0)
	for b.Loop() {
		h.ReadAt(buf, (i*4096+100)%(1<<20-4096))
		i++
	}
}
