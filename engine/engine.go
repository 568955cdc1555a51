// Package engine is seedfall's deterministic simulator facade: it builds a
// world's programs, instantiates them in wazero under seedfall's own WASI
// layer, and runs a seed to a verdict, a schedule and a trace. It knows
// nothing of Starlark, the REPL or the command line.
package engine

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
)

// Implemented is every world field this build of the engine honours. A world
// that sets any other field to a non-default value is refused, so nothing is
// silently ignored.
var Implemented = map[string]bool{
	"nodes[].name": true, "nodes[].pkg": true, "nodes[].wasm": true, "nodes[].args": true,
	"nodes[].env": true, "nodes[].faults": true,
	"workload.name": true, "workload.pkg": true, "workload.wasm": true, "workload.args": true, "workload.env": true,
	"workloads[].name": true, "workloads[].pkg": true, "workloads[].wasm": true, "workloads[].args": true, "workloads[].env": true,
	"finally.name": true, "finally.pkg": true, "finally.wasm": true, "finally.args": true, "finally.env": true,
	"duration": true, "latency": true, "links": true, "supervise": true, "net_overlay": true, "watchdog": true,
	"compat_overlay": true, "faults.mmap_early_writeback": true,
	"faults.crash_per_sec": true, "faults.restart_after": true, "faults.strict_dirs": true,
	"extends": true, "profiles": true, "faults.preset": true,
	// Faults on the workload: a crashed workload restarts like a node.
	"faults.include_workload": true, "workload.faults": true, "workloads[].faults": true,
	"faults.swarm": true, "liveness.within": true,
	"nodes[].upgrade_to": true, "workload.upgrade_to": true, "workloads[].upgrade_to": true,
	"memory_limit": true, "nodes[].memory_limit": true, "workload.memory_limit": true,
	"workloads[].memory_limit": true, "finally.memory_limit": true,
}

// Epoch is the wall-clock time, in ns since 1970, at virtual time 0
// (2025-01-01T00:00:00Z): every program's wall clock starts there.
const Epoch = wasi.Epoch

// Options configure an Engine.
type Options struct {
	CacheDir string // default: $SEEDFALL_CACHE, else the user cache dir + /seedfall
	// Progress, if set, hears about slow steps (building, compiling).
	Progress func(msg string)
	// Note hears about damaged cache entries, which are made again
	// ("seedfall: the cached build of ./server was corrupt (sha256
	// mismatch); rebuilding"). By default notes go to the process's stderr.
	Note func(msg string)
	// GoEnv is extra environment for the go command (tests use a fresh GOCACHE).
	GoEnv []string
	// ColdBoot is RunOptions.ColdBoot for every run; SEEDFALL_COLD_BOOT=1
	// sets it.
	ColdBoot bool
	// NoPause is RunOptions.NoPause for every run; SEEDFALL_NO_PAUSE=1
	// sets it.
	NoPause bool
	// Hint, if set, hears advice about speed that changes no result: a
	// program that starts without a snapshot, and why (snapshot.go). By
	// default nobody hears it.
	Hint func(msg string)
}

// Engine holds what runs share: the builder, and the compiled modules by
// content hash, each in a wazero runtime of its own with its own on-disk
// compilation cache (see compiled.go). It is safe for concurrent use; each
// Run uses one goroutine group.
type Engine struct {
	opts    Options
	builder *guest.Builder

	mu    sync.Mutex
	mods  map[modKey]*compiled
	pools map[string]experimental.MemoryAllocator // by the wasm's hash
	cold  map[string]bool                         // builds said to boot cold (coldOnce), by hash
	kept  []*Prepared                             // the latest prepared worlds, oldest first (Prepare)
}

// keptPrepared is how many prepared worlds an engine keeps, so that
// preparing one of them again gives the same Prepared.
const keptPrepared = 4

// modKey names a compiled module: the wasm's hash, and whether it runs
// with wazero's own termination checks. Guests that carry build's loop
// budget, which lets the watchdog stop them, run without; the rare module
// that could not be instrumented runs with them: they make guests about
// twice as slow, and stopping a guest needs a free P.
type modKey struct {
	hash          string
	interruptible bool
	profiled      bool // compiled with the guest profile's listeners (guestprof.go)
}

