package disk

import (
	"fmt"
	"slices"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// faulty is a disk whose OnOp applies one armed fault to the next
// operation of a kind, as the engine does once it has drawn the fault.
type faulty struct {
	d     *Disk
	kind  OpKind
	apply func(op Op) errno.Errno
	fired []Fired
}

func newFaulty(strict bool, capacity int64) *faulty {
	f := &faulty{}
	var clock int64 = 1_000_000_000
	f.d = New(Options{StrictDirs: strict, Capacity: capacity, Now: func() int64 { clock++; return clock }, OnOp: f.onOp})
	return f
}

func (f *faulty) onOp(op Op) errno.Errno {
	if f.apply == nil || op.Kind != f.kind {
		return 0
	}
	a := f.apply
	f.apply = nil
	return a(op)
}

func (f *faulty) arm(kind OpKind, a func(op Op) errno.Errno) { f.kind, f.apply = kind, a }

// record applies a fault method and keeps what it reports.
func (f *faulty) record(fr Fired, ok bool) {
	if ok {
		f.fired = append(f.fired, fr)
	}
}

// readAll reads the whole file through a handle, as the program does.
func readAll(t *testing.T, d *Disk, path string) (string, errno.Errno) {
	t.Helper()
	h := open(t, d, path, Read)
	defer h.Close()
	buf := make([]byte, h.Size())
	n, e := h.ReadAt(buf, 0)
	return show(buf[:n]), e
}

func writeN(t *testing.T, d *Disk, path, data string, off int64) string {
	t.Helper()
	h := open(t, d, path, Write|Create)
	defer h.Close()
	n, e := h.WriteAt([]byte(data), off)
	if e != 0 {
		return fmt.Sprintf("n=%d %v", n, e)
	}
	return fmt.Sprintf("n=%d", n)
}

func syncErr(t *testing.T, d *Disk, path string) errno.Errno {
	t.Helper()
	h := open(t, d, path, Read)
	defer h.Close()
	return h.Sync()
}

// TestDiskFaultTable has one row per row of the spec's disk fault table:
// what the program sees, and what is on disk after a crash that keeps
// only what is durable.
func TestDiskFaultTable(t *testing.T) {
	cases := []struct {
		name     string
		capacity int64
		run      func(t *testing.T, f *faulty) string // what the program sees
		sees     string
		after    string
		fired    []Fired
	}{
		{"disk_bytes: a short write, then ENOSPC", 10, func(t *testing.T, f *faulty) string {
			d := f.d
			a := writeN(t, d, "a", "123456", 0)
			b := writeN(t, d, "b", "abcdef", 0)
			c := writeN(t, d, "b", "gh", 4)
			fsync(t, d, "a")
			fsync(t, d, "b")
			return a + "; " + b + "; " + c
		}, "n=6; n=4; n=0 ENOSPC", "a=123456 b=abcd", nil},
		{"write_eio: the write fails", 0, func(t *testing.T, f *faulty) string {
			f.arm(OpWrite, func(Op) errno.Errno { return errno.EIO })
			s := writeN(t, f.d, "a", "new", 0)
			fsync(t, f.d, "a")
			return s
		}, "n=0 EIO", "a=old", nil},
		{"write_enospc: the write fails", 0, func(t *testing.T, f *faulty) string {
			f.arm(OpWrite, func(Op) errno.Errno { return errno.ENOSPC })
			s := writeN(t, f.d, "a", "new", 0)
			fsync(t, f.d, "a")
			return s
		}, "n=0 ENOSPC", "a=old", nil},
		{"read_eio: the read fails", 0, func(t *testing.T, f *faulty) string {
			f.arm(OpRead, func(Op) errno.Errno { return errno.EIO })
			_, e := readAll(t, f.d, "a")
			return e.Error()
		}, "EIO", "a=old", nil},
		{"read_corrupt: one bit flipped in the bytes of one read", 0, func(t *testing.T, f *faulty) string {
			f.arm(OpRead, func(op Op) errno.Errno { f.record(f.d.CorruptRead(op, func(int) int { return 8*1 + 2 })); return 0 })
			first, _ := readAll(t, f.d, "a")
			again, _ := readAll(t, f.d, "a")
			return first + " then " + again
		}, "ohd then old", "a=old", []Fired{{Kind: KindReadCorrupt, Path: "a", Offset: 1, Bit: 2}}},
		{"lost_write: fsync succeeds and reads return the new content", 0, func(t *testing.T, f *faulty) string {
			writeN(t, f.d, "a", "new", 0)
			f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.LoseWrite(op, func(int) int { return 0 })); return 0 })
			e := syncErr(t, f.d, "a")
			s, _ := readAll(t, f.d, "a")
			return fmt.Sprintf("fsync %v; %s", e, s)
		}, "fsync SUCCESS; new", "a=old", []Fired{{Kind: KindLostWrite, Path: "a"}}},
		{"misdirected_write: fsync succeeds and reads return the new content", 0, func(t *testing.T, f *faulty) string {
			seed(t, f.d, "a", fill('A', pageSize)+"BB")
			writeN(t, f.d, "a", "x", pageSize) // page 1, lands on page 0
			f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.MisdirectWrite(op, func(int) int { return 0 })); return 0 })
			e := syncErr(t, f.d, "a")
			s, _ := readAll(t, f.d, "a")
			return fmt.Sprintf("fsync %v; %s", e, s)
		}, "fsync SUCCESS; {A*4096}xB", "a=xB{0*4094}BB", // page 0 holds page 1's 4 KiB, page 1 its old content
			[]Fired{{Kind: KindMisdirectedWrite, Path: "a", Offset: pageSize, Target: 0}}},
		{"bitrot: the flipped bit, from the moment it happens", 0, func(t *testing.T, f *faulty) string {
			f.record(f.d.Bitrot(scripted(t, 2, 0).draw))
			s, _ := readAll(t, f.d, "a")
			return s
		}, "ole", "a=ole", []Fired{{Kind: KindBitrot, Path: "a", Offset: 2, Bit: 0}}},
		{"fsync_eio: fsync fails; the writes stay readable but are not durable", 0, func(t *testing.T, f *faulty) string {
			writeN(t, f.d, "a", "new", 0)
			f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.FailSync(op)); return errno.EIO })
			e1 := syncErr(t, f.d, "a")
			e2 := syncErr(t, f.d, "a")
			s, _ := readAll(t, f.d, "a")
			return fmt.Sprintf("fsync %v, again %v; %s", e1, e2, s)
		}, "fsync EIO, again SUCCESS; new", "a=old", []Fired{{Kind: KindFsyncEIO, Path: "a"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, c.capacity)
			if c.capacity == 0 {
				seed(t, f.d, "a", "old")
			}
			if got := c.run(t, f); got != c.sees {
				t.Errorf("program sees %q, want %q", got, c.sees)
			}
			if !slices.Equal(f.fired, c.fired) {
				t.Errorf("fired %+v, want %+v", f.fired, c.fired)
			}
			f.d.Crash()
			if got := state(f.d); got != c.after {
				t.Errorf("on disk after a crash: %s, want %s", got, c.after)
			}
		})
	}
}

