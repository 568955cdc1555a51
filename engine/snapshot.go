package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Post-init snapshots. Every program built from source carries the pause
// overlay's snapshot point, where its runtime asks the host, after every
// package's init and just before main.main, whether to pause. For each
// program, arguments and environment the engine boots the program once, in
// a snapshot boot: a process of its own, on an empty disk, at virtual time
// 0, with a fixed random stream (wasi.BootLog says what init may do there).
// The guest pauses at the snapshot point; its memory and globals are the
// snapshot. Every incarnation of the program, in every run, then starts
// from a copy of the snapshot (in an instance an earlier incarnation left,
// where one is free) instead of running the Go runtime's and the packages'
// init again: it re-draws the runtime's random state from its own stream
// (so map order, select and math/rand vary by seed as before), replays the
// lines init printed, and its monotonic clock continues the snapshot's
// (wasi.Process.MonoStart). A program whose init does what a copy cannot
// stand for (reads the wall clock or a file, draws more randomness than
// the runtime's own, sleeps, ...) boots cold, as before, and the engine
// hints so once (Options.Hint).
//
// Because the snapshot boot is made the same way wherever and whenever it
// runs, a run's trace does not depend on which process or machine made
// the snapshot: same world and seed, same digest.

// pausable is what compile keeps of a module with the snapshot point: it
// is compiled without its data segments, which the host writes for a cold
// boot and which a restore does not need (the snapshot has the whole
// memory).
type pausable struct {
	segs    []guest.Segment
	globals []string          // the exported mutable globals, in guest.MutableGlobals order
	initial map[string]uint64 // the call and loop counters' values at instantiation
	prog    *pauseoverlay.Program

	mu     sync.Mutex
	images map[string]*bootImage // by arguments and environment
}

// bootImage is one program's state at the snapshot point, for one list of
// arguments and environment, or why it has none.
type bootImage struct {
	once sync.Once
	cold string // why the program boots cold; "" when snap is set
	snap *pauseoverlay.Snapshot
	log  *wasi.BootLog

	// free are instances that ran an incarnation restored from snap and
	// ended (release): the next start puts one back to snap in place,
	// which costs no new instance.
	mu   sync.Mutex
	free []reusable

	pagesOnce sync.Once
	pages     *pagedGuest // snap's memory as a checkpoint's pages (base)
}

// base is the snapshot's memory as the pages of a checkpoint, which a
// guest's first checkpoint shares where it did not change: whatever the
// guest has not written since its start (checkpoint.go pages).
func (img *bootImage) base() *pagedGuest {
	img.pagesOnce.Do(func() {
		mem := img.snap.Memory
		g := &pagedGuest{size: len(mem), pages: make([][]byte, (len(mem)+pageSize-1)/pageSize)}
		for i := range g.pages {
			g.pages[i] = mem[i*pageSize : min(len(mem), (i+1)*pageSize) : min(len(mem), (i+1)*pageSize)]
		}
		img.pages = g
	})
	return img.pages
}

// reusable is an ended instance and its memory.
type reusable struct {
	m   api.Module
	mem *guardedMemory
	// used is how far its last guest used the memory (the size it grew
	// to): past it the memory is still zero.
	used uint64
}

// Pooled instances: at most maxFree an image, each no more than maxSlack
// larger than the snapshot (the rest are closed, and their memory freed).
const (
	maxFree  = 4
	maxSlack = 16 << 20
)

// release ends the instance m of an incarnation that started from img (nil
// for a module without the snapshot point): it is kept for the next start
// if it may be reused, else closed.
func (img *bootImage) release(ctx context.Context, m api.Module, wp *wasi.Process, g *memGuard) {
	if img == nil || img.snap == nil || g.mem == nil || !wp.Reusable(m) ||
		uint64(m.Memory().Size()) > uint64(len(img.snap.Memory))+maxSlack {
		m.Close(ctx)
		return
	}
	img.put(ctx, reusable{m, g.mem, g.size})
}

// restoreInto puts a copy of a guest into an instance img's earlier
// incarnations left (release), as a fork's switch makes it (checkpoint.go),
// when one is free and its memory holds the copy; ok is false when none
// is.
func (img *bootImage) restoreInto(ctx context.Context, pa *pausable, g *memGuard, c *pagedGuest) (m api.Module, ok bool, err error) {
	if img == nil {
		return nil, false, nil
	}
	r, ok := img.take()
	if !ok {
		return nil, false, nil
	}
	// The memory_limit counts what the guest grew, as in the run the copy
	// is of, not the size of the instance.
	mem := r.m.Memory()
	size := uint64(mem.Size())
	r.mem.adopt(g, c.grown, max(size, uint64(c.size)))
	if size < uint64(c.size) {
		// An instance whose last guest grew less than the copy's: grow it
		// (memPool reserved the address space), counted as the copy's.
		if _, ok := mem.Grow(uint32((uint64(c.size) - size) / 65536)); !ok {
			r.m.Close(ctx)
			return nil, false, nil
		}
	}
	if err := pa.prog.RestoreInto(r.m, uint32(c.size), uint32(r.used), c.fill, c.globals); err != nil {
		r.m.Close(ctx)
		return nil, true, err
	}
	return r.m, true, nil
}