// New creates an engine.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.CacheDir == "" {
		dir, err := DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		opts.CacheDir = dir
	}
	if os.Getenv("SEEDFALL_COLD_BOOT") == "1" {
		opts.ColdBoot = true
	}
	if os.Getenv("SEEDFALL_NO_PAUSE") == "1" {
		opts.NoPause = true
	}
	e := &Engine{opts: opts, mods: map[modKey]*compiled{}}
	e.builder = &guest.Builder{CacheDir: opts.CacheDir, Env: opts.GoEnv, Note: e.note}
	sweepEngineCache(opts.CacheDir)
	wazeroVersion.Do(func() {
		// wazero keeps its own version in a global it fills, unguarded,
		// the first time a runtime or compilation cache asks: ask once
		// here, before Prepare compiles programs side by side (go test
		// -race saw two first compilations race on it).
		wazero.NewRuntimeWithConfig(context.Background(), wazero.NewRuntimeConfigCompiler()).Close(context.Background())
	})
	return e, nil
}

var wazeroVersion sync.Once

// DefaultCacheDir is the cache an Engine uses when Options.CacheDir is
// empty: $SEEDFALL_CACHE, else seedfall in the user cache directory.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("SEEDFALL_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory: set SEEDFALL_CACHE (%v)", err)
	}
	return filepath.Join(dir, "seedfall"), nil
}

func (e *Engine) note(msg string) {
	if e.opts.Note != nil {
		e.opts.Note(msg)
		return
	}
	fmt.Fprintln(os.Stderr, msg)
}

// Close releases the runtimes and every compiled module.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	var first error
	for _, c := range e.mods {
		if err := c.close(ctx); err != nil && first == nil {
			first = err
		}
	}
	clear(e.mods)
	return first
}

// module returns the runtime to instantiate prog in and prog compiled there.
// Different programs compile at the same time; the same program once.
func (e *Engine) module(ctx context.Context, prog *Program) (wazero.Runtime, wazero.CompiledModule, error) {
	return e.moduleAs(ctx, prog, false)
}

// moduleAs is module, or with profiled its variant that tells a guest
// profile of every call (guestprof.go).
func (e *Engine) moduleAs(ctx context.Context, prog *Program, profiled bool) (wazero.Runtime, wazero.CompiledModule, error) {
	c := e.compiledAs(ctx, prog, profiled)
	return c.rt, c.m, c.err
}

// compiledAs returns prog compiled (or the error compiling it), compiling
// it on first use.
func (e *Engine) compiledAs(ctx context.Context, prog *Program, profiled bool) *compiled {
	key := modKey{prog.Hash, !prog.budget, profiled}
	c := entry(&e.mu, e.mods, key)
	c.once.Do(func() {
		if c.err = e.compile(ctx, c, key, prog); c.err != nil {
			c.err = fmt.Errorf("node %q: compiling %s: %w", prog.Name, prog.path, c.err)
		}
	})
	if c.err != nil && ctx.Err() != nil {
		// Stopped, not failed (Ctrl-C, an MCP request cancelled while it
		// waited for another process's compilation): the next caller
		// compiles it again instead of getting this error for good.
		e.mu.Lock()
		if e.mods[key] == c {
			delete(e.mods, key)
			c.close(context.Background())
		}
		e.mu.Unlock()
	}
	return c
}

// memPool returns the linear-memory pool of a module, made on first use.
func (e *Engine) memPool(hash string, bin []byte) experimental.MemoryAllocator {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pools == nil {
		e.pools = map[string]experimental.MemoryAllocator{}
	}
	if p, ok := e.pools[hash]; ok {
		return p
	}
	p := newMemPool(guest.DataRanges(bin))
	e.pools[hash] = p
	return p
}

// compiled is one module compiled in a runtime of its own, or the error
// compiling it.
type compiled struct {
	once sync.Once
	rt   wazero.Runtime
	cc   wazero.CompilationCache
	m    wazero.CompiledModule
	pa   *pausable // with the snapshot point: m has no data segments (snapshot.go)
	err  error
}

func (c *compiled) close(ctx context.Context) error {
	var err error
	if c.rt != nil {
		err = c.rt.Close(ctx)
	}
	if c.cc != nil {
		if cerr := c.cc.Close(ctx); err == nil {
			err = cerr
		}
	}
	return err
}

