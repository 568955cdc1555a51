package disk

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// applyData applies one data operation to a file held as a byte slice.
func applyData(b []byte, op DataOp) []byte {
	switch op.Kind {
	case DataWrite:
		if end := op.Off + int64(len(op.Data)); end > int64(len(b)) {
			b = append(b, make([]byte, end-int64(len(b)))...)
		}
		copy(b[op.Off:], op.Data)
	case DataTruncate:
		if op.Size < int64(len(b)) {
			b = b[:op.Size]
		} else {
			b = append(b, make([]byte, op.Size-int64(len(b)))...)
		}
	}
	return b
}

// syncFileModel is what the test expects of one file: every operation
// since the last crash, how many of them are durable, and the fsyncs
// started and not completed.
type syncFileModel struct {
	name    string
	h       *Handle
	hist    []DataOp
	durIdx  int
	durable []byte
	cache   []byte
	marks   []syncMarkAt
}

type syncMarkAt struct {
	mark uint64
	idx  int // len(hist) when the fsync started
}

func (m *syncFileModel) pending() []DataOp { return m.hist[m.durIdx:] }

// complete is the model of SyncTo of a mark taken after idx operations.
func (m *syncFileModel) complete(idx int) {
	for ; m.durIdx < idx; m.durIdx++ {
		m.durable = applyData(m.durable, m.hist[m.durIdx])
	}
}

// subsetModel is a crash model that first checks that each file's pending
// log is exactly the operations the test made since the file's last
// completed fsync, bytes and all, then keeps a random subset of them in
// order.
type subsetModel struct {
	t    *testing.T
	r    *rand.Rand
	want map[uint64][]DataOp
	kept map[uint64][]DataOp
}

func (s *subsetModel) DirOps(*Pending) []int { return nil }

func (s *subsetModel) File(f PendingFile) Writeback {
	s.t.Helper()
	checkOps(s.t, f.Path, f.Ops, s.want[f.Ino])
	var wb Writeback
	for _, op := range f.Ops {
		if s.r.IntN(2) == 0 {
			wb.Ops = append(wb.Ops, op)
		}
	}
	s.kept[f.Ino] = wb.Ops
	return wb
}

func checkOps(t *testing.T, where string, got, want []DataOp) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d pending ops, want %d", where, len(got), len(want))
	}
	for i, op := range got {
		w := want[i]
		if op.Kind != w.Kind || op.Off != w.Off || op.Size != w.Size || op.Seq != w.Seq || !bytes.Equal(op.Data, w.Data) {
			t.Fatalf("%s: pending op %d = {kind %d off %d len %d size %d seq %d}, want {kind %d off %d len %d size %d seq %d} (bytes equal %v)",
				where, i, op.Kind, op.Off, len(op.Data), op.Size, op.Seq, w.Kind, w.Off, len(w.Data), w.Size, w.Seq, bytes.Equal(op.Data, w.Data))
		}
	}
}

