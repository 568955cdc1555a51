// Command pause measures the prototype of guests that pause (issue 15,
// engine/guest/pauseoverlay): what a restart from a post-init snapshot costs
// against a cold boot, what a snapshot weighs, and what a pause/resume cycle
// of an idle guest costs against a blocking poll_oneoff hand-off. Every
// figure comes from rounds that interleave the variants compared. See
// README.md in this directory for the figures and how to read them.
//
//	go run ./scripts/experiments/pause [-rounds 5] [-n 200] [-only restart|idle]
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

var (
	rounds = flag.Int("rounds", 5, "interleaved rounds")
	n      = flag.Int("n", 200, "operations per variant and round")
	only   = flag.String("only", "", `one part only: "restart" or "idle"`)
	root   = flag.String("root", ".", "the repository root")
)

func main() {
	flag.Parse()
	fmt.Printf("pause prototype, %s, %d cores, %s; %d rounds of %d\n", runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), *rounds, *n)
	if *only == "" || *only == "restart" {
		restart("trivial node", build("scripts/benchtool/trivial/node", false), []string{"node"})
		restart("kvlog server", build("examples/kvlog/server", true), []string{"server", "-ack", "before-sync", "-sync-every", "200ms"})
	}
	if *only == "" || *only == "idle" {
		idle()
	}
}

// build builds pkg (relative to -root) with the pause overlay (idle pauses
// on), the fsync overlay as the engine adds it, and the net overlay if net.
func build(pkg string, net bool) []byte {
	ctx := context.Background()
	b := &guest.Builder{}
	goroot, err := b.GOROOT()
	check(err)
	ovl, err := pauseoverlay.Files(goroot, pauseoverlay.Options{Idle: true})
	check(err)
	fs, err := fsyncoverlay.Files(goroot)
	check(err)
	maps.Copy(ovl, fs)
	if net {
		nf, err := netoverlay.FilesWith(goroot, netoverlay.Options{UDP: true})
		check(err)
		maps.Copy(ovl, nf)
	}
	art, err := b.Build(ctx, guest.Request{Node: filepath.Base(pkg), Pkg: filepath.Join(*root, pkg), Overlay: ovl})
	check(err)
	wasm, err := guest.ExportPause(art.Wasm)
	check(err)
	return wasm
}

// host is one wazero runtime with WASI and the overlay's host module.
type host struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *pauseoverlay.Program
}

func newHost(wasm []byte, wasi func(wazero.HostModuleBuilder)) *host {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	if wasi != nil {
		wasi(b)
	}
	_, err := b.Instantiate(ctx)
	check(err)
	prog, err := pauseoverlay.Compile(ctx, r, wasm)
	check(err)
	check(pauseoverlay.Instantiate(ctx, r, prog.Module))
	return &host{ctx: ctx, r: r, prog: prog}
}

// atMain pauses the guest at every snapshot point: before main.main.
var atMain = &pauseoverlay.Control{SnapshotPoint: func(api.Module) bool { return true }}

func restart(name string, wasm []byte, args []string) {
	h := newHost(wasm, nil)
	defer h.r.Close(h.ctx)
	seed := uint64(0)
	cfg := func() wazero.ModuleConfig {
		seed++
		var s [32]byte
		s[0], s[1], s[2] = byte(seed), byte(seed>>8), byte(seed>>16)
		return wazero.NewModuleConfig().WithName("").WithArgs(args...).WithStdout(io.Discard).WithStderr(io.Discard).WithRandSource(rand.NewChaCha8(s))
	}
	ctx := pauseoverlay.WithControl(h.ctx, atMain)
	m, err := h.prog.Start(ctx, h.r, cfg())
	check(err)
	snap, err := h.prog.Take(m)
	check(err)
	m.Close(ctx)
	cow, err := pauseoverlay.NewCOW(snap, "")
	check(err)
	defer cow.Close()
	pool := &pool{}
	poolCtx := experimental.WithMemoryAllocator(ctx, pool)
	cowCtx := pauseoverlay.WithCOW(ctx, cow)

	type variant struct {
		name string
		run  func() (toMain, cycle time.Duration)
	}
	cold := func(ctx context.Context) func() (time.Duration, time.Duration) {
		return func() (time.Duration, time.Duration) {
			c := cfg()
			t0 := time.Now()
			m, err := h.prog.Start(ctx, h.r, c)
			t1 := time.Now()
			check(err)
			m.Close(ctx)
			return t1.Sub(t0), time.Since(t0)
		}
	}
	restore := func(ctx context.Context) func() (time.Duration, time.Duration) {
		return func() (time.Duration, time.Duration) {
			c := cfg()
			t0 := time.Now()
			m, err := h.prog.Restore(ctx, h.r, snap, c)
			check(err)
			check(pauseoverlay.Resume(ctx, m))
			t1 := time.Now()
			m.Close(ctx)
			return t1.Sub(t0), time.Since(t0)
		}
	}
	reset := func(ctx context.Context) func() (time.Duration, time.Duration) {
		m, err := h.prog.Restore(ctx, h.r, snap, cfg())
		check(err)
		check(pauseoverlay.Resume(ctx, m))
		return func() (time.Duration, time.Duration) {
			t0 := time.Now()
			check(h.prog.Reset(ctx, m, snap))
			check(pauseoverlay.Resume(ctx, m))
			d := time.Since(t0)
			return d, d
		}
	}
	vs := []variant{
		{"cold boot, wazero's allocator", cold(ctx)},
		{"cold boot, pooled memory", cold(poolCtx)},
		{"restore: copy, wazero's allocator", restore(ctx)},
		{"restore: copy into pooled memory", restore(poolCtx)},
		{"restore: copy-on-write mapping", restore(cowCtx)},
		{"reset a live instance: copy", reset(poolCtx)},
		{"reset a live instance: copy-on-write", reset(cowCtx)},
	}
	toMain := make([][]float64, len(vs))
	cycle := make([][]float64, len(vs))
	for round := 0; round < *rounds; round++ {
		for i, v := range vs {
			v.run() // warm
			var a, b time.Duration
			for k := 0; k < *n; k++ {
				x, y := v.run()
				a += x
				b += y
			}
			toMain[i] = append(toMain[i], float64(a.Microseconds())/float64(*n))
			cycle[i] = append(cycle[i], float64(b.Microseconds())/float64(*n))
		}
	}
	fmt.Printf("\n%s: restart to main.main (µs per instance, median and range of %d rounds)\n", name, *rounds)
	fmt.Printf("  %-36s %20s %20s\n", "", "to main", "incl. close")
	for i, v := range vs {
		fmt.Printf("  %-36s %20s %20s\n", v.name, spread(toMain[i]), spread(cycle[i]))
	}
	breakdown(h, snap, cfg, ctx, cowCtx)

	// Memory.
	mod := h.prog.Module
	var initial uint32
	for _, d := range mod.ExportedMemories() {
		initial = d.Min()
	}
	fmt.Printf("  memory: snapshot %s (%d globals); the module's initial memory %s; its wasm %s\n",
		mib(len(snap.Memory)), len(snap.Globals), mib(int(initial)*65536), mib(len(wasm)))
	m, err = h.prog.Restore(cowCtx, h.r, snap, cfg())
	check(err)
	check(pauseoverlay.Resume(cowCtx, m))
	buf, _ := m.Memory().Read(0, 1)
	rss, dirty := smaps(uintptr(unsafe.Pointer(&buf[0])))
	fmt.Printf("  copy-on-write instance at main: %s of the snapshot's pages resident, %s private (copied)\n", kib(rss), kib(dirty))
	m.Close(ctx)
}