func TestDiskBytes(t *testing.T) {
	usage := func(t *testing.T, d *Disk, want int64) {
		t.Helper()
		if used, _ := d.Usage(); used != want {
			t.Errorf("usage %d, want %d", used, want)
		}
	}
	cases := []struct {
		name string
		run  func(t *testing.T, d *Disk) string
		want string
		used int64
	}{
		{"overwrites inside a file always fit", func(t *testing.T, d *Disk) string {
			return writeN(t, d, "a", "XY", 0) + "; " + writeN(t, d, "a", "PQRS", 4)
		}, "n=2; n=2", 10},
		{"space comes back when a file shrinks", func(t *testing.T, d *Disk) string {
			truncate(t, d, "a", 2, false)
			return writeN(t, d, "b", "5678", 4)
		}, "n=4", 10},
		{"space comes back when a file is removed, once its last handle closes", func(t *testing.T, d *Disk) string {
			h := open(t, d, "a", Read)
			ok(t, "unlink", d.Unlink(d.Root(), "a"))
			before := writeN(t, d, "b", "5", 4)
			h.Close()
			return before + "; " + writeN(t, d, "b", "5", 4)
		}, "n=0 ENOSPC; n=1", 5},
		{"holes count in full", func(t *testing.T, d *Disk) string {
			truncate(t, d, "a", 0, false)
			return writeN(t, d, "c", "xyz", 4) + "; " + writeN(t, d, "c", "z", 6)
		}, "n=2; n=0 ENOSPC", 10},
		{"a truncate that grows is never refused", func(t *testing.T, d *Disk) string {
			truncate(t, d, "a", 100, false)
			return writeN(t, d, "a", "x", 99) + "; " + writeN(t, d, "a", "x", 100)
		}, "n=1; n=0 ENOSPC", 104},
		{"a crash gives back the space of what was not durable", func(t *testing.T, d *Disk) string {
			truncate(t, d, "a", 0, true)
			writeN(t, d, "a", "123456", 0)
			d.Crash()
			return writeN(t, d, "b", "5678", 4)
		}, "n=4", 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFaulty(false, 10).d
			seed(t, d, "a", "123456") // 6 of 10 bytes
			writeN(t, d, "b", "abcd", 0)
			fsync(t, d, "b") // full
			usage(t, d, 10)
			if got := c.run(t, d); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			usage(t, d, c.used)
			var sum int64
			for _, fi := range d.Files() {
				sum += fi.Size
			}
			if d.used != sum {
				t.Errorf("usage %d but the files hold %d", d.used, sum)
			}
		})
	}
}

