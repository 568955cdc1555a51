//go:build linux

// Command pause measures the prototype of guests that pause (issue 15:
// engine/guest/pauseoverlay's overlay, ./proto's host): what a restart from a post-init snapshot costs
// against a cold boot, what a snapshot weighs, and what a pause/resume cycle
// of an idle guest costs against a blocking poll_oneoff hand-off. Every
// figure comes from rounds that interleave the variants compared. See
// README.md in this directory for the figures and how to read them.
//
//	go run ./scripts/experiments/pause [-rounds 5] [-n 200] [-only restart|idle|world] [-cpuprofile FILE]
//
// It needs Linux: copy-on-write snapshots, /proc/self/smaps, getrusage.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
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
	"github.com/seedfall/seedfall/scripts/experiments/pause/proto"
)

var (
	rounds = flag.Int("rounds", 5, "interleaved rounds")
	n      = flag.Int("n", 200, "operations per variant and round")
	only   = flag.String("only", "", `one part only: "restart", "idle", or "world" (its second half)`)
	root   = flag.String("root", ".", "the repository root")
	prof   = flag.String("cpuprofile", "", "write a CPU profile of the host to this file")
)

func main() {
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("pause prototype, %s, %d cores, %s; %d rounds of %d\n", runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), *rounds, *n)
	if *only == "" || *only == "restart" {
		restart("trivial node", build("scripts/benchtool/trivial/node", false), []string{"node"})
		restart("kvlog server", build("examples/kvlog/server", true), []string{"server", "-ack", "before-sync", "-sync-every", "200ms"})
	}
	if *only == "" || *only == "idle" || *only == "world" {
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
	// The builder exports what a pause needs (guest.ExportPause).
	if !guest.Pausable(art.Wasm) {
		check(fmt.Errorf("%s: the built module does not export what a pause needs", pkg))
	}
	return art.Wasm
}

// host is one wazero runtime with WASI and the overlay's host module.
type host struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *proto.Program
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
	prog, err := proto.Compile(ctx, r, wasm)
	check(err)
	check(proto.Instantiate(ctx, r, nil, prog.Module))
	return &host{ctx: ctx, r: r, prog: prog}
}