// breakdown times the parts of a copying restore and of a COW one.
func breakdown(h *host, snap *pauseoverlay.Snapshot, cfg func() wazero.ModuleConfig, ctx, cowCtx context.Context) {
	var inst, load, resume, cowInst, cowResume time.Duration
	for k := 0; k < *n; k++ {
		t0 := time.Now()
		m, err := h.r.InstantiateModule(ctx, h.prog.Bare, cfg().WithStartFunctions())
		check(err)
		t1 := time.Now()
		mem := m.Memory()
		_, ok := mem.Grow(uint32(len(snap.Memory))/65536 - mem.Size()/65536)
		if !ok {
			fail("grow")
		}
		buf, _ := mem.Read(0, mem.Size())
		copy(buf, snap.Memory)
		for i, name := range h.prog.Globals {
			m.ExportedGlobal(name).(api.MutableGlobal).Set(snap.Globals[i])
		}
		t2 := time.Now()
		check(pauseoverlay.Resume(ctx, m))
		t3 := time.Now()
		m.Close(ctx)
		inst, load, resume = inst+t1.Sub(t0), load+t2.Sub(t1), resume+t3.Sub(t2)

		t0 = time.Now()
		m, err = h.prog.Restore(cowCtx, h.r, snap, cfg())
		check(err)
		t1 = time.Now()
		check(pauseoverlay.Resume(cowCtx, m))
		t2 = time.Now()
		m.Close(ctx)
		cowInst, cowResume = cowInst+t1.Sub(t0), cowResume+t2.Sub(t1)
	}
	per := func(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/float64(*n)) }
	fmt.Printf("  parts (µs): copy restore = instantiate %s + grow, copy, globals %s + resume to main %s; COW restore = instantiate, map, globals %s + resume to main %s\n",
		per(inst), per(load), per(resume), per(cowInst), per(cowResume))
}

// pool is a memory allocator like the engine's (engine/memory_linux.go):
// address space reserved once and reused, cleared when freed.
type pool struct{ free []*pooled }

type pooled struct {
	buf  []byte
	used uint64
	p    *pool
}

func (p *pool) Allocate(capacity, max uint64) experimental.LinearMemory {
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		return m
	}
	buf, err := mmapAnon(4 << 30)
	check(err)
	return &pooled{buf: buf, p: p}
}

func (m *pooled) Reallocate(size uint64) []byte {
	if size > m.used {
		m.used = size
	}
	return m.buf[:size:size]
}

func (m *pooled) Free() {
	clear(m.buf[:m.used])
	m.used = 0
	m.p.free = append(m.p.free, m)
}

// smaps returns the resident and private dirty bytes of the mapping that
// starts at addr.
func smaps(addr uintptr) (rss, dirty int) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return -1, -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		l := sc.Text()
		if lo, _, ok := strings.Cut(l, "-"); ok && !strings.Contains(lo, " ") && !strings.HasSuffix(strings.Fields(l)[0], ":") {
			a, err := strconv.ParseUint(lo, 16, 64)
			in = err == nil && uintptr(a) == addr
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "Rss:":
			rss = v << 10
		case "Private_Dirty:":
			dirty = v << 10
		}
	}
	return rss, dirty
}

func spread(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.0f (%.0f-%.0f)", s[len(s)/2], s[0], s[len(s)-1])
}

func mib(n int) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
func kib(n int) string { return fmt.Sprintf("%d KiB", n>>10) }

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "pause: "+format+"\n", args...)
	os.Exit(1)
}

var _ = bytes.NewBuffer
var _ = exec.Command

func idle() {}