func TestFsyncEIO(t *testing.T) {
	eio := func(f *faulty) {
		f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.FailSync(op)); return errno.EIO })
	}
	cases := []struct {
		name  string
		run   func(t *testing.T, f *faulty)
		after string
	}{
		{"even a crash that writes everything back has none of it", func(t *testing.T, f *faulty) {
			writeN(t, f.d, "a", "new", 0)
			eio(f)
			syncErr(t, f.d, "a")
			f.d.CrashWith(KeepAll{})
		}, "a=old"},
		{"the next fsync succeeds without the failed writes", func(t *testing.T, f *faulty) {
			writeN(t, f.d, "a", "new", 0)
			eio(f)
			syncErr(t, f.d, "a")
			writeN(t, f.d, "a", "!", pageSize)
			ok(t, "fsync", syncErr(t, f.d, "a"))
		}, `a=old{0*4093}!`},
		{"an fsync that writes into a failed page writes the page in full", func(t *testing.T, f *faulty) {
			writeN(t, f.d, "a", "new", 0)
			eio(f)
			syncErr(t, f.d, "a")
			writeN(t, f.d, "a", "!", 3)
			ok(t, "fsync", syncErr(t, f.d, "a"))
		}, "a=new!"},
		{"a later write into the page of a failed append writes that page in full", func(t *testing.T, f *faulty) {
			writeN(t, f.d, "a", "++", 3)
			eio(f)
			syncErr(t, f.d, "a")
			writeN(t, f.d, "a", "!", 5)
			fsync(t, f.d, "a")
		}, "a=old++!"},
		{"a failed append stays lost when later writes go to other pages", func(t *testing.T, f *faulty) {
			writeN(t, f.d, "a", "+", pageSize)
			eio(f)
			syncErr(t, f.d, "a")
			writeN(t, f.d, "a", "!", 2*pageSize)
			fsync(t, f.d, "a")
		}, "a=old{0*8189}!"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			seed(t, f.d, "a", "old")
			c.run(t, f)
			if len(f.fired) != 1 {
				t.Errorf("fired %+v", f.fired)
			}
			f.d.Crash()
			if got := state(f.d); got != c.after {
				t.Errorf("after crash %s, want %s", got, c.after)
			}
		})
	}
	// Only the fsync of a regular file can fail this way.
	f := newFaulty(false, 0)
	f.arm(OpSync, func(op Op) errno.Errno {
		if _, ok := f.d.FailSync(op); ok {
			t.Errorf("FailSync applied to a directory fsync")
		}
		return 0
	})
	fsync(t, f.d, ".")
}

