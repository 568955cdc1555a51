package disk

import (
	"bytes"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// mapOf maps [off, off+length) of h into a fresh buffer standing in for
// guest memory.
func mapOf(t *testing.T, h *Handle, off, length int64, writable bool) (*Mapping, []byte) {
	t.Helper()
	buf := make([]byte, length)
	m, e := h.Map(off, length, writable, func() []byte { return buf })
	ok(t, "map", e)
	return m, buf
}

func TestMappingSeesEveryWriteAtOnce(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "hello")
	r := open(t, d, "f", Read)
	m, buf := mapOf(t, r, 0, 3*PageSize, false)
	if !bytes.Equal(buf[:6], []byte("hello\x00")) {
		t.Fatalf("fill: %q", buf[:6])
	}
	r.Close() // the mapping outlives the handle
	w := open(t, d, "f", Write)
	write(t, w, "J", 0)
	write(t, w, "tail", PageSize+10) // extends the file across a page
	if buf[0] != 'J' || string(buf[PageSize+10:PageSize+14]) != "tail" {
		t.Fatalf("writes not visible: %q %q", buf[:5], buf[PageSize+10:PageSize+14])
	}
	ok(t, "truncate", w.Truncate(2))
	if string(buf[:3]) != "Je\x00" || buf[PageSize+10] != 0 {
		t.Fatalf("truncate not visible: %q", buf[:3])
	}
	ok(t, "grow", w.Truncate(3*PageSize))
	// Stores into a read-only mapping are never taken in.
	buf[5] = 'x'
	got := make([]byte, 6)
	w2 := open(t, d, "f", Read)
	if _, e := w2.ReadAt(got, 0); e != 0 || string(got) != "Je\x00\x00\x00\x00" {
		t.Fatalf("read %q %v", got, e)
	}
	m.Unmap()
	write(t, w, "Z", 0)
	if buf[0] != 'J' {
		t.Fatal("an unmapped buffer still follows the file")
	}
}

func TestWritableMappingStoresArePendingWrites(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", string(make([]byte, 2*PageSize)))
	h := open(t, d, "f", Read|Write)
	m, buf := mapOf(t, h, 0, 2*PageSize, true)
	ro, rbuf := mapOf(t, h, 0, PageSize, false)
	copy(buf[100:], "stored")
	// A read takes the stores in first, and the other mapping sees them.
	got := make([]byte, 6)
	if _, e := h.ReadAt(got, 100); e != 0 || string(got) != "stored" {
		t.Fatalf("read %q %v", got, e)
	}
	if string(rbuf[100:106]) != "stored" {
		t.Fatalf("read-only mapping did not follow the take-in: %q", rbuf[100:106])
	}
	if dur, _ := d.ReadDurable("f"); dur[100] != 0 {
		t.Fatal("a store is durable before any sync")
	}
	// A store on the second page, never taken in, dies with a crash.
	copy(buf[PageSize:], "lost")
	if n := len(d.MappedDirty()); n != 1 {
		t.Fatalf("dirty pages: %d, want 1", n)
	}
	if d.Mappings() != 0 {
		t.Fatal("MappedDirty left mappings live")
	}
	ro.Drop()
	m.Drop()
	d.Crash()
	data, _ := d.ReadFile("f")
	if data[100] != 0 || data[PageSize] != 0 {
		t.Fatalf("unsynced mapped stores survived: %q %q", data[100:106], data[PageSize:PageSize+4])
	}
}

func TestMappingSyncAndKeepMapped(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", string(make([]byte, 3*PageSize)))
	h := open(t, d, "f", Read|Write)
	m, buf := mapOf(t, h, 0, 3*PageSize, true)
	copy(buf, "synced")
	ok(t, "msync", m.Sync())
	copy(buf[PageSize:], "early")
	copy(buf[2*PageSize:], "dropped")
	pages := d.MappedDirty()
	if len(pages) != 2 || pages[0].Off != PageSize || pages[1].Off != 2*PageSize || pages[0].Path != "f" {
		t.Fatalf("dirty pages %+v", pages)
	}
	d.KeepMapped(pages[:1])
	d.Crash()
	data, _ := d.ReadFile("f")
	if string(data[:6]) != "synced" || string(data[PageSize:PageSize+5]) != "early" || data[2*PageSize] != 0 {
		t.Fatalf("after crash: %q %q %q", data[:6], data[PageSize:PageSize+5], data[2*PageSize:2*PageSize+7])
	}
}