// TestSyncToAgainstModel runs random writes, overwrites and truncates on
// two files with fsyncs started (SyncMark) and completed (SyncTo) at random
// points, out of order and with more operations in between, against a
// byte-slice model: after each step the durable content is the file after
// exactly the operations up to the latest completed mark, and the pending
// log is the operations after it, each with its own bytes. Crashes with
// every crash model check what survives.
func TestSyncToAgainstModel(t *testing.T) {
	var partial, overlapped, crashes int
	models := []string{"nothing", "all", "subset", "torn", "ext4", "ext4-torn", "page", "dir-reorder", "inflight", "corrupt"}
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 11))
		d := newDisk(false)
		files := []*syncFileModel{{name: "a"}, {name: "b"}}
		for _, f := range files {
			f.h = open(t, d, f.name, Read|Write|Create)
		}
		for step := range 600 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			f := files[r.IntN(2)]
			h := f.h
			size := h.Size()
			switch k := r.IntN(100); {
			case k < 55:
				n := []int{1 + r.IntN(16), 1 + r.IntN(300), 4096, 4096*(1+r.IntN(3)) + r.IntN(3) - 1, 1 + r.IntN(9000)}[r.IntN(5)]
				off := []int64{size, r.Int64N(size + 1), r.Int64N(size+1) / 4096 * 4096, size + r.Int64N(5000)}[r.IntN(4)]
				if p := f.pending(); len(p) > 0 && r.IntN(3) == 0 {
					// over part of a pending write: the hard case
					if w := p[r.IntN(len(p))]; w.Kind == DataWrite {
						off = w.Off + r.Int64N(int64(len(w.Data)))
					}
				}
				if size > 96<<10 {
					off = r.Int64N(size)
				}
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				if got, e := h.WriteAt(data, off); got != n || e != 0 {
					t.Fatalf("%s: write: %d %v", where, got, e)
				}
				f.hist = append(f.hist, DataOp{Kind: DataWrite, Off: off, Data: slices.Clone(data), Seq: d.seq})
				clear(data) // the disk keeps its own copy
			case k < 63:
				to := []int64{0, r.Int64N(size + 1), r.Int64N(size+1) / 4096 * 4096, size + r.Int64N(5000)}[r.IntN(4)]
				ok(t, "truncate", h.Truncate(to))
				f.hist = append(f.hist, DataOp{Kind: DataTruncate, Size: to, Seq: d.seq})
			case k < 80:
				if len(f.marks) < 4 {
					f.marks = append(f.marks, syncMarkAt{h.SyncMark(), len(f.hist)})
				}
			case k < 96:
				if len(f.marks) == 0 {
					break
				}
				i := r.IntN(len(f.marks))
				mk := f.marks[i]
				f.marks = slices.Delete(f.marks, i, i+1)
				if mk.idx > f.durIdx && mk.idx < len(f.hist) {
					partial++
					if overlaps(f.hist[f.durIdx:mk.idx], f.hist[mk.idx:]) {
						overlapped++
					}
				}
				ok(t, "SyncTo", h.SyncTo(mk.mark))
				f.complete(mk.idx)
			case k < 98:
				ok(t, "Sync", h.Sync())
				f.complete(len(f.hist))
			default:
				crashes++
				crashWithModel(t, d, files, models[crashes%len(models)], r, where)
				for _, f := range files {
					f.h = open(t, d, f.name, Read|Write|Create)
				}
			}
			f.cache = applyLast(f)
			for _, f := range files {
				checkSyncModel(t, d, f, where)
			}
		}
	}
	t.Logf("%d SyncTo with operations after the mark (%d overlapping ones before it), %d crashes", partial, overlapped, crashes)
	if partial < 200 || overlapped < 120 || crashes < 100 {
		t.Errorf("too few interesting cases: %d partial SyncTo, %d with overlaps, %d crashes", partial, overlapped, crashes)
	}
}

// applyLast brings the model's cache up to date with its history.
func applyLast(f *syncFileModel) []byte {
	c := slices.Clone(f.durable)
	for _, op := range f.pending() {
		c = applyData(c, op)
	}
	return c
}

// overlaps reports whether an operation in after changes a byte an
// operation in before wrote.
func overlaps(before, after []DataOp) bool {
	for _, a := range after {
		lo, hi := a.Size, int64(maxFileSize)
		if a.Kind == DataWrite {
			lo, hi = a.Off, a.Off+int64(len(a.Data))
		}
		for _, b := range before {
			if b.Kind == DataWrite && b.Off < hi && b.Off+int64(len(b.Data)) > lo {
				return true
			}
		}
	}
	return false
}

