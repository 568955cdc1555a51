package disk

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
)

// What the page cache costs the host. Each case writes through Handle,
// as the WASI layer does (fd_write and fd_pwrite call WriteAt once per
// iovec), and the process measures its own memory: the Go heap in use,
// sampled after every operation, and the peak resident set (VmHWM, reset
// before each case). The GC runs at 400%, as cmd/seedfall sets it, so
// garbage shows as it would in a real run.

// memCase is one workload: run does the operations and returns the bytes
// the disk holds at its end (what a crash could still bring back, or the
// synced file).
type memCase struct {
	name string
	run  func(t testing.TB, d *Disk, sample func()) int64
}

const memTotal = 256 << 20

// appendCase writes memTotal bytes in writes of size bytes, unsynced.
func appendCase(size int) memCase {
	return memCase{fmt.Sprintf("append %d B", size), func(t testing.TB, d *Disk, sample func()) int64 {
		h, _ := d.Open(d.Root(), "f", true, Write|Create)
		buf := bytes.Repeat([]byte{'a'}, size)
		var off int64
		for off < memTotal {
			if n, e := h.WriteAt(buf, off); e != 0 || n != size {
				t.Fatalf("write: %d %v", n, e)
			}
			off += int64(size)
			sample()
		}
		return off
	}}
}

// overwriteCase writes the same span bytes at offset 0 over and over until
// memTotal bytes are pending: a crash may bring back any of them.
func overwriteCase(span int) memCase {
	return memCase{fmt.Sprintf("overwrite %d B", span), func(t testing.TB, d *Disk, sample func()) int64 {
		h, _ := d.Open(d.Root(), "f", true, Write|Create)
		buf := make([]byte, span)
		var done int64
		for i := 0; done < memTotal; i++ {
			buf[0] = byte(i)
			h.WriteAt(buf, 0)
			done += int64(span)
			sample()
		}
		return done
	}}
}

// syncedCase writes memTotal bytes in 64 KiB writes, then fsyncs.
func syncedCase() memCase {
	return memCase{"append 65536 B, fsync", func(t testing.TB, d *Disk, sample func()) int64 {
		n := appendCase(64<<10).run(t, d, sample)
		h, _ := d.Open(d.Root(), "f", true, Write)
		if e := h.Sync(); e != 0 {
			t.Fatal(e)
		}
		sample()
		return n
	}}
}

// crashMemCase writes memTotal bytes in writes of size bytes, unsynced, then
// crashes under m.
func crashMemCase(size int, name string, m CrashModel) memCase {
	return memCase{fmt.Sprintf("append %d B, crash %s", size, name), func(t testing.TB, d *Disk, sample func()) int64 {
		n := appendCase(size).run(t, d, sample)
		d.CrashWith(m)
		sample()
		return n
	}}
}

func vmHWM() int64 { return procStatus("VmHWM:") }
func vmRSS() int64 { return procStatus("VmRSS:") }

// procStatus reads a kB field of /proc/self/status, in bytes; -1 if none.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

type memFigures struct {
	held           int64
	peakHeap       int64 // peak heap in use above the baseline
	peakRSS        int64 // peak resident set above the baseline; -1 if unknown
	liveAfter      int64 // live heap after a GC at the end, above the baseline
	heapRatio      float64
	rssRatio       float64
	liveAfterRatio float64
}

func heapInUse(s []metrics.Sample) int64 {
	metrics.Read(s)
	return int64(s[0].Value.Uint64() + s[1].Value.Uint64())
}

// measure runs c on a fresh disk and returns what it cost.
func measure(t testing.TB, c memCase) memFigures {
	old := debug.SetGCPercent(400)
	defer debug.SetGCPercent(old)
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	baseLive := int64(ms.HeapAlloc)
	baseHeap := heapInUse(s)
	clearRefs := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	baseRSS := vmRSS()
	peak := baseHeap
	sample := func() { peak = max(peak, heapInUse(s)) }
	d := New(Options{})
	held := c.run(t, d, sample)
	f := memFigures{held: held, peakHeap: peak - baseHeap, peakRSS: -1}
	if clearRefs && baseRSS > 0 {
		f.peakRSS = vmHWM() - baseRSS
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	f.liveAfter = int64(ms.HeapAlloc) - baseLive
	runtime.KeepAlive(d)
	f.heapRatio = float64(f.peakHeap) / float64(held)
	f.rssRatio = float64(f.peakRSS) / float64(held)
	f.liveAfterRatio = float64(f.liveAfter) / float64(held)
	return f
}

// TestPageCacheMemory holds the page cache to what it costs the host: at
// most 1.25 times the bytes it holds, peak heap and peak resident set
// alike, for unsynced writes of 1000 bytes and more, appended or written
// over the same range again and again, and for a synced file. Smaller
// writes and crashes are measured and logged, with -v only (docs/limits.md,
// "Page cache").
func TestPageCacheMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 256 MiB per case")
	}
	const limit = 1.25
	for _, c := range []struct {
		c       memCase
		checked bool
	}{
		{appendCase(64 << 10), true},
		{appendCase(4096), true},
		{appendCase(1000), true},
		{appendCase(100), false},
		{overwriteCase(64 << 10), true},
		{overwriteCase(4096), true},
		{overwriteCase(100), false},
		{syncedCase(), true},
		{crashMemCase(64<<10, "KeepAll", KeepAll{}), false},
		{crashMemCase(4096, "KeepAll", KeepAll{}), false},
		{crashMemCase(64<<10, "plain", KeepNothing{}), false},
	} {
		if !c.checked && !testing.Verbose() {
			continue
		}
		f := measure(t, c.c)
		rss := "unknown"
		if f.peakRSS >= 0 {
			rss = fmt.Sprintf("%.3fx", f.rssRatio)
		}
		t.Logf("%-30s %d MiB held: peak heap %.3fx, peak RSS %s, live after %.3fx", c.c.name, f.held>>20, f.heapRatio, rss, f.liveAfterRatio)
		if !c.checked {
			continue
		}
		if f.heapRatio > limit || f.peakRSS >= 0 && f.rssRatio > limit || f.liveAfterRatio > limit {
			t.Errorf("%s: the page cache costs more than %.2f times the %d MiB it holds: peak heap %.3fx, peak RSS %s, live after %.3fx",
				c.c.name, limit, f.held>>20, f.heapRatio, rss, f.liveAfterRatio)
		}
	}
}