// Program is one built and compiled program of a prepared world.
type Program struct {
	*world.Program
	Hash   string // sha256 of the merged wasm
	Cached bool   // the build came from the cache
	path   string // the merged wasm, or its call-counting variant
	built  string // the merged wasm as built (or loaded), before counting
	bin    []byte // its bytes, checked against Hash, until it is compiled
	budget bool   // it carries the loop budget (guest.Instrument)
	// counted: it counts calls (guest.CountCalls); preempts: its runtime's
	// layout is known, so its goroutines can be preempted.
	counted, preempts bool
	mem               experimental.MemoryAllocator
	// Upgrade is the program built from upgrade_to, which the node runs
	// from its first restart on; nil without upgrade_to.
	Upgrade *Program
}

// Prepared is a world whose programs are built and compiled, ready to run
// any number of seeds.
type Prepared struct {
	World    *world.World
	Programs []*Program // nodes, workloads, finally: world order
	e        *Engine
	key      string         // the world file, its resolved content and its builds (Prepare)
	pct      pctCalibration // pct's calibration run, made once (run.go: pctCalls)
}

// pctCalibration is a Prepared's calibration run: each node's counted
// calls, made once and kept.
type pctCalibration struct {
	mu    sync.Mutex
	done  bool
	calls map[string]uint64 // by program name; a node that never started is missing
	wall  time.Duration     // the real time it took (never in a trace)
}

// Prepare checks that the engine supports every field the world sets, then
// builds and compiles each program once. A world the engine prepared
// lately, from the same file with the same content and the same builds,
// gives the Prepared it gave then: a run of either is the same run, and
// the recordings of its runs (Recordings) serve each later call, as
// seedfall mcp's calls open their world again each time.
func (e *Engine) Prepare(ctx context.Context, w *world.World) (*Prepared, error) {
	if err := w.Unsupported(Implemented); err != nil {
		return nil, err
	}
	overlay, err := e.overlay(w)
	if err != nil {
		return nil, err
	}
	p := &Prepared{World: w, e: e}
	var all []*Program // with upgrades
	for _, wp := range w.Programs() {
		prog, err := e.buildProgram(ctx, w, wp, wp.Pkg, wp.Wasm, ".pkg", overlay)
		if err != nil {
			return nil, err
		}
		p.Programs = append(p.Programs, prog)
		all = append(all, prog)
		if wp.UpgradeTo != "" {
			if prog.Upgrade, err = e.buildProgram(ctx, w, wp, wp.UpgradeTo, "", ".upgrade_to", overlay); err != nil {
				return nil, err
			}
			all = append(all, prog.Upgrade)
		}
	}
	if err := e.countPrograms(w, all); err != nil {
		return nil, err
	}
	// Compiling (or loading from the compilation cache) is the slow part of
	// a cached start: do the programs side by side.
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, prog := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = e.module(ctx, prog)
		}()
	}
	wg.Wait()
	for _, prog := range all {
		prog.bin = nil // compiled: the runs need the module, not the bytes
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for _, prog := range all {
		if err := e.checkMemory(ctx, w, prog); err != nil {
			return nil, err
		}
	}
	return e.keep(p), nil
}

