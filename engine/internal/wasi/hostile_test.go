package wasi

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/sched"
)

// These tests call the host functions the way a hostile guest would: with
// counts, lengths and offsets that no honest program passes (issue 12).
// Each runs against a real wazero memory of a chosen size, inside a sched
// process so that calls that block are as in a run.

// memModule is a wasm module that exports one memory of pages pages.
func memModule(pages uint32) []byte {
	uleb := func(v uint32) []byte {
		var b []byte
		for {
			c := byte(v & 0x7f)
			v >>= 7
			if v != 0 {
				b = append(b, c|0x80)
				continue
			}
			return append(b, c)
		}
	}
	mem := append([]byte{1, 0}, uleb(pages)...) // one memory, no maximum
	exp := []byte{1, 6, 'm', 'e', 'm', 'o', 'r', 'y', 2, 0}
	out := []byte{0, 'a', 's', 'm', 1, 0, 0, 0}
	out = append(append(append(out, 5), uleb(uint32(len(mem)))...), mem...)
	out = append(append(append(out, 7), uleb(uint32(len(exp)))...), exp...)
	return out
}

// hostile is a guest instance with nothing but memory, and its Process.
type hostile struct {
	rt      wazero.Runtime
	m       api.Module
	p       *Process
	ctx     context.Context
	asserts []Assertion
	fields  [][]string
}

func newHostile(t testing.TB, pages uint32) *hostile {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	if err := Instantiate(ctx, rt); err != nil {
		t.Fatal(err)
	}
	compiled, err := rt.CompileModule(ctx, memModule(pages))
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{rt: rt}
	h.m, err = rt.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	h.reset(t)
	return h
}

// reset gives the instance a fresh Process on a fresh 1 MiB disk.
func (h *hostile) reset(t testing.TB) {
	h.asserts, h.fields = nil, nil
	h.p = &Process{
		Name:    "hostile",
		Args:    []string{"hostile", "-x"},
		Env:     []string{"A=1"},
		Random:  rng.New(1, "hostile", 0),
		Disk:    disk.New(disk.Options{Capacity: 1 << 20}),
		Output:  func(int, []byte) {},
		Buggify: func(string, float64) bool { return false },
		Assert: func(a Assertion) bool {
			h.asserts = append(h.asserts, a)
			return false
		},
		History:       (*fieldsRecorder)(h),
		SetupComplete: func() {},
		QuietFor:      func(int64) {},
	}
	h.ctx = WithProcess(context.Background(), h.p)
}

type fieldsRecorder hostile

func (r *fieldsRecorder) Invoke(f []string) int64 { r.fields = append(r.fields, f); return 1 }
func (r *fieldsRecorder) Return(_ int64, f []string) {
	r.fields = append(r.fields, f)
}

// hostFuncs is every host function, by module and name.
func hostFuncs() map[string]hostFunc {
	all := map[string]hostFunc{}
	for _, f := range wasiFuncs {
		all["wasi_snapshot_preview1."+f.name] = f
	}
	for _, f := range seedfallFuncs {
		all["seedfall."+f.name] = f
	}
	return all
}

// funcsByName is filled on first use: the init functions of the other
// files add to seedfallFuncs after package variables are set.
var funcsByName map[string]hostFunc

// within runs body in a sched process, as a guest runs, and returns what
// it panicked with (nil, or nil for the exit a killed or exiting guest
// unwinds with).
func (h *hostile) within(body func()) (panicked any) {
	s := sched.New(rng.New(1, "sched", 0))
	h.p.Now = s.Now
	pr := s.Go("hostile", func(*sched.Proc) {
		defer func() {
			if r := recover(); r != nil {
				var ee *sys.ExitError
				if err, ok := r.(error); ok && errors.As(err, &ee) {
					return
				}
				panicked = fmt.Sprint(r)
			}
		}()
		body()
	})
	h.p.Proc = pr
	s.Run(sched.Options{Until: 1 << 40})
	s.Shutdown()
	return panicked
}