func TestMapErrors(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "x")
	ro := open(t, d, "f", Read)
	wo := open(t, d, "f", Write)
	dir := open(t, d, ".", Read)
	mem := func() []byte { return make([]byte, PageSize) }
	for _, c := range []struct {
		h        *Handle
		off, n   int64
		writable bool
		want     errno.Errno
	}{
		{ro, 0, PageSize, true, errno.EACCES},
		{wo, 0, PageSize, false, errno.EACCES},
		{dir, 0, PageSize, false, errno.ENODEV},
		{ro, 1, PageSize, false, errno.EINVAL},
		{ro, 0, 0, false, errno.EINVAL},
	} {
		if _, e := c.h.Map(c.off, c.n, c.writable, mem); e != c.want {
			t.Errorf("map off %d len %d writable %v: %v, want %v", c.off, c.n, c.writable, e, c.want)
		}
	}
	ro.Close()
	if _, e := ro.Map(0, PageSize, false, mem); e != errno.EBADF {
		t.Errorf("map of a closed handle: %v", e)
	}
}

// An unlinked file stays mapped, and its cache lives until the unmap.
func TestMappingKeepsUnlinkedFile(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "abc")
	h := open(t, d, "f", Read|Write)
	m, buf := mapOf(t, h, 0, PageSize, true)
	h.Close()
	ok(t, "unlink", d.Unlink(d.Root(), "f"))
	buf[0] = 'z'
	m.Flush(0, PageSize)
	if d.used != 3 {
		t.Fatalf("used %d: the mapped file's cache was dropped", d.used)
	}
	m.Unmap()
	if d.used != 0 {
		t.Fatalf("used %d after unmap", d.used)
	}
}

func TestFlockLinuxSemantics(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "x")
	a := open(t, d, "f", Read)
	b := open(t, d, "f", Read)
	ok(t, "a sh", a.Flock(LockShared))
	ok(t, "b sh", b.Flock(LockShared))
	if e := b.Flock(LockExclusive); e != errno.EAGAIN {
		t.Fatalf("b ex while a shares: %v", e)
	}
	// The failed conversion dropped b's shared lock, as on Linux.
	ok(t, "a ex", a.Flock(LockExclusive))
	if e := b.Flock(LockShared); e != errno.EAGAIN {
		t.Fatalf("b sh while a holds ex: %v", e)
	}
	ok(t, "a ex again", a.Flock(LockExclusive))
	ok(t, "a downgrades", a.Flock(LockShared))
	ok(t, "b sh", b.Flock(LockShared))
	ok(t, "b un", b.Flock(Unlock))
	ok(t, "b un twice", b.Flock(Unlock))
	if e := a.Flock(99); e != errno.EINVAL {
		t.Fatalf("bad how: %v", e)
	}
	a.Close() // releases a's lock
	ok(t, "b ex after a closed", b.Flock(LockExclusive))
	if e := a.Flock(LockShared); e != errno.EBADF {
		t.Fatalf("closed handle: %v", e)
	}
	d.Crash()
	c := open(t, d, "f", Read)
	ok(t, "ex after crash", c.Flock(LockExclusive))
	if e := b.Flock(Unlock); e != errno.EBADF {
		t.Fatalf("stale handle: %v", e)
	}
}

// Bit rot the program can see shows in a mapping too.
func TestMappingSeesBitrot(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "abcd")
	h := open(t, d, "f", Read)
	_, buf := mapOf(t, h, 0, PageSize, false)
	fired, okk := d.Bitrot(func(n int) int { return 0 })
	if !okk || fired.Offset != 0 {
		t.Fatalf("bitrot %+v %v", fired, okk)
	}
	if buf[0] != 'a'^1 {
		t.Fatalf("mapping holds %q after bit rot of byte 0", buf[0])
	}
}

// Two writable mappings of one page each keep their own stores: taking in
// one merges its bytes into the other without undoing the other's.
func TestTwoWritableMappingsMergeStores(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", string(make([]byte, PageSize)))
	h := open(t, d, "f", Read|Write)
	_, a := mapOf(t, h, 0, PageSize, true)
	_, b := mapOf(t, h, 0, PageSize, true)
	a[1], b[2] = 'a', 'b'
	got := make([]byte, 4)
	if _, e := h.ReadAt(got, 0); e != 0 || string(got) != "\x00ab\x00" {
		t.Fatalf("read %q %v", got, e)
	}
	if a[2] != 'b' || b[1] != 'a' {
		t.Fatalf("mappings a=%q b=%q", a[:4], b[:4])
	}
}
