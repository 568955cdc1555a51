package disk

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The live set against a byte-by-byte model: which write each byte of a
// small range belongs to, -1 for none.
func TestLiveSetAgainstModel(t *testing.T) {
	const size = 6000
	most := 0
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 3))
		var s liveSet
		model := make([]int, size)
		for i := range model {
			model[i] = -1
		}
		for step := range 1500 {
			x := r.Int64N(size)
			y := min(size, x+1+r.Int64N([]int64{4, 4, 4, 40, 700}[r.IntN(5)]))
			if r.IntN(6) == 0 {
				s.cut(x, y)
				for i := x; i < y; i++ {
					model[i] = -1
				}
			} else {
				s.cut(x, y)
				s.add(x, y, step)
				for i := x; i < y; i++ {
					model[i] = step
				}
			}
			checkLiveSet(t, &s, model, fmt.Sprintf("seed %d step %d", seed, step))
			most = max(most, len(s.chunks))
			a := r.Int64N(size)
			b := min(size, a+r.Int64N(2000))
			got := make([]int, b-a)
			for i := range got {
				got[i] = -1
			}
			for _, sp := range s.collect(a, b, nil) {
				if sp.off < a || sp.end > b || sp.off >= sp.end {
					t.Fatalf("seed %d step %d: collect(%d, %d) gave %+v", seed, step, a, b, sp)
				}
				for i := sp.off; i < sp.end; i++ {
					got[i-a] = sp.op
				}
			}
			for i := range got {
				if got[i] != model[a+int64(i)] {
					t.Fatalf("seed %d step %d: collect(%d, %d) says byte %d is %d's, want %d", seed, step, a, b, a+int64(i), got[i], model[a+int64(i)])
				}
			}
		}
	}
	if most < 3 {
		t.Errorf("the set never had more than %d chunks: the test does not split chunks", most)
	}
}

func checkLiveSet(t *testing.T, s *liveSet, model []int, where string) {
	t.Helper()
	got := make([]int, len(model))
	for i := range got {
		got[i] = -1
	}
	last := int64(-1)
	for _, ch := range s.chunks {
		c := ch.spans
		if len(c) == 0 || len(c) > chunkSpans || ch.end != c[len(c)-1].end {
			t.Fatalf("%s: a chunk of %d spans that says it ends at %d", where, len(c), ch.end)
		}
		for _, sp := range c {
			if sp.off < last || sp.off >= sp.end {
				t.Fatalf("%s: span %+v after offset %d", where, sp, last)
			}
			last = sp.end
			for i := sp.off; i < sp.end; i++ {
				got[i] = sp.op
			}
		}
	}
	for i := range got {
		if got[i] != model[i] {
			t.Fatalf("%s: byte %d is %d's, want %d", where, i, got[i], model[i])
		}
	}
}

// logSpy checks that a crash model sees every pending operation as it
// happened, bytes and all, however later writes and truncates changed the
// page cache since.
type logSpy struct {
	t    *testing.T
	want map[uint64][]DataOp // by inode
	seen int
}

func (s *logSpy) DirOps(p *Pending) []int {
	for _, f := range p.Files {
		s.check(f, "DirOps")
	}
	return nil
}

func (s *logSpy) File(f PendingFile) Writeback {
	s.check(f, "File")
	s.seen++
	return Writeback{Ops: f.Ops}
}

func (s *logSpy) check(f PendingFile, where string) {
	s.t.Helper()
	want := s.want[f.Ino]
	if len(f.Ops) != len(want) {
		s.t.Fatalf("%s: %s has %d pending ops, want %d", where, f.Path, len(f.Ops), len(want))
	}
	for i, op := range f.Ops {
		w := want[i]
		if op.Kind != w.Kind || op.Off != w.Off || op.Size != w.Size || op.Seq != w.Seq || !bytes.Equal(op.Data, w.Data) || cap(op.Data) != len(op.Data) {
			s.t.Fatalf("%s: %s op %d = {%d %d len %d size %d seq %d}, want {%d %d len %d size %d seq %d} (bytes equal %v)",
				where, f.Path, i, op.Kind, op.Off, len(op.Data), op.Size, op.Seq, w.Kind, w.Off, len(w.Data), w.Size, w.Seq, bytes.Equal(op.Data, w.Data))
		}
	}
}

func TestCrashSeesPendingWritesAsWritten(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 5))
		d := newDisk(false)
		spy := &logSpy{t: t, want: map[uint64][]DataOp{}}
		var seq uint64
		hs := []*Handle{open(t, d, "a", Read|Write|Create), open(t, d, "b", Read|Write|Create)}
		var cache [2][]byte
		for range 60 {
			f := r.IntN(2)
			h := hs[f]
			size := h.Size()
			switch k := r.IntN(10); {
			case k < 7:
				n := []int{1 + r.IntN(300), 4096, 8192, 4096*(1+r.IntN(5)) + r.IntN(3) - 1, 1 + r.IntN(20000)}[r.IntN(5)]
				off := []int64{size, r.Int64N(size + 1), r.Int64N(size+1) / 4096 * 4096, size + r.Int64N(9000)}[r.IntN(4)]
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(r.Uint32())
				}
				if got, e := h.WriteAt(p, off); got != n || e != 0 {
					t.Fatalf("write: %d %v", got, e)
				}
				seq++
				spy.want[h.Ino()] = append(spy.want[h.Ino()], DataOp{Kind: DataWrite, Off: off, Data: bytes.Clone(p), Seq: seq})
				if end := off + int64(n); end > int64(len(cache[f])) {
					cache[f] = append(cache[f], make([]byte, end-int64(len(cache[f])))...)
				}
				copy(cache[f][off:], p)
				clear(p) // the disk keeps its own copy
			case k < 9:
				size := []int64{0, r.Int64N(size + 1), r.Int64N(size+1) / 4096 * 4096, size + r.Int64N(9000)}[r.IntN(4)]
				ok(t, "truncate", h.Truncate(size))
				seq++
				spy.want[h.Ino()] = append(spy.want[h.Ino()], DataOp{Kind: DataTruncate, Size: size, Seq: seq})
				if size < int64(len(cache[f])) {
					cache[f] = cache[f][:size]
				} else {
					cache[f] = append(cache[f], make([]byte, size-int64(len(cache[f])))...)
				}
			default:
				ok(t, "fsync", h.Sync())
				spy.want[h.Ino()] = nil
			}
			for i, h := range hs {
				got := make([]byte, h.Size())
				h.ReadAt(got, 0)
				if !bytes.Equal(got, cache[i]) {
					t.Fatalf("seed %d: the page cache of file %d differs from what was written", seed, i)
				}
			}
		}
		d.CrashWith(spy)
		for i, name := range []string{"a", "b"} {
			if got, _ := d.ReadFile(name); !bytes.Equal(got, cache[i]) {
				t.Fatalf("seed %d: %s after a crash that kept everything differs from the page cache before", seed, name)
			}
		}
	}
}