func checkSyncModel(t *testing.T, d *Disk, f *syncFileModel, where string) {
	t.Helper()
	if got, _ := d.ReadFile(f.name); !bytes.Equal(got, f.cache) {
		t.Fatalf("%s: %s: the page cache (%d bytes) is not what was written (%d bytes)", where, f.name, len(got), len(f.cache))
	}
	if got, _ := d.ReadDurable(f.name); !bytes.Equal(got, f.durable) {
		t.Fatalf("%s: %s: the durable content (%d bytes) is not the file after the operations up to the latest completed mark (%d bytes)", where, f.name, len(got), len(f.durable))
	}
	n := f.h.n
	checkOps(t, where+": "+f.name, n.dataOps(), f.pending())
	if n.pending.len() > 0 {
		size := n.pendBase
		for k := range n.pending.len() {
			op := n.pending.at(k)
			if op.isTruncate() {
				size = op.off
			} else {
				size = max(size, op.end())
			}
		}
		if size != n.data.size {
			t.Fatalf("%s: %s: the pending log replayed from its base gives %d bytes, the cache has %d", where, f.name, size, n.data.size)
		}
	}
}

// crashWithModel crashes d with the named model and checks what each
// file holds after it, then makes that the model's state.
func crashWithModel(t *testing.T, d *Disk, files []*syncFileModel, name string, r *rand.Rand, where string) {
	t.Helper()
	draw := func(n int) int { return r.IntN(n) }
	var m CrashModel
	sub := &subsetModel{t: t, r: r, want: map[uint64][]DataOp{}, kept: map[uint64][]DataOp{}}
	switch name {
	case "nothing":
		m = KeepNothing{}
	case "all":
		m = KeepAll{}
	case "subset":
		for _, f := range files {
			sub.want[f.h.Ino()] = f.pending()
		}
		m = sub
	case "torn":
		m = &Torn{Draw: draw}
	case "ext4":
		m = &Reorder{Model: Ext4Ordered, Draw: draw}
	case "ext4-torn":
		m = &Reorder{Model: Ext4Ordered, Torn: true, Draw: draw, Sector: 512}
	case "page":
		m = &Reorder{Model: PageIndependent, Torn: true, Draw: draw}
	case "dir-reorder":
		m = &Reorder{Model: DirReorder, Draw: draw}
	case "inflight":
		m = &InFlight{Model: &Torn{Draw: draw}, Ino: files[0].h.Ino(), Draw: draw}
	case "corrupt":
		m = &Corrupt{Model: &Reorder{Model: PageIndependent, Torn: true, Draw: draw}, Draw: draw}
	}
	ino := map[string]uint64{}
	for _, f := range files {
		ino[f.name] = f.h.Ino()
	}
	rep := d.CrashWith(m)
	for _, f := range files {
		got, err := d.ReadFile(f.name)
		if err != nil {
			t.Fatalf("%s: %s after a %s crash: %v", where, f.name, name, err)
		}
		for _, fl := range rep.Flips {
			if fl.Path == f.name {
				got[fl.Offset] ^= 1 << fl.Bit
			}
		}
		switch name {
		case "nothing":
			if !bytes.Equal(got, f.durable) {
				t.Fatalf("%s: %s after a crash keeping nothing is not its durable content", where, f.name)
			}
		case "all":
			if !bytes.Equal(got, f.cache) {
				t.Fatalf("%s: %s after a crash keeping everything is not its page cache", where, f.name)
			}
		case "subset":
			want := slices.Clone(f.durable)
			for _, op := range sub.kept[ino[f.name]] {
				want = applyData(want, op)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: %s after a crash keeping some pending operations is not its durable content with them", where, f.name)
			}
		default:
			checkAllowed(t, got, f, where+": "+name)
		}
		// The model starts again from what survived, flipped bits and all.
		f.hist, f.durIdx, f.marks = nil, 0, nil
		f.durable, _ = d.ReadFile(f.name)
		f.cache = slices.Clone(f.durable)
	}
}