func TestLostAndMisdirectedWrites(t *testing.T) {
	two := fill('A', pageSize) + fill('B', pageSize)
	cases := []struct {
		name   string
		seed   string
		write  func(t *testing.T, d *Disk)
		fault  func(d *Disk, op Op, draw Draw) (Fired, bool)
		draws  []int
		then   func(t *testing.T, d *Disk) // after the faulty fsync, before the crash
		after  string
		fired  []Fired
		damage []Damage
	}{
		{"lost_write: one page keeps its old content", two, func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "x", 0)
			writeN(t, d, "a", "y", pageSize)
		}, (*Disk).LoseWrite, []int{1}, nil, "a=x{A*4095}{B*4096}",
			[]Fired{{Kind: KindLostWrite, Path: "a", Offset: pageSize}},
			[]Damage{{Off: pageSize, Len: pageSize, Kind: KindLostWrite}}},
		{"lost_write: zeros if the page is new", "", func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "new", 0)
		}, (*Disk).LoseWrite, []int{0}, nil, `a=\0\0\0`,
			[]Fired{{Kind: KindLostWrite, Path: "a"}}, []Damage{{Off: 0, Len: 3, Kind: KindLostWrite}}},
		{"lost_write: the next fsync that rewrites the page writes it in full", two, func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "y", pageSize)
		}, (*Disk).LoseWrite, []int{0}, func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "z", pageSize+1)
			fsync(t, d, "a")
		}, "a={A*4096}yz{B*4094}", []Fired{{Kind: KindLostWrite, Path: "a", Offset: pageSize}}, nil},
		{"lost_write: an fsync that rewrites another page leaves it lost", two, func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "y", pageSize)
		}, (*Disk).LoseWrite, []int{0}, func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "z", 0)
			fsync(t, d, "a")
		}, "a=z{A*4095}{B*4096}", []Fired{{Kind: KindLostWrite, Path: "a", Offset: pageSize}},
			[]Damage{{Off: pageSize, Len: pageSize, Kind: KindLostWrite}}},
		{"misdirected_write: the page lands on another, the intended one keeps its old content", two + fill('C', pageSize), func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "x", 0)
		}, (*Disk).MisdirectWrite, []int{0, 1}, nil, "a={A*4096}{B*4096}x{A*4095}", // the other pages are 1 and 2; draw 1 is page 2
			[]Fired{{Kind: KindMisdirectedWrite, Path: "a", Offset: 0, Target: 2 * pageSize}},
			[]Damage{{Off: 0, Len: pageSize, Kind: KindMisdirectedWrite}, {Off: 2 * pageSize, Len: pageSize, Kind: KindMisdirectedWrite}}},
		{"misdirected_write: landing on the short last page keeps the file's size", fill('A', pageSize) + "bb", func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "xyz", 0)
		}, (*Disk).MisdirectWrite, []int{0, 0}, nil, "a={A*4096}xy",
			[]Fired{{Kind: KindMisdirectedWrite, Path: "a", Offset: 0, Target: pageSize}},
			[]Damage{{Off: 0, Len: pageSize, Kind: KindMisdirectedWrite}, {Off: pageSize, Len: 2, Kind: KindMisdirectedWrite}}},
		{"misdirected_write: a one-page file cannot have one", "abc", func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "x", 0)
		}, (*Disk).MisdirectWrite, nil, nil, "a=xbc", nil, nil},
		{"an fsync with nothing dirty loses nothing", "abc", func(t *testing.T, d *Disk) {}, (*Disk).LoseWrite, nil, nil, "a=abc", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			seed(t, f.d, "a", c.seed)
			c.write(t, f.d)
			want, _ := readAll(t, f.d, "a")
			s := scripted(t, c.draws...)
			f.arm(OpSync, func(op Op) errno.Errno { f.record(c.fault(f.d, op, s.draw)); return 0 })
			ok(t, "fsync", syncErr(t, f.d, "a"))
			s.done()
			// The page cache keeps the right content: the drive acknowledged.
			if got, _ := readAll(t, f.d, "a"); got != want {
				t.Errorf("reads %s after the fsync, want %s", got, want)
			}
			if c.then != nil {
				c.then(t, f.d)
			}
			if !slices.Equal(f.fired, c.fired) {
				t.Errorf("fired %+v, want %+v", f.fired, c.fired)
			}
			if got := f.d.Files()[0].Damage; !slices.Equal(got, c.damage) {
				t.Errorf("damage %+v, want %+v", got, c.damage)
			}
			f.d.Crash()
			if got := state(f.d); got != c.after {
				t.Errorf("after crash %s, want %s", got, c.after)
			}
		})
	}
}

func TestReadCorrupt(t *testing.T) {
	cases := []struct {
		name      string
		off, n    int64
		draws     []int
		asks      []int
		got       string
		fired     []Fired
		corrupted bool
	}{
		{"one bit of the bytes read", 6, 5, []int{8*2 + 3}, []int{40}, "wozld",
			[]Fired{{Kind: KindReadCorrupt, Path: "f", Offset: 8, Bit: 3}}, true},
		{"only among the bytes the read returns", 8, 10, []int{23}, []int{24}, "rl\xe4",
			[]Fired{{Kind: KindReadCorrupt, Path: "f", Offset: 10, Bit: 7}}, true},
		{"a read at the end returns nothing to corrupt", 11, 4, nil, nil, "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			seed(t, f.d, "f", "hello world")
			s := scripted(t, c.draws...)
			f.arm(OpRead, func(op Op) errno.Errno { f.record(f.d.CorruptRead(op, s.draw)); return 0 })
			h := open(t, f.d, "f", Read)
			defer h.Close()
			buf := make([]byte, c.n)
			got, e := h.ReadAt(buf, c.off)
			ok(t, "read", e)
			s.done()
			if string(buf[:got]) != c.got || !slices.Equal(s.asks, c.asks) || !slices.Equal(f.fired, c.fired) {
				t.Errorf("read %q, draws %v, fired %+v; want %q, %v, %+v", buf[:got], s.asks, f.fired, c.got, c.asks, c.fired)
			}
			again := make([]byte, c.n)
			n, _ := h.ReadAt(again, c.off)
			if c.corrupted && string(again[:n]) == c.got {
				t.Errorf("reading again returns the corrupted bytes %q", again[:n])
			}
			if d, _ := f.d.ReadDurable("f"); string(d) != "hello world" {
				t.Errorf("disk changed: %q", d)
			}
		})
	}
}