// call calls a host function by "module.name" with args; it returns the
// errno for those that return one.
func (h *hostile) call(name string, args ...uint64) errno.Errno {
	if funcsByName == nil {
		funcsByName = hostFuncs()
	}
	f, ok := funcsByName[name]
	if !ok {
		panic("no host function " + name)
	}
	stack := make([]uint64, max(len(f.params), len(f.results), 1))
	copy(stack, args)
	f.fn(h.ctx, h.m, stack)
	if len(f.results) == 0 {
		return 0
	}
	return errno.Errno(stack[0])
}

// callUp calls a host function inside a process and fails the test if the
// host panicked.
func (h *hostile) callUp(t testing.TB, name string, args ...uint64) errno.Errno {
	t.Helper()
	var en errno.Errno
	if r := h.within(func() { en = h.call(name, args...) }); r != nil {
		t.Fatalf("%s%v: host panicked: %v", name, args, r)
	}
	return en
}

// allocated runs f and returns the bytes the whole process allocated
// meanwhile.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

const smallAlloc = 4 << 20 // what one hostile call may cost the host, at most

func TestHostilePollOneoffHugeCount(t *testing.T) {
	// The counts: 0x55555556 (a 45 GB makeslice, then OOM) and
	// 0x5555556 (index out of range); 0x55555556*48 and 0x5555556*48
	// both wrap to 32 in 32 bits. Neither can be an array in any wasm
	// memory, so EINVAL, at once, whatever the memory size.
	for _, pages := range []uint32{1, 1024} {
		h := newHostile(t, pages)
		for _, n := range []uint64{0x55555556, 0x5555556} {
			var en errno.Errno
			got := allocated(func() { en = h.callUp(t, "wasi_snapshot_preview1.poll_oneoff", 0, 4096, n, 8192) })
			if en != errno.EINVAL {
				t.Errorf("%d pages, nsubscriptions %#x: errno %d, want EINVAL", pages, n, en)
			}
			if got > smallAlloc {
				t.Errorf("%d pages, nsubscriptions %#x: host allocated %d bytes", pages, n, got)
			}
		}
		// The host is still up: a valid zero-timeout clock subscription
		// fires.
		sub := make([]byte, 48)
		sub[8] = eventClock
		h.m.Memory().Write(0, sub)
		if en := h.callUp(t, "wasi_snapshot_preview1.poll_oneoff", 0, 4096, 1, 8192); en != 0 {
			t.Fatalf("valid poll_oneoff after the hostile ones: errno %d", en)
		}
		if n, _ := h.m.Memory().ReadUint32Le(8192); n != 1 {
			t.Fatalf("valid poll_oneoff: %d events, want 1", n)
		}
	}
	// A count that fits the memory but an array that runs past its end is
	// EFAULT; so is an out array that does.
	h := newHostile(t, 1)
	if en := h.callUp(t, "wasi_snapshot_preview1.poll_oneoff", 65536-48, 0, 2, 8192); en != errno.EFAULT {
		t.Errorf("subscriptions past the end: errno %d, want EFAULT", en)
	}
	if en := h.callUp(t, "wasi_snapshot_preview1.poll_oneoff", 0, 65536-32, 2, 8192); en != errno.EFAULT {
		t.Errorf("events past the end: errno %d, want EFAULT", en)
	}
}

func TestHostileFdWriteHugeIovecCount(t *testing.T) {
	h := newHostile(t, 16)
	for _, fd := range []uint64{1, 2} {
		var en errno.Errno
		got := allocated(func() { en = h.callUp(t, "wasi_snapshot_preview1.fd_write", fd, 0, 0x20000000, 512) })
		if en != errno.EINVAL {
			t.Errorf("fd_write(%d) with 0x20000000 iovecs: errno %d, want EINVAL (more than IOV_MAX)", fd, en)
		}
		if got > smallAlloc {
			t.Errorf("fd_write with 0x20000000 iovecs: host allocated %d bytes", got)
		}
	}
	for _, name := range []string{"fd_read", "fd_write"} {
		if en := h.callUp(t, "wasi_snapshot_preview1."+name, 1, 0, IovMax+1, 512); en != errno.EINVAL && en != errno.EBADF {
			t.Errorf("%s with IovMax+1 iovecs: errno %d", name, en)
		}
	}
	// IovMax iovecs, each naming all of memory: the host neither copies
	// them all nor grows its line buffer past MaxLine.
	mem := h.m.Memory()
	for i := uint32(0); i < IovMax; i++ {
		mem.WriteUint32Le(i*8, 0)
		mem.WriteUint32Le(i*8+4, mem.Size())
	}
	var en errno.Errno
	got := allocated(func() { en = h.callUp(t, "wasi_snapshot_preview1.fd_write", 1, 0, IovMax, uint64(mem.Size()-4)) })
	if en != 0 {
		t.Fatalf("fd_write of IovMax whole-memory iovecs: errno %d", en)
	}
	if n, _ := mem.ReadUint32Le(mem.Size() - 4); n != IovMax*mem.Size() {
		t.Errorf("fd_write wrote %d bytes, want %d", n, IovMax*mem.Size())
	}
	if got > smallAlloc {
		t.Errorf("fd_write of %d bytes to stdout: host allocated %d bytes", IovMax*mem.Size(), got)
	}
	// An iovec array past the end of memory is EFAULT.
	if en := h.callUp(t, "wasi_snapshot_preview1.fd_write", 1, uint64(mem.Size()-8), 2, 0); en != errno.EFAULT {
		t.Errorf("iovecs past the end: errno %d, want EFAULT", en)
	}
}