// checkAllowed checks that every byte of got comes from the durable
// content, from a pending write at that offset, or is zero (a hole or a
// truncate), and that the file is no longer than some operation made it.
func checkAllowed(t *testing.T, got []byte, f *syncFileModel, where string) {
	t.Helper()
	longest := int64(len(f.durable))
	for _, op := range f.pending() {
		longest = max(longest, op.Size, op.Off+int64(len(op.Data)))
	}
	if int64(len(got)) > longest {
		t.Fatalf("%s: %s has %d bytes after the crash, more than any operation gave it (%d)", where, f.name, len(got), longest)
	}
	for i, b := range got {
		if b == 0 || i < len(f.durable) && f.durable[i] == b {
			continue
		}
		found := false
		for _, op := range f.pending() {
			if op.Kind == DataWrite && int64(i) >= op.Off && int64(i) < op.Off+int64(len(op.Data)) && op.Data[int64(i)-op.Off] == b {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: %s byte %d = %#x after the crash comes from no write and is not durable", where, f.name, i, b)
		}
	}
}

// An fsync of a directory started before an entry was made does not make
// that entry durable; the ones made before it are.
func TestSyncToDirectory(t *testing.T) {
	for _, keep := range []bool{false, true} {
		d := newDisk(true)
		create(t, d, "a", "1")
		fsync(t, d, "a")
		root := d.Root()
		mark := root.SyncMark()
		create(t, d, "b", "2")
		fsync(t, d, "b")
		ok(t, "SyncTo", root.SyncTo(mark))
		var spy dirOpsSpy
		if keep {
			d.CrashWith(&spy)
		} else {
			d.Crash()
		}
		want := "a=1"
		if keep {
			want = lines("a=1", "b=2")
			if got := strings.Join(spy.dirs, ","); got != "create b" {
				t.Errorf("pending directory operations at the crash: %s, want create b", got)
			}
		}
		if got := tree(d); got != want {
			t.Errorf("keep all %v: after the crash:\n%s\nwant:\n%s", keep, got, want)
		}
	}
}

// The entries a directory fsync takes in with an entry before the mark
// are those syncDir would: the earlier operations on the same names, in
// other directories too. Operations after the mark stay pending.
func TestSyncToDirectoryDependencies(t *testing.T) {
	d := newDisk(true)
	if err := d.MkdirAll("d1"); err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll("d2"); err != nil {
		t.Fatal(err)
	}
	create(t, d, "d1/x", "x")
	fsync(t, d, "d1/x")
	ok(t, "rename", d.Rename(d.Root(), "d1/x", d.Root(), "d2/x"))
	d2 := open(t, d, "d2", Read)
	mark := d2.SyncMark()
	create(t, d, "d2/y", "y")
	fsync(t, d, "d2/y")
	ok(t, "rename", d.Rename(d.Root(), "d2/x", d.Root(), "d1/x2"))
	ok(t, "SyncTo", d2.SyncTo(mark))
	d.Crash()
	if got, want := tree(d), lines("d1/", "d2/", "d2/x=x"); got != want {
		t.Errorf("after the crash:\n%s\nwant:\n%s", got, want)
	}
}

type dirOpsSpy struct{ dirs []string }

func (s *dirOpsSpy) DirOps(p *Pending) []int {
	keep := make([]int, len(p.Dirs))
	for i, op := range p.Dirs {
		s.dirs = append(s.dirs, op.Kind.String()+" "+op.Path)
		keep[i] = i
	}
	return keep
}
func (s *dirOpsSpy) File(f PendingFile) Writeback { return Writeback{Ops: f.Ops} }

// SyncTo is one disk op, an fsync, numbered and reported as Sync is;
// SyncMark is none.
func TestSyncToCountsAsFsync(t *testing.T) {
	run := func(split bool) []string {
		var seen []string
		d := New(Options{OnOp: func(op Op) errno.Errno {
			seen = append(seen, fmt.Sprintf("%s #%d %s dir=%v", op.Kind, op.N, op.Path, op.Dir))
			return 0
		}})
		seed(t, d, "f", "")
		h := open(t, d, "f", Read|Write)
		write(t, h, "a", 0)
		if split {
			mark := h.SyncMark()
			ok(t, "SyncTo", h.SyncTo(mark))
			mark = d.Root().SyncMark()
			ok(t, "SyncTo dir", d.Root().SyncTo(mark))
		} else {
			ok(t, "Sync", h.Sync())
			ok(t, "Sync dir", d.Root().Sync())
		}
		write(t, h, "b", 1)
		if d.Ops() != 4 {
			t.Errorf("split %v: Ops() = %d, want 4", split, d.Ops())
		}
		return seen
	}
	want := []string{"write #1 f dir=false", "fsync #2 f dir=false", "fsync #3 . dir=true", "write #4 f dir=false"}
	for _, split := range []bool{false, true} {
		if got := run(split); !slices.Equal(got, want) {
			t.Errorf("split %v: ops %q, want %q", split, got, want)
		}
	}
}

// Bad handles fail as Sync does; a mark from the future is a Sync.
func TestSyncToBadInput(t *testing.T) {
	d := newDisk(false)
	var nilHandle *Handle
	if m := nilHandle.SyncMark(); m != 0 {
		t.Errorf("SyncMark on a nil handle = %d", m)
	}
	if e := nilHandle.SyncTo(0); e != errno.EBADF {
		t.Errorf("SyncTo on a nil handle = %v", e)
	}
	h := open(t, d, "f", Write|Create)
	write(t, h, "abc", 0)
	mark := h.SyncMark()
	h.Close()
	if e := h.SyncTo(mark); e != errno.EBADF {
		t.Errorf("SyncTo on a closed handle = %v", e)
	}
	h = open(t, d, "f", Write)
	write(t, h, "d", 3)
	ok(t, "SyncTo", h.SyncTo(1<<60))
	d.Crash()
	if got := tree(d); got != "f=abcd" {
		t.Errorf("after SyncTo of a mark past every operation and a crash: %s", got)
	}
}

// fsync_eio on SyncTo drops what it would have made durable, as Sync does
// with everything; the writes after its mark stay pending. The page that
// failed is written in full by the next fsync that writes into it.
func TestSyncToFailSync(t *testing.T) {
	cases := []struct {
		name      string
		split     bool
		then      func(t *testing.T, h *Handle)
		keepAll   bool
		want      string
		wantCache string
	}{
		{"Sync fails both writes", false, nil, true, "xyz", "ABz"},
		{"SyncTo fails the write before its mark", true, nil, true, "xBz", "ABz"},
		{"SyncTo fails it, the next fsync writes its page in full", true, func(t *testing.T, h *Handle) { ok(t, "Sync", h.Sync()) }, false, "ABz", "ABz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			seed(t, f.d, "f", "xyz")
			h := open(t, f.d, "f", Read|Write)
			write(t, h, "A", 0)
			mark := h.SyncMark()
			write(t, h, "B", 1)
			f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.FailSync(op)); return errno.EIO })
			var e errno.Errno
			if c.split {
				e = h.SyncTo(mark)
			} else {
				e = h.Sync()
			}
			if e != errno.EIO || len(f.fired) != 1 || f.fired[0].Kind != KindFsyncEIO {
				t.Fatalf("the fsync returned %v and fired %v, want EIO and fsync_eio", e, f.fired)
			}
			if got := tree(f.d); got != "f="+c.wantCache {
				t.Errorf("page cache after the failure: %s, want f=%s", got, c.wantCache)
			}
			if c.then != nil {
				c.then(t, h)
			}
			if c.keepAll {
				f.d.CrashWith(KeepAll{})
			} else {
				f.d.Crash()
			}
			if got := tree(f.d); got != "f="+c.want {
				t.Errorf("after the crash: %s, want f=%s", got, c.want)
			}
		})
	}
}