// put keeps an instance for reuse, unless the pool is full: then it
// closes it.
func (img *bootImage) put(ctx context.Context, r reusable) {
	img.mu.Lock()
	if len(img.free) < maxFree {
		img.free = append(img.free, r)
		img.mu.Unlock()
		return
	}
	img.mu.Unlock()
	r.m.Close(ctx)
}

// take returns an instance to reuse, if there is one.
func (img *bootImage) take() (reusable, bool) {
	img.mu.Lock()
	defer img.mu.Unlock()
	n := len(img.free)
	if n == 0 {
		return reusable{}, false
	}
	r := img.free[n-1]
	img.free = img.free[:n-1]
	return r, true
}

// newPausable prepares bin for snapshots, or returns nil (and bin) if it
// has no snapshot point or its layout is not one a host can restore.
func newPausable(bin []byte) (*pausable, []byte) {
	if !guest.SnapshotPoint(bin) || !guest.Pausable(bin) {
		return nil, bin
	}
	segs, err := guest.DataSegments(bin)
	if err != nil {
		return nil, bin
	}
	globals, err := guest.MutableGlobals(bin)
	if err != nil {
		return nil, bin
	}
	stripped, err := guest.StripData(bin)
	if err != nil {
		return nil, bin
	}
	// The segments point into bin: keep only them, not the whole module.
	for i := range segs {
		segs[i].Data = bytes.Clone(segs[i].Data)
	}
	return &pausable{segs: segs, globals: globals, images: map[string]*bootImage{}}, stripped
}

// counters are the globals that the engine loads anew for each incarnation
// (the loop budget and the count of calls): a copy starts them where a
// cold boot would.
var counters = []string{guest.BudgetGlobal, guest.CallsGlobal}

// setCompiled records the compiled module (without data segments).
func (pa *pausable) setCompiled(m wazero.CompiledModule) {
	pa.prog = &pauseoverlay.Program{Bare: m, Globals: pa.globals}
}

// instantiate starts an incarnation of the program for wp: from its
// snapshot if it has one (and snapshots is set), else by a cold boot. Its
// memory comes from pool, held to the incarnation's memory_limit by g. It
// returns the instance, if one was made, the image it was restored from
// (nil for a cold boot; pass the instance back to its release when the
// guest has ended), and the error that ended the guest, as wazero's
// InstantiateModule with _start does; cold says why a program that could
// have been restored booted cold ("" when it was restored, or snapshots is
// not set).
//
// A restore reuses an instance that an earlier incarnation from the same
// snapshot left (release), putting its memory and globals back to the
// snapshot in place: it skips instantiating the module (most of that is
// wazero filling the function table). What the guest sees is the same: Go's
// runtime reads the memory's size only during init, and takes the pages it
// grows as zeroed (what the last guest grew into past the snapshot is
// cleared; the rest is still zero), so the larger memory is invisible, and
// the memory_limit counts only what this incarnation grows
// (guardedMemory.adopt).
func (pa *pausable) instantiate(ctx context.Context, rt wazero.Runtime, wp *wasi.Process, cfg wazero.ModuleConfig,
	pool experimental.MemoryAllocator, g *memGuard, snapshots bool) (m api.Module, img *bootImage, cold string, err error) {
	ctx = experimental.WithMemoryAllocator(ctx, g.allocator(pool))
	if !snapshots {
		m, err = pa.coldBoot(ctx, rt, cfg)
		return m, nil, "", err
	}
	img, cold = pa.restorable(rt, wp, g)
	if img == nil {
		m, err = pa.coldBoot(ctx, rt, cfg)
		return m, nil, cold, err
	}
	size := uint64(len(img.snap.Memory))
	if r, ok := img.take(); ok {
		m = r.m
		r.mem.adopt(g, size, uint64(m.Memory().Size()))
		err = pa.prog.Reset(ctx, m, img.snap, uint32(r.used))
	} else {
		m, err = pa.prog.Restore(ctx, rt, img.snap, cfg.WithStartFunctions())
	}
	if err != nil {
		if m != nil {
			m.Close(ctx)
		}
		return nil, nil, "", err
	}
	for _, name := range counters {
		if gl, ok := m.ExportedGlobal(name).(api.MutableGlobal); ok {
			gl.Set(pa.initial[name])
		}
	}
	restoredHost(wp, img)
	f, err := pauseoverlay.ResumeFunc(m)
	if err != nil {
		return m, img, "", err
	}
	_, err = f.Call(ctx)
	return m, img, "", err
}

// restorable returns the image an incarnation starts from, or nil and why
// (if it could have) when it boots cold.
func (pa *pausable) restorable(rt wazero.Runtime, wp *wasi.Process, g *memGuard) (img *bootImage, cold string) {
	img = pa.image(rt, wp)
	if img.snap == nil {
		return nil, img.cold
	}
	if uint64(len(img.snap.Memory)) > g.limit {
		// Its init alone needs more than the limit: the cold boot runs
		// out of memory as it would have without snapshots.
		return nil, ""
	}
	return img, ""
}

