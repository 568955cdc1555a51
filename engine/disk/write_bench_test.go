package disk

import (
	"bytes"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// Write-heavy workloads without fsync: the page cache and the pending log
// grow with every write. Each drops what it wrote with a plain crash every
// 64 MiB, so that memory stays bounded; the crash is part of the cost.
// Besides wall time each reports cpu-ns/op, the CPU time of the whole
// process (the collector's too), which a busy machine disturbs less.

const benchSpan = 64 << 20

// benchUnsynced writes size-byte records where at says, crashing every
// benchSpan bytes written.
func benchUnsynced(b *testing.B, size int, at func(i int, f *Handle) int64) {
	d := New(Options{})
	h, _ := d.Open(d.Root(), "f", true, Write|Create)
	rec := bytes.Repeat([]byte("w"), size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var written int64
	i := 0
	start := cpuTime()
	for b.Loop() {
		if _, e := h.WriteAt(rec, at(i, h)); e != 0 {
			b.Fatal(e)
		}
		i++
		if written += int64(size); written >= benchSpan {
			d.Crash()
			h, _ = d.Open(d.Root(), "f", true, Write|Create)
			written, i = 0, 0
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func appendAt(_ int, h *Handle) int64 { return h.Size() }

func BenchmarkUnsyncedAppend64K(b *testing.B)  { benchUnsynced(b, 64<<10, appendAt) }
func BenchmarkUnsyncedAppend4K(b *testing.B)   { benchUnsynced(b, 4096, appendAt) }
func BenchmarkUnsyncedAppend100(b *testing.B)  { benchUnsynced(b, 100, appendAt) }
func BenchmarkUnsyncedAppend1000(b *testing.B) { benchUnsynced(b, 1000, appendAt) }

// Overwrites of random 4 KiB pages and of random 100-byte records of a
// 16 MiB file written unsynced first, as a database without fsync does.
func benchOverwrite(b *testing.B, size int, aligned bool) {
	r := rand.New(rand.NewPCG(1, 2))
	const file = 16 << 20
	benchUnsynced(b, size, func(i int, h *Handle) int64 {
		if h.Size() < file {
			return h.Size()
		}
		off := r.Int64N(file - int64(size))
		if aligned {
			off -= off % int64(size)
		}
		return off
	})
}

func BenchmarkUnsyncedOverwrite4K(b *testing.B)  { benchOverwrite(b, 4096, true) }
func BenchmarkUnsyncedOverwrite100(b *testing.B) { benchOverwrite(b, 100, false) }

// The same range written again and again: every version stays pending.
func BenchmarkUnsyncedSameRange64K(b *testing.B) {
	benchUnsynced(b, 64<<10, func(int, *Handle) int64 { return 0 })
}

// An fsync after every write of size bytes, over a 1 MiB file. sync is
// called after the write at off; SyncTo's fast path (nothing logged after
// its mark) should cost what Sync does.
func benchSync(b *testing.B, size int, sync func(h *Handle, off int64)) {
	d := New(Options{})
	h, _ := d.Open(d.Root(), "f", true, Write|Create)
	rec := bytes.Repeat([]byte("s"), size)
	const file = 1 << 20
	b.SetBytes(int64(size))
	b.ReportAllocs()
	var off int64
	for b.Loop() {
		if _, e := h.WriteAt(rec, off); e != 0 {
			b.Fatal(e)
		}
		sync(h, off)
		if off += int64(size); off+int64(size) > file {
			off = 0
		}
	}
}

func plainSync(h *Handle, _ int64) {
	if e := h.Sync(); e != 0 {
		panic(e)
	}
}

func syncToNow(h *Handle, _ int64) {
	if e := h.SyncTo(h.SyncMark()); e != 0 {
		panic(e)
	}
}

// syncToOverlapped starts the fsync after the write at off, then writes
// half a record over its second half before it completes: SyncTo makes
// the first write durable with its own bytes and leaves the second
// pending, for the next fsync.
func syncToOverlapped(size int) func(h *Handle, off int64) {
	rec := bytes.Repeat([]byte("o"), size)
	return func(h *Handle, off int64) {
		mark := h.SyncMark()
		if _, e := h.WriteAt(rec[:size/2], off+int64(size/2)); e != 0 {
			panic(e)
		}
		if e := h.SyncTo(mark); e != 0 {
			panic(e)
		}
	}
}

func BenchmarkSync4K(b *testing.B)             { benchSync(b, 4096, plainSync) }
func BenchmarkSyncToFast4K(b *testing.B)       { benchSync(b, 4096, syncToNow) }
func BenchmarkSyncToOverlapped4K(b *testing.B) { benchSync(b, 4096, syncToOverlapped(4096)) }
func BenchmarkSync100(b *testing.B)            { benchSync(b, 100, plainSync) }
func BenchmarkSyncToFast100(b *testing.B)      { benchSync(b, 100, syncToNow) }
func BenchmarkSyncToOverlapped100(b *testing.B) {
	benchSync(b, 100, syncToOverlapped(100))
}
