// Package engine is seedfall's deterministic simulator facade: it builds a
// world's programs, instantiates them in wazero under seedfall's own WASI
// layer, and runs a seed to a verdict, a schedule and a trace. It knows
// nothing of Starlark, the REPL or the command line.
package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"

	"github.com/seedfall/seedfall/engine/build"
	"github.com/seedfall/seedfall/engine/build/netoverlay"
	"github.com/seedfall/seedfall/engine/wasi"
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
	"faults.crash_per_sec": true, "faults.restart_after": true, "faults.strict_dirs": true,
}

// Options configure an Engine.
type Options struct {
	CacheDir string // default: $SEEDFALL_CACHE, else the user cache dir + /seedfall
	// Progress, if set, hears about slow steps (building, compiling).
	Progress func(msg string)
	// GoEnv is extra environment for the go command (tests use a fresh GOCACHE).
	GoEnv []string
}

// Engine holds what runs share: the wazero runtime with its on-disk
// compilation cache, the builder, and compiled modules by content hash. It is
// safe for concurrent use; each Run uses one goroutine group.
type Engine struct {
	opts    Options
	rt      wazero.Runtime
	builder *build.Builder

	mu       sync.Mutex
	compiled map[string]wazero.CompiledModule
}

var instanceIDs atomic.Uint64

// New creates an engine.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.CacheDir == "" {
		opts.CacheDir = os.Getenv("SEEDFALL_CACHE")
	}
	if opts.CacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no cache directory: set SEEDFALL_CACHE (%v)", err)
		}
		opts.CacheDir = filepath.Join(dir, "seedfall")
	}
	cc, err := wazero.NewCompilationCacheWithDir(filepath.Join(opts.CacheDir, "wazero"))
	if err != nil {
		return nil, fmt.Errorf("compilation cache: %w", err)
	}
	cfg := wazero.NewRuntimeConfigCompiler().WithCompilationCache(cc).WithCloseOnContextDone(true)
	rt := wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := wasi.Instantiate(ctx, rt); err != nil {
		rt.Close(ctx)
		return nil, err
	}
	return &Engine{
		opts:     opts,
		rt:       rt,
		builder:  &build.Builder{CacheDir: opts.CacheDir, Env: opts.GoEnv},
		compiled: map[string]wazero.CompiledModule{},
	}, nil
}

// Close releases the runtime and every compiled module.
func (e *Engine) Close(ctx context.Context) error { return e.rt.Close(ctx) }

// Program is one built and compiled program of a prepared world.
type Program struct {
	*world.Program
	Hash   string // sha256 of the merged wasm
	Cached bool   // the build came from the cache
	mod    wazero.CompiledModule
}

// Prepared is a world whose programs are built and compiled, ready to run
// any number of seeds.
type Prepared struct {
	World    *world.World
	Programs []*Program // nodes, workloads, finally: world order
	e        *Engine
}

// Prepare checks that the engine supports every field the world sets, then
// builds and compiles each program once.
func (e *Engine) Prepare(ctx context.Context, w *world.World) (*Prepared, error) {
	if err := w.Unsupported(Implemented); err != nil {
		return nil, err
	}
	var overlay map[string][]byte
	if w.NetOverlay {
		goroot, err := e.builder.GOROOT()
		if err != nil {
			return nil, err
		}
		if overlay, err = netoverlay.Files(goroot); err != nil {
			return nil, err
		}
	}
	p := &Prepared{World: w, e: e}
	for _, wp := range w.Programs() {
		var art *build.Artifact
		var err error
		if wp.Wasm != "" {
			art, err = e.builder.Load(ctx, wp.Name, wp.Wasm)
		} else {
			if e.opts.Progress != nil {
				e.opts.Progress(fmt.Sprintf("building %s (%s)", wp.Name, rel(w.Dir, wp.Pkg)))
			}
			art, err = e.builder.Build(ctx, build.Request{Node: wp.Name, Pkg: wp.Pkg, Overlay: overlay})
		}
		if err != nil {
			return nil, err
		}
		mod, err := e.compile(ctx, wp.Name, art)
		if err != nil {
			return nil, err
		}
		p.Programs = append(p.Programs, &Program{Program: wp, Hash: art.Hash, Cached: art.Cached, mod: mod})
	}
	return p, nil
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return "./" + filepath.ToSlash(r)
	}
	return path
}

func (e *Engine) compile(ctx context.Context, node string, art *build.Artifact) (wazero.CompiledModule, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if m, ok := e.compiled[art.Hash]; ok {
		return m, nil
	}
	bin, err := os.ReadFile(art.Path)
	if err != nil {
		return nil, err
	}
	m, err := e.rt.CompileModule(ctx, bin)
	if err != nil {
		return nil, fmt.Errorf("node %q: compiling %s: %w", node, art.Path, err)
	}
	e.compiled[art.Hash] = m
	return m, nil
}