// A stale page (its writeback failed) that a SyncTo writes into is written
// in full as it was at the mark: without the bytes of later writes.
func TestSyncToStalePage(t *testing.T) {
	for _, keepAll := range []bool{false, true} {
		f := newFaulty(false, 0)
		seed(t, f.d, "f", "xyz")
		h := open(t, f.d, "f", Read|Write)
		write(t, h, "A", 0)
		f.arm(OpSync, func(op Op) errno.Errno { f.record(f.d.FailSync(op)); return errno.EIO })
		if e := h.Sync(); e != errno.EIO {
			t.Fatalf("fsync: %v", e)
		}
		write(t, h, "B", 1)
		mark := h.SyncMark()
		write(t, h, "C", 2)
		ok(t, "SyncTo", h.SyncTo(mark))
		if got, _ := f.d.ReadDurable("f"); string(got) != "ABz" {
			t.Errorf("durable after SyncTo: %q, want ABz", got)
		}
		want := "f=ABz"
		if keepAll {
			f.d.CrashWith(KeepAll{})
			want = "f=ABC"
		} else {
			f.d.Crash()
		}
		if got := tree(f.d); got != want {
			t.Errorf("keep all %v: after the crash: %s, want %s", keepAll, got, want)
		}
	}
}

// lost_write and misdirected_write on SyncTo pick among the pages it
// writes, those of the writes before its mark.
func TestSyncToLostAndMisdirected(t *testing.T) {
	old := strings.Repeat("o", 3*pageSize)
	page := func(c string) string { return strings.Repeat(c, pageSize) }
	cases := []struct {
		name    string
		fault   func(d *Disk, op Op, draw Draw) (Fired, bool)
		draws   []int
		asks    []int
		fired   Fired
		durable string
	}{
		{"lost_write", (*Disk).LoseWrite, []int{0}, []int{1},
			Fired{Kind: KindLostWrite, Path: "f", Offset: 0}, old},
		{"misdirected_write", (*Disk).MisdirectWrite, []int{0, 1}, []int{1, 2},
			Fired{Kind: KindMisdirectedWrite, Path: "f", Offset: 0, Target: 2 * pageSize}, page("o") + page("o") + page("A")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFaulty(false, 0)
			seed(t, f.d, "f", old)
			h := open(t, f.d, "f", Read|Write)
			write(t, h, page("A"), 0)
			mark := h.SyncMark()
			write(t, h, page("B"), pageSize)
			write(t, h, "a", 0) // after the mark, over the write before it
			s := scripted(t, c.draws...)
			f.arm(OpSync, func(op Op) errno.Errno { f.record(c.fault(f.d, op, s.draw)); return 0 })
			ok(t, "SyncTo", h.SyncTo(mark))
			s.done()
			if !slices.Equal(s.asks, c.asks) {
				t.Errorf("draws asked %v, want %v: one dirty page up to the mark", s.asks, c.asks)
			}
			if len(f.fired) != 1 || f.fired[0] != c.fired {
				t.Errorf("fired %+v, want %+v", f.fired, c.fired)
			}
			if got, _ := f.d.ReadDurable("f"); string(got) != c.durable {
				t.Errorf("durable content wrong: %s", show(got))
			}
			f.d.CrashWith(KeepAll{})
			want := "a" + c.durable[1:pageSize] + page("B") + c.durable[2*pageSize:]
			if got, _ := f.d.ReadFile("f"); string(got) != want {
				t.Errorf("after keeping the later writes: %s", show(got))
			}
		})
	}
}