func TestHostileReaddirHugeBuffer(t *testing.T) {
	h := newHostile(t, 1)
	if en := h.callUp(t, "wasi_snapshot_preview1.fd_readdir", 3, 0, 0xffffffff, 0, 100); en != errno.EFAULT {
		t.Errorf("readdir into a 4 GiB buffer in 64 KiB of memory: errno %d, want EFAULT", en)
	}
	// A 1 GiB buffer in a guest that has it is valid: the entries go
	// straight into it, and the host allocates nothing like 1 GiB.
	h = newHostile(t, 16384+1)
	for _, name := range []string{"a", "bb", "ccc"} {
		if err := h.p.Disk.WriteFile(name, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var en errno.Errno
	got := allocated(func() { en = h.callUp(t, "wasi_snapshot_preview1.fd_readdir", 3, 65536, 1<<30, 0, 100) })
	if en != 0 {
		t.Fatalf("readdir into a 1 GiB buffer: errno %d", en)
	}
	if got > smallAlloc {
		t.Errorf("readdir into a 1 GiB buffer: host allocated %d bytes", got)
	}
	n, _ := h.m.Memory().ReadUint32Le(100)
	if want := uint32(3*24 + 6); n != want {
		t.Errorf("readdir returned %d bytes, want %d", n, want)
	}
	b, _ := h.m.Memory().Read(65536+24, 1)
	if string(b) != "a" {
		t.Errorf("first entry %q, want a", b)
	}
}

func TestHostileAssertHugeMessage(t *testing.T) {
	const big = 64 << 20 // the 64 MB
	h := newHostile(t, big/65536+1)
	mem := h.m.Memory()
	fill, _ := mem.Read(0, big)
	for i := range fill {
		fill[i] = 'm'
	}
	got := allocated(func() {
		for range 10 {
			h.callUp(t, "seedfall.assert", AssertAlways, 1, 0, big, 0, big, 0, big)
			h.callUp(t, "seedfall.event", 0, big, 0, big)
			h.callUp(t, "seedfall.buggify", 0, big, 0)
		}
	})
	if got > 10*smallAlloc {
		t.Errorf("20 texts of 64 MB: host allocated %d bytes", got)
	}
	if len(h.asserts) != 20 {
		t.Fatalf("%d assertions reached the run, want 20", len(h.asserts))
	}
	marker := fmt.Sprintf("…(cut, %d bytes)", big-MaxPayload)
	for _, a := range h.asserts {
		for _, s := range []string{a.Message, a.Details} {
			if len(s) != MaxPayload+len(marker) || !strings.HasSuffix(s, marker) || strings.Count(s, "m") != MaxPayload {
				t.Fatalf("text of %d bytes ends %q; want %d bytes of it and %q", len(s), s[max(0, len(s)-40):], MaxPayload, marker)
			}
		}
	}
	if a := h.asserts[0]; len(a.Site) != MaxPayload+len(marker) {
		t.Errorf("site of %d bytes", len(a.Site))
	}
	// The same message cuts the same way: a property stays one property.
	if h.asserts[0] != h.asserts[2] {
		t.Error("the same assertion cut differently twice")
	}
}

func TestHostileHistoryPayload(t *testing.T) {
	h := newHostile(t, 64)
	mem := h.m.Memory()
	val := strings.Repeat("v", 3*MaxPayload)
	rec := fmt.Sprintf("2:kv,3:put,1:k,%d:%s,", len(val), val)
	mem.WriteString(0, rec)
	h.callUp(t, "seedfall.op_invoke", 0, uint64(len(rec)))
	if len(h.fields) != 1 || len(h.fields[0]) != 4 {
		t.Fatalf("fields %d", len(h.fields))
	}
	if f := h.fields[0][3]; !strings.HasSuffix(f, fmt.Sprintf("…(cut, %d bytes)", 2*MaxPayload)) || len(f) > MaxPayload+40 {
		t.Errorf("history field of %d bytes not cut", len(f))
	}
	// More than MaxFields fields is malformed; nothing is recorded.
	many := strings.Repeat("0:,", MaxFields+1)
	mem.WriteString(0, many)
	h.callUp(t, "seedfall.op_invoke", 0, uint64(len(many)))
	if len(h.fields) != 1 {
		t.Errorf("a record of %d fields was recorded", MaxFields+1)
	}
	// A run of a million digits is no length.
	digits := strings.Repeat("9", 1<<20)
	mem.WriteString(0, digits)
	got := allocated(func() { h.callUp(t, "seedfall.op_invoke", 0, uint64(len(digits))) })
	if got > smallAlloc || len(h.fields) != 1 {
		t.Errorf("a million digits: allocated %d, fields %d", got, len(h.fields))
	}
}

func TestHostileOffsetsAndPointers(t *testing.T) {
	h := newHostile(t, 1)
	size := uint64(h.m.Memory().Size())
	cases := []struct {
		name string
		args []uint64
		want errno.Errno
	}{
		// A pointer list that ends exactly at the top of memory must
		// fault, not wrap round to address 0.
		{"wasi_snapshot_preview1.args_get", []uint64{size - 4, size - 4}, errno.EFAULT},
		{"wasi_snapshot_preview1.environ_get", []uint64{0xfffffffc, 0}, errno.EFAULT},
		{"wasi_snapshot_preview1.fd_pread", []uint64{3, 0, 0, 1 << 63, 0}, errno.EINVAL},
		{"wasi_snapshot_preview1.fd_pwrite", []uint64{1, 0, 0, 1 << 63, 0}, errno.EINVAL},
		{"wasi_snapshot_preview1.path_open", []uint64{3, 0, 0, 8192, 0, 0, 0, 0, 0}, errno.ENAMETOOLONG},
		{"wasi_snapshot_preview1.path_open", []uint64{3, 0, 0, 0xffffffff, 0, 0, 0, 0, 0}, errno.EFAULT},
		{"wasi_snapshot_preview1.random_get", []uint64{1, 0xffffffff}, errno.EFAULT},
		{"wasi_snapshot_preview1.fd_readdir", []uint64{3, 0xffffffff, 2, 0, 0}, errno.EFAULT},
	}
	for _, c := range cases {
		if en := h.callUp(t, c.name, c.args...); en != c.want {
			t.Errorf("%s%v: errno %d, want %d", c.name, c.args, en, c.want)
		}
	}
	// fd_allocate's offset+len that overflows.
	h.m.Memory().WriteString(0, "f")
	if en := h.callUp(t, "wasi_snapshot_preview1.path_open", 3, 0, 0, 1, oflagCreat, rightFdRead|rightFdWrite, 0, 0, 100); en != 0 {
		t.Fatal(en)
	}
	fd, _ := h.m.Memory().ReadUint32Le(100)
	for _, c := range []struct {
		off, n uint64
		want   errno.Errno
	}{{1 << 62, 1 << 62, errno.EFBIG}, {1 << 63, 1, errno.EINVAL}, {1, 1 << 63, errno.EINVAL}, {0, 10, 0}} {
		if en := h.callUp(t, "wasi_snapshot_preview1.fd_allocate", uint64(fd), c.off, c.n); en != c.want {
			t.Errorf("fd_allocate(%#x, %#x): errno %d, want %d", c.off, c.n, en, c.want)
		}
	}
}