// restoredHost is the host's side of a start from img: what init printed
// and set, and the monotonic clock it left.
func restoredHost(wp *wasi.Process, img *bootImage) {
	wp.Replay(img.log)
	wp.MonoStart = wp.Now()
	wp.Reuse = true
}

// playStart is the host's side of a start, as instantiate makes it, for
// an incarnation whose tape is played in its place (checkpoint.go): it returns
// the image a restore would have used, or nil for a cold boot.
func (pa *pausable) playStart(rt wazero.Runtime, wp *wasi.Process, g *memGuard, snapshots bool) *bootImage {
	if !snapshots {
		return nil
	}
	img, _ := pa.restorable(rt, wp, g)
	if img != nil {
		restoredHost(wp, img)
	}
	return img
}

// coldBoot instantiates the module, writes its data segments and runs
// _start.
func (pa *pausable) coldBoot(ctx context.Context, rt wazero.Runtime, cfg wazero.ModuleConfig) (api.Module, error) {
	m, err := rt.InstantiateModule(ctx, pa.prog.Bare, cfg.WithStartFunctions())
	if err != nil {
		return nil, err
	}
	mem := m.Memory()
	for _, s := range pa.segs {
		if !mem.Write(s.Offset, s.Data) {
			m.Close(ctx)
			return nil, fmt.Errorf("data segment at %#x of %d bytes is outside the memory", s.Offset, len(s.Data))
		}
	}
	_, err = m.ExportedFunction("_start").Call(ctx)
	return m, err
}

// image returns the snapshot for wp's arguments and environment, made by a
// snapshot boot on first use.
func (pa *pausable) image(rt wazero.Runtime, wp *wasi.Process) *bootImage {
	key := strings.Join(wp.Args, "\x00") + "\x01" + strings.Join(wp.Env, "\x00")
	img := entry(&pa.mu, pa.images, key)
	// Nothing of the run reaches the snapshot boot: not its cancellation
	// (the boot is bounded: wasi.BootLog), nor a guest profile.
	img.once.Do(func() { pa.boot(context.Background(), rt, wp, img) })
	return img
}

// boot makes img by a snapshot boot of the program with wp's arguments and
// environment.
func (pa *pausable) boot(ctx context.Context, rt wazero.Runtime, wp *wasi.Process, img *bootImage) {
	log := &wasi.BootLog{}
	bp := &wasi.Process{
		Name:   wp.Name,
		Args:   wp.Args,
		Env:    wp.Env,
		Now:    func() int64 { return 0 },
		Random: rng.New(0, "snapshot", -1),
		Disk:   disk.New(disk.Options{Now: func() int64 { return wasi.Epoch }}),
		Boot:   log,
		Output: func(stream int, line []byte) {
			log.Output = append(log.Output, wasi.BootLine{Stream: stream, Text: bytes.Clone(line)})
		},
		// The count of calls runs out at the first counted call: give it
		// more than any init makes, so the boot is not interrupted.
		Preempt: func(_ api.Module, calls api.MutableGlobal) { calls.Set(1 << 30) },
	}
	ctx = wasi.WithProcess(ctx, bp)
	m, err := rt.InstantiateModule(ctx, pa.prog.Bare, wazero.NewModuleConfig().WithName("").WithStartFunctions())
	if err != nil {
		img.cold = fmt.Sprintf("its snapshot boot could not start: %v", err)
		return
	}
	defer m.Close(ctx)
	pa.mu.Lock()
	if pa.initial == nil {
		pa.initial = map[string]uint64{}
		for _, name := range counters {
			if g := m.ExportedGlobal(name); g != nil {
				pa.initial[name] = g.Get()
			}
		}
	}
	pa.mu.Unlock()
	mem := m.Memory()
	for _, s := range pa.segs {
		if !mem.Write(s.Offset, s.Data) {
			img.cold = "its data segments do not fit its memory"
			return
		}
	}
	_, err = m.ExportedFunction("_start").Call(ctx)
	switch {
	case log.Taint != "":
		img.cold = log.Taint
		return
	case err != nil:
		var exit interface{ ExitCode() uint32 }
		if errors.As(err, &exit) {
			img.cold = fmt.Sprintf("it exits during init (status %d)", exit.ExitCode())
		} else {
			img.cold = fmt.Sprintf("its init fails: %v", err)
		}
		return
	case !log.Paused:
		img.cold = "it did not reach the snapshot point"
		return
	}
	snap, err := pa.prog.Take(m)
	if err != nil {
		img.cold = err.Error()
		return
	}
	img.snap, img.log = snap, log
}

// coldOnce hints, once per build, that a program boots cold and why.
func (e *Engine) coldOnce(prog *Program, why string) {
	if e.opts.Hint == nil {
		return
	}
	e.mu.Lock()
	said := e.cold[prog.Hash]
	if e.cold == nil {
		e.cold = map[string]bool{}
	}
	e.cold[prog.Hash] = true
	e.mu.Unlock()
	if !said {
		e.opts.Hint(fmt.Sprintf("seedfall: %s starts without a snapshot, running its init at every start: %s", prog.Name, why))
	}
}