// SyncMark takes in the stores of a writable mapping, as Sync does; a
// write after the mark stays pending.
func TestSyncMarkTakesInMappedStores(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "0123")
	h := open(t, d, "f", Read|Write)
	mem := make([]byte, pageSize)
	if _, e := h.Map(0, pageSize, true, func() []byte { return mem }); e != 0 {
		t.Fatal(e)
	}
	mem[0] = 'M'
	mark := h.SyncMark()
	write(t, h, "W", 1)
	ok(t, "SyncTo", h.SyncTo(mark))
	if got, _ := d.ReadDurable("f"); string(got) != "M123" {
		t.Errorf("durable after SyncTo: %q, want M123", got)
	}
	d.Crash()
	if got := tree(d); got != "f=M123" {
		t.Errorf("after the crash: %s", got)
	}
}

// Sync faults on SyncTo at random, with writes after the marks over the
// writes before them: whatever a fault drops or writes, the operations
// after the mark stay pending as they were written, the page cache is
// what was written, and a crash with any model afterwards is sound.
func TestSyncToFaultsKeepTheLogRight(t *testing.T) {
	kinds := map[string]int{}
	for seed := range uint64(6) {
		r := rand.New(rand.NewPCG(seed, 13))
		draw := func(n int) int { return r.IntN(n) }
		f := newFaulty(false, 0)
		d := f.d
		m := &syncFileModel{name: "f"}
		m.h = open(t, d, "f", Read|Write|Create)
		for step := range 300 {
			where := fmt.Sprintf("seed %d step %d", seed, step)
			h := m.h
			size := h.Size()
			switch k := r.IntN(10); {
			case k < 6:
				n := []int{1 + r.IntN(300), 4096, 1 + r.IntN(9000)}[r.IntN(3)]
				off := []int64{size, r.Int64N(size + 1), r.Int64N(size+1) / 4096 * 4096}[r.IntN(3)]
				data := make([]byte, n)
				for i := range data {
					data[i] = byte(r.Uint32())
				}
				if got, e := h.WriteAt(data, off); got != n || e != 0 {
					t.Fatalf("%s: write: %d %v", where, got, e)
				}
				m.hist = append(m.hist, DataOp{Kind: DataWrite, Off: off, Data: data, Seq: d.seq})
			case k < 7:
				to := []int64{r.Int64N(size + 1), size + r.Int64N(5000)}[r.IntN(2)]
				ok(t, "truncate", h.Truncate(to))
				m.hist = append(m.hist, DataOp{Kind: DataTruncate, Size: to, Seq: d.seq})
			case k < 8:
				m.marks = append(m.marks, syncMarkAt{h.SyncMark(), len(m.hist)})
			default:
				if len(m.marks) == 0 {
					break
				}
				mk := m.marks[0]
				m.marks = m.marks[1:]
				kind := []string{"none", "fsync_eio", "lost_write", "misdirected_write"}[r.IntN(4)]
				want := errno.Errno(0)
				f.arm(OpSync, func(op Op) errno.Errno {
					switch kind {
					case "fsync_eio":
						f.record(d.FailSync(op))
						return errno.EIO
					case "lost_write":
						f.record(d.LoseWrite(op, draw))
					case "misdirected_write":
						f.record(d.MisdirectWrite(op, draw))
					}
					return 0
				})
				if kind == "fsync_eio" {
					want = errno.EIO
				}
				if e := h.SyncTo(mk.mark); e != want {
					t.Fatalf("%s: SyncTo with %s = %v, want %v", where, kind, e, want)
				}
				if kind == "none" {
					kinds[kind]++
				}
				m.durIdx = max(m.durIdx, mk.idx) // synced or failed, no longer pending
			}
			if got, _ := d.ReadFile("f"); !bytes.Equal(got, applyAll(m.hist)) {
				t.Fatalf("%s: the page cache is not what was written", where)
			}
			checkOps(t, where, h.n.dataOps(), m.pending())
		}
		for _, fr := range f.fired {
			kinds[fr.Kind]++
		}
		models := []CrashModel{KeepNothing{}, KeepAll{}, &Torn{Draw: draw}, &Reorder{Model: PageIndependent, Torn: true, Draw: draw}}
		d.CrashWith(models[seed%uint64(len(models))])
		if _, err := d.ReadFile("f"); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("SyncTo faults: %v", kinds)
	for _, k := range []string{"none", KindFsyncEIO, KindLostWrite, KindMisdirectedWrite} {
		if kinds[k] < 20 {
			t.Errorf("only %d SyncTo with %s", kinds[k], k)
		}
	}
}

// applyAll is a file written from empty by ops.
func applyAll(ops []DataOp) []byte {
	var b []byte
	for _, op := range ops {
		b = applyData(b, op)
	}
	return b
}