func TestBitrot(t *testing.T) {
	cases := []struct {
		name   string
		steps  func(t *testing.T, d *Disk)
		draws  []int
		asks   []int
		sees   string // files as the program reads them
		then   func(t *testing.T, d *Disk)
		after  string // after a crash
		fired  []Fired
		damage []Damage // of the file hit, after the crash
	}{
		{"a byte uniformly over all durable data", func(t *testing.T, d *Disk) {
			seed(t, d, "a", "abcd")
			seed(t, d, "d/b", "12345678")
		}, []int{5, 1}, []int{12, 8}, "a=abcd d/ d/b=10345678", nil, "a=abcd d/ d/b=10345678",
			[]Fired{{Kind: KindBitrot, Path: "d/b", Offset: 1, Bit: 1}}, []Damage{{Off: 1, Len: 1, Kind: KindBitrot}}},
		{"not seen while that byte has a pending write", func(t *testing.T, d *Disk) {
			seed(t, d, "a", "abcd")
			writeN(t, d, "a", "x", 0)
		}, []int{0, 0}, []int{4, 8}, "a=xbcd", nil, "a=`bcd",
			[]Fired{{Kind: KindBitrot, Path: "a", Bit: 0}}, []Damage{{Off: 0, Len: 1, Kind: KindBitrot}}},
		{"healed when the byte is rewritten and fsynced", func(t *testing.T, d *Disk) {
			seed(t, d, "a", "abcd")
		}, []int{3, 0}, []int{4, 8}, "a=abce", func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "x", 3)
			fsync(t, d, "a")
		}, "a=abcx",
			[]Fired{{Kind: KindBitrot, Path: "a", Offset: 3, Bit: 0}}, nil},
		{"no durable data, nothing to rot", func(t *testing.T, d *Disk) {
			writeN(t, d, "a", "new", 0)
		}, nil, nil, "a=new", nil, "a=", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			c.steps(t, f.d)
			s := scripted(t, c.draws...)
			f.record(f.d.Bitrot(s.draw))
			s.done()
			if !slices.Equal(s.asks, c.asks) || !slices.Equal(f.fired, c.fired) {
				t.Errorf("draws %v, fired %+v; want %v, %+v", s.asks, f.fired, c.asks, c.fired)
			}
			if got := state(f.d); got != c.sees {
				t.Errorf("program sees %s, want %s", got, c.sees)
			}
			if c.then != nil {
				c.then(t, f.d)
			}
			f.d.Crash()
			if got := state(f.d); got != c.after {
				t.Errorf("after crash %s, want %s", got, c.after)
			}
			var damage []Damage
			if len(c.fired) > 0 {
				for _, fi := range f.d.Files() {
					if fi.Path == c.fired[0].Path {
						damage = fi.Damage
					}
				}
			}
			if !slices.Equal(damage, c.damage) {
				t.Errorf("damage %+v, want %+v", damage, c.damage)
			}
		})
	}
}

func TestFaultOutsideOnOpPanics(t *testing.T) {
	f := newFaulty(false, 0)
	seed(t, f.d, "a", "abc")
	defer func() {
		if recover() == nil {
			t.Errorf("LoseWrite outside OnOp did not panic")
		}
	}()
	f.d.LoseWrite(Op{Kind: OpSync, N: 1}, func(int) int { return 0 })
}

func TestFiles(t *testing.T) {
	f := newFaulty(false, 100)
	seed(t, f.d, "a", "12345678")
	writeN(t, f.d, "a", "abcdefghijkl", 0)
	seed(t, f.d, "d/b", "x")
	f.record(f.d.Bitrot(func(n int) int { return n - 1 }))
	got := f.d.Files()
	want := []FileInfo{
		{Path: "a", Size: 12, DurableSize: 8, Pending: 1},
		{Path: "d/b", Size: 1, DurableSize: 1, Damage: []Damage{{Off: 0, Len: 1, Kind: KindBitrot}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Files() = %+v, want %+v", got, want)
	}
	if used, capacity := f.d.Usage(); used != 13 || capacity != 100 {
		t.Errorf("Usage() = %d, %d, want 13, 100", used, capacity)
	}
}
