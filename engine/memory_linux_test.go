package engine

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// A freed memory comes back zeroed except where the module's data segments
// will write again.
func TestMemPoolClearsAllButTheDataRanges(t *testing.T) {
	pool := newMemPool([][2]uint32{{100, 200}, {300, 400}}).(*memPool)
	m := pool.Allocate(0, 1<<20)
	buf := m.Reallocate(1000)
	for i := range buf {
		buf[i] = 0xff
	}
	grown := m.Reallocate(4096)
	if &grown[0] != &buf[0] {
		t.Fatal("growing moved the memory")
	}
	m.Free()
	again := pool.Allocate(0, 1<<20)
	if again != m {
		t.Fatal("the pool did not hand back the freed memory")
	}
	b := again.Reallocate(4096)
	for i, v := range b {
		kept := (i >= 100 && i < 200) || (i >= 300 && i < 400)
		if kept && v != 0xff || !kept && v != 0 {
			t.Fatalf("byte %d = %#x after Free (kept=%v)", i, v, kept)
		}
	}
	again.Free()
}

// status reads a size in kB from /proc/self/status, in bytes.
func status(t *testing.T, key string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc/self/status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", key, line)
			}
			return kb << 10
		}
	}
	t.Skipf("/proc/self/status has no %s", key)
	return 0
}

// resetPeak makes VmHWM, the process's peak RSS, start again from now.
func resetPeak(t *testing.T) {
	t.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skipf("cannot reset the peak RSS: %v", err)
	}
}

// A memory that grew past clearLimit gives its pages back to the kernel
// when freed, and comes back from the pool zeroed.
func TestMemPoolReturnsLargeMemory(t *testing.T) {
	const size = 192 << 20
	pool := newMemPool(nil).(*memPool)
	m := pool.Allocate(0, reserve)
	buf := m.Reallocate(size)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 0xff
	}
	held := status(t, "VmRSS")
	m.Free()
	if freed := held - status(t, "VmRSS"); freed < size*3/4 {
		t.Fatalf("Free gave back %d MiB of a %d MiB memory", freed>>20, size>>20)
	}
	again := pool.Allocate(0, reserve)
	if again != m {
		t.Fatal("the pool did not hand back the freed memory")
	}
	b := again.Reallocate(size)
	for i := 0; i < len(b); i += 4096 {
		if b[i] != 0 {
			t.Fatalf("byte %d = %#x after Free", i, b[i])
		}
	}
	again.Free()
}

// memory_limit bounds what a guest costs the host: a program that
// allocates without end, and writes all it gets, grows the process's peak
// RSS by about its limit and no more, and once the run ends its memory goes
// back to the kernel. The test uses the default limit (a smaller one with
// -short), so it holds the default to its promise.
func TestMemoryLimitBoundsHostMemory(t *testing.T) {
	limit := int64(world.DefaultMemoryLimit)
	fields := ""
	if testing.Short() {
		limit, fields = 128<<20, `"memory_limit": "128MiB", `
	}
	p := prepare(t, hogWorld(fields, ""))
	runtime.GC()
	debug.FreeOSMemory()
	before := status(t, "VmRSS")
	resetPeak(t)
	r := run(t, p, 1, nil)
	peak := status(t, "VmHWM")
	if r.Class != ClassMemory || !strings.Contains(r.Reason, "over its memory_limit of "+world.SizeText(limit)) {
		t.Fatalf("class=%q reason=%q", r.Class, r.Reason)
	}
	grew := peak - before
	t.Logf("limit %d MiB: the peak RSS grew by %d MiB", limit>>20, grew>>20)
	if grew > limit+96<<20 {
		t.Errorf("the peak RSS grew by %d MiB under a memory_limit of %d MiB", grew>>20, limit>>20)
	}
	if grew < limit*3/4 {
		t.Errorf("the peak RSS grew by %d MiB only: the hog did not hold its %d MiB, so this test measures nothing", grew>>20, limit>>20)
	}
	runtime.GC()
	debug.FreeOSMemory()
	if kept := status(t, "VmRSS") - before; kept > 64<<20 {
		t.Errorf("after the run the process holds %d MiB more than before it: the guest's memory did not go back", kept>>20)
	}
}