// atMain pauses the guest at every snapshot point: before main.main.
var atMain = &proto.Control{SnapshotPoint: func(api.Module) bool { return true }}

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
	ctx := proto.WithControl(h.ctx, atMain)
	m, err := h.prog.Start(ctx, h.r, cfg())
	check(err)
	snap, err := h.prog.Take(m)
	check(err)
	m.Close(ctx)
	cow, err := proto.NewCOW(snap, "")
	check(err)
	defer cow.Close()
	pool := &pool{}
	poolCtx := experimental.WithMemoryAllocator(ctx, pool)
	cowCtx := proto.WithCOW(ctx, cow)

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
			check(proto.Resume(ctx, m))
			t1 := time.Now()
			m.Close(ctx)
			return t1.Sub(t0), time.Since(t0)
		}
	}
	reset := func(ctx context.Context) func() (time.Duration, time.Duration) {
		m, err := h.prog.Restore(ctx, h.r, snap, cfg())
		check(err)
		check(proto.Resume(ctx, m))
		return func() (time.Duration, time.Duration) {
			t0 := time.Now()
			check(h.prog.Reset(ctx, m, snap, m.Memory().Size()))
			check(proto.Resume(ctx, m))
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
	cpu := make([][]float64, len(vs))
	for round := 0; round < *rounds; round++ {
		for i, v := range vs {
			v.run() // warm
			var a, b time.Duration
			c0 := cpuTime()
			for k := 0; k < *n; k++ {
				x, y := v.run()
				a += x
				b += y
			}
			c := cpuTime() - c0
			toMain[i] = append(toMain[i], float64(a.Microseconds())/float64(*n))
			cycle[i] = append(cycle[i], float64(b.Microseconds())/float64(*n))
			cpu[i] = append(cpu[i], float64(c.Microseconds())/float64(*n))
		}
	}
	fmt.Printf("\n%s: restart to main.main, µs per instance (median and range of %d rounds)\n", name, *rounds)
	fmt.Printf("  %-38s %18s %18s %18s\n", "", "wall, to main", "wall, incl. close", "CPU, incl. close")
	for i, v := range vs {
		fmt.Printf("  %-38s %18s %18s %18s\n", v.name, spread(toMain[i]), spread(cycle[i]), spread(cpu[i]))
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
	check(proto.Resume(cowCtx, m))
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
		check(proto.Resume(ctx, m))
		t3 := time.Now()
		m.Close(ctx)
		inst, load, resume = inst+t1.Sub(t0), load+t2.Sub(t1), resume+t3.Sub(t2)

		t0 = time.Now()
		m, err = h.prog.Restore(cowCtx, h.r, snap, cfg())
		check(err)
		t1 = time.Now()
		check(proto.Resume(cowCtx, m))
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

// mmapAnon reserves n bytes of address space, committed only when touched.
func mmapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
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

// idle times a wait of an idle guest three ways (unless -only world), and
// a trivial 3-node world.
func idle() {
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
	defer r.Close(ctx)
	bench, err := proto.Compile(ctx, r, build("scripts/experiments/pause/guest", false))
	check(err)
	trivial, err := proto.Compile(ctx, r, build("scripts/benchtool/trivial/node", false))
	check(err)
	check(proto.InstallWorldHost(ctx, r, bench.Module, trivial.Module))
	if *only != "world" {
		waits(ctx, r, bench)
	}
	trivialWorld(ctx, r, trivial)
}

// waits times one guest that sleeps 1ms many times: per wait, what the
// guest's timer and scheduler work and the host's way of waiting cost
// together.
func waits(ctx context.Context, r wazero.Runtime, bench *proto.Program) {
	const sleepsN = 2000
	sched, back := make(chan int64), make(chan struct{})
	var hw *proto.World
	go func() {
		for wake := range sched {
			hw.Now = wake
			back <- struct{}{}
		}
	}()
	sleeps := func(block, handOff bool, n int) func() time.Duration {
		return func() time.Duration {
			w := proto.NewWorld()
			w.Block = block
			if handOff {
				hw = w
				w.HandOff = func(wake int64) { sched <- wake; <-back }
			}
			t0 := time.Now()
			p, err := w.Spawn(ctx, r, bench, wazero.NewModuleConfig(), "10.0.0.1", "pausebench", "sleeps", strconv.Itoa(n))
			check(err)
			check(w.Run())
			d := time.Since(t0)
			if want := fmt.Sprintf("slept %d times in %v\n", n, time.Duration(n)*time.Millisecond); p.Code != 0 || (n > 0 && p.Out.String() != want) {
				fail("sleeps: exit %d, printed %q, want %q", p.Code, p.Out.String(), want)
			}
			p.M.Close(ctx)
			return d
		}
	}
	type variant struct {
		name       string
		full, boot func() time.Duration
	}
	vs := []variant{
		{"pause, resume from the world loop", sleeps(false, false, sleepsN), sleeps(false, false, 0)},
		{"block in poll_oneoff, clock moved there", sleeps(true, false, sleepsN), sleeps(true, false, 0)},
		{"block in poll_oneoff, hand-off to a goroutine", sleeps(true, true, sleepsN), sleeps(true, true, 0)},
	}
	per := make([][]float64, len(vs))
	perCPU := make([][]float64, len(vs))
	for round := 0; round < *rounds; round++ {
		for i, v := range vs {
			c0 := cpuTime()
			full := v.full()
			c1 := cpuTime()
			boot := v.boot()
			c2 := cpuTime()
			per[i] = append(per[i], float64((full-boot).Nanoseconds())/sleepsN/1e3)
			perCPU[i] = append(perCPU[i], float64(((c1-c0)-(c2-c1)).Nanoseconds())/sleepsN/1e3)
		}
	}
	fmt.Printf("\nan idle guest: one 1ms sleep of %d, µs each (median and range of %d rounds)\n", sleepsN, *rounds)
	fmt.Printf("  %-48s %18s %18s\n", "", "wall", "CPU")
	for i, v := range vs {
		fmt.Printf("  %-48s %18s %18s\n", v.name, spread1(per[i]), spread1(perCPU[i]))
	}
}

// trivialWorld times the trivial world of scripts/bench (3 nodes that
// print and sleep 3 times) in the toy World, every wait a pause, per seed.
func trivialWorld(ctx context.Context, r wazero.Runtime, trivial *proto.Program) {
	snapWorld := proto.NewWorld()
	snapWorld.PauseAtMain = true
	p, err := snapWorld.Spawn(ctx, r, trivial, wazero.NewModuleConfig(), "10.0.0.9", "node")
	check(err)
	snap, err := trivial.Take(p.M)
	check(err)
	p.M.Close(ctx)
	cow, err := proto.NewCOW(snap, "")
	check(err)
	defer cow.Close()
	cowCtx := proto.WithCOW(ctx, cow)
	poolCtx := experimental.WithMemoryAllocator(ctx, &pool{})
	seed := uint64(0)
	live := make([]*proto.Proc, 3)
	world := func(how string) func() time.Duration {
		return func() time.Duration {
			seed++
			t0 := time.Now()
			w := proto.NewWorld()
			w.Seed = seed
			var procs []*proto.Proc
			for i := 0; i < 3; i++ {
				addr := fmt.Sprintf("10.0.0.%d", i+1)
				var p *proto.Proc
				var err error
				switch how {
				case "cold":
					p, err = w.Spawn(poolCtx, r, trivial, wazero.NewModuleConfig(), addr, "node")
				case "restore":
					p, err = w.SpawnFrom(cowCtx, r, trivial, snap, wazero.NewModuleConfig(), addr, "node")
				case "reset":
					if live[i] == nil {
						p, err = w.SpawnFrom(cowCtx, r, trivial, snap, wazero.NewModuleConfig(), addr, "node")
					} else {
						p, err = w.SpawnReset(cowCtx, trivial, snap, live[i], addr, "node")
					}
				}
				check(err)
				procs = append(procs, p)
			}
			check(w.Run())
			d := time.Since(t0)
			for i, p := range procs {
				if p.Code != 0 || strings.Count(p.Out.String(), "tick") != 3 {
					fail("trivial node %d: exit %d, printed %q", i, p.Code, p.Out.String())
				}
				if how == "reset" {
					live[i] = p
				} else {
					p.M.Close(ctx)
				}
			}
			return d
		}
	}
	wvs := []struct {
		name string
		run  func() time.Duration
	}{
		{"cold boots (pooled memory)", world("cold")},
		{"restored from a snapshot (copy-on-write)", world("restore")},
		{"reset instances (copy-on-write)", world("reset")},
	}
	perSeed := make([][]float64, len(wvs))
	cpuSeed := make([][]float64, len(wvs))
	faults := make([][]float64, len(wvs))
	for round := 0; round < *rounds; round++ {
		for i, v := range wvs {
			v.run()
			var total time.Duration
			c0, f0 := cpuTime(), minorFaults()
			for k := 0; k < *n; k++ {
				total += v.run()
			}
			c, f := cpuTime()-c0, minorFaults()-f0
			perSeed[i] = append(perSeed[i], float64(total.Microseconds())/float64(*n))
			cpuSeed[i] = append(cpuSeed[i], float64(c.Microseconds())/float64(*n))
			faults[i] = append(faults[i], float64(f)/float64(*n))
		}
	}
	fmt.Printf("\nthe trivial 3-node world in the toy World, one host goroutine: µs per seed (median and range of %d rounds)\n", *rounds)
	fmt.Printf("  %-44s %18s %18s %14s %14s\n", "", "wall", "CPU", "seeds/CPU-s", "page faults")
	for i, v := range wvs {
		s := slices.Clone(cpuSeed[i])
		slices.Sort(s)
		fmt.Printf("  %-44s %18s %18s %14.0f %14s\n", v.name, spread(perSeed[i]), spread(cpuSeed[i]), 1e6/s[len(s)/2], spread(faults[i]))
	}
}

// cpuTime is the CPU time the process has used, user and system, on all
// its threads (the host's garbage collector included).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minorFaults counts the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return ru.Minflt
}

func spread1(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.1f (%.1f-%.1f)", s[len(s)/2], s[0], s[len(s)-1])
}