// keep returns the Prepared kept for what p is, keeping p if there is none.
func (e *Engine) keep(p *Prepared) *Prepared {
	resolved, err := p.World.Resolved(true)
	if err != nil {
		return p
	}
	file, err := filepath.Abs(p.World.File)
	if err != nil {
		return p
	}
	p.key = file + "\x00" + ConfigName(p.World) + "\x00" + string(resolved)
	for _, prog := range p.Programs {
		p.key += "\x00" + prog.Hash
		if prog.Upgrade != nil {
			p.key += " " + prog.Upgrade.Hash
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, k := range e.kept {
		if k.key == p.key {
			return k
		}
	}
	e.kept = append(e.kept, p)
	if len(e.kept) > keptPrepared {
		e.kept = slices.Delete(e.kept, 0, 1)
	}
	return p
}

// overlay is what every program built from source gets: the fsync overlay
// (an fsync that takes time parks only its goroutine), the pause overlay's
// snapshot point (every boot starts from a snapshot taken there,
// snapshot.go), and with net_overlay the network's.
func (e *Engine) overlay(w *world.World) (map[string][]byte, error) {
	if !slices.ContainsFunc(w.Programs(), func(p *world.Program) bool { return p.Pkg != "" || p.UpgradeTo != "" }) {
		return nil, nil // prebuilt modules only: no Go installation needed
	}
	goroot, err := e.builder.GOROOT()
	if err != nil {
		return nil, err
	}
	overlay, err := fsyncoverlay.Files(goroot)
	if err != nil {
		return nil, err
	}
	pause, err := pauseoverlay.Files(goroot, pauseoverlay.Options{Cover: w.Coverage})
	if err != nil {
		return nil, err
	}
	maps.Copy(overlay, pause)
	if w.NetOverlay {
		net, err := netoverlay.FilesWith(goroot, netoverlay.Options{UDP: true})
		if err != nil {
			return nil, err
		}
		maps.Copy(overlay, net)
	}
	return overlay, nil
}

// checkMemory refuses a program whose initial memory is more than its
// memory_limit: it could not even start.
func (e *Engine) checkMemory(ctx context.Context, w *world.World, prog *Program) error {
	_, m, err := e.module(ctx, prog)
	if err != nil {
		return err
	}
	limit := w.MemoryLimitOf(prog.Program)
	defs := slices.Clone(m.ImportedMemories())
	for _, d := range m.ExportedMemories() {
		defs = append(defs, d)
	}
	for _, d := range defs {
		need := int64(d.Min()) << 16 // 64 KiB pages
		if need <= limit {
			continue
		}
		field := w.MemoryLimitField(prog.Program)
		if w.Line(field) == 0 {
			field = prog.Path // the default: point at the program
		}
		return w.Errorf(field, "%s needs %s of memory to start, more than its memory_limit of %s; raise it to at least %s",
			prog.Name, memText(uint64(need)), memText(uint64(limit)), memText(uint64(need+(1<<20)-1)&^(1<<20-1)))
	}
	return nil
}

// buildProgram builds (or loads) one program of wp: its pkg or wasm, or
// the package of its upgrade_to. field names the key an error points at.
func (e *Engine) buildProgram(ctx context.Context, w *world.World, wp *world.Program, pkg, wasm, field string, overlay map[string][]byte) (*Program, error) {
	var art *guest.Artifact
	var err error
	if wasm != "" {
		field = ".wasm"
		art, err = e.builder.Load(ctx, wp.Name, wasm)
	} else {
		if e.opts.Progress != nil {
			e.opts.Progress(fmt.Sprintf("building %s (%s)", wp.Name, rel(w.Dir, pkg)))
		}
		art, err = e.builder.Build(ctx, guest.Request{Node: wp.Name, Pkg: pkg, Overlay: overlay, Compat: w.CompatOverlay,
			Cover: w.Coverage, CoverPkgs: w.CoveragePackages})
	}
	if err != nil {
		// Point at the line of the world file that names the program.
		return nil, w.Errorf(wp.Path+field, "%v%s", err, didYouMean(w.Dir, pkg+wasm))
	}
	bin := art.Wasm // checked against art.Hash by the builder
	return &Program{Program: wp, Hash: art.Hash, Cached: art.Cached, path: art.Path, built: art.Path, bin: bin,
		budget: guest.Instrumented(bin), mem: e.memPool(art.Hash, bin)}, nil
}

// didYouMean suggests a sibling of a program path that does not exist.
func didYouMean(dir, path string) string {
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		return ""
	}
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return ""
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if s := world.Suggest(filepath.Base(path), names); s != "" {
		return fmt.Sprintf(" (did you mean %s?)", rel(dir, filepath.Join(filepath.Dir(path), s)))
	}
	return ""
}

func rel(dir, path string) string {
	r, err := filepath.Rel(dir, path)
	switch {
	case err != nil:
		return path
	case strings.HasPrefix(r, ".."):
		return filepath.ToSlash(r)
	}
	return "./" + filepath.ToSlash(r)
}

// entry returns m[key] under mu, adding a zero value first if it is
// missing: the made-once entries of the engine's caches.
func entry[K comparable, V any](mu *sync.Mutex, m map[K]*V, key K) *V {
	mu.Lock()
	defer mu.Unlock()
	v, ok := m[key]
	if !ok {
		v = new(V)
		m[key] = v
	}
	return v
}
