package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

func TestBuildCache(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	b := &Builder{CacheDir: cache}
	mod := newModule(t, map[string]string{"main.go": helloMain})
	req := Request{Node: "n1", Pkg: mod}

	first, err := b.Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached {
		t.Error("first build of an empty cache says Cached")
	}
	if dir := filepath.Join(cache, "wasm"); filepath.Dir(first.Path) != dir {
		t.Errorf("artifact at %s, want it in %s", first.Path, dir)
	}
	bin, err := os.ReadFile(first.Path)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(bin); hex.EncodeToString(sum[:]) != first.Hash {
		t.Errorf("Hash %s is not the sha256 of the artifact", first.Hash)
	}
	if n := segmentCount(t, bin); n > 8 {
		t.Errorf("artifact has %d data segments; Build must merge them", n)
	}

	// A hit runs no go command at all: with go gone, it still succeeds.
	b.GoCmd = filepath.Join(t.TempDir(), "no-such-go")
	second, err := b.Build(ctx, req)
	if err != nil {
		t.Fatalf("cached build ran the go command: %v", err)
	}
	if !second.Cached || second.Hash != first.Hash || second.Key != first.Key || second.Path != first.Path {
		t.Errorf("second build = %+v, want the cached %+v", second, first)
	}

	if !bytes.Equal(second.Wasm, bin) {
		t.Error("a hit's Wasm is not the bytes of the artifact")
	}
	b.GoCmd = ""

	// Without the hash beside it, an entry cannot be checked: the next
	// process builds it again, with a note.
	if err := os.Remove(first.Path + ".sha256"); err != nil {
		t.Fatal(err)
	}
	var notes []string
	b = &Builder{CacheDir: cache, Note: func(msg string) { notes = append(notes, msg) }}
	if again, err := b.Build(ctx, req); err != nil || again.Cached || again.Hash != first.Hash {
		t.Errorf("build without sidecar = %+v, %v; want a fresh build with hash %s", again, err, first.Hash)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "(its sha256 is missing); rebuilding") {
		t.Errorf("notes %q, want one about the missing sha256", notes)
	}
	if _, err := os.Stat(first.Path + ".sha256"); err != nil {
		t.Errorf("sidecar not written again: %v", err)
	}
	b.Note = nil

	// Editing a source file makes a new key and a new module.
	writeFiles(t, mod, map[string]string{"main.go": strings.Replace(helloMain, "hello", "bye", 1)})
	third, err := b.Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if third.Cached || third.Key == first.Key || third.Hash == first.Hash {
		t.Errorf("after an edit: Cached=%v, key changed=%v, hash changed=%v; want a fresh build", third.Cached, third.Key != first.Key, third.Hash != first.Hash)
	}
	if _, err := os.Stat(first.Path); err != nil {
		t.Errorf("the older artifact is gone: %v", err)
	}
	if left, _ := os.ReadDir(filepath.Join(cache, "tmp")); len(left) != 0 {
		t.Errorf("build left temporary files: %v", left)
	}
}

// The cache key is a pure function of what go build reads.
func TestBuildKey(t *testing.T) {
	base := map[string]string{
		"go.mod":        "module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./dep\n",
		"go.sum":        "",
		"cmd/a/main.go": helloMain,
		"cmd/b/main.go": helloMain,
		"lib/lib.go":    "package lib\n",
		"dep/go.mod":    "module example.com/dep\n\ngo 1.21\n",
		"dep/dep.go":    "package dep\n",
	}
	b := &Builder{CacheDir: t.TempDir()}
	ctx := context.Background()
	key := func(t *testing.T, root, pkg string, overlay map[string][]byte) string {
		t.Helper()
		p, err := b.plan(ctx, Request{Node: "n", Pkg: filepath.Join(root, pkg), Overlay: overlay})
		if err != nil {
			t.Fatal(err)
		}
		return p.key
	}
	baseKey := key(t, newModule(t, base), "cmd/a", nil)

	tests := []struct {
		name    string
		files   map[string]string // written over a copy of base
		pkg     string
		overlay map[string][]byte
		same    bool
	}{
		{"nothing changed, other directory", nil, "cmd/a", nil, true},
		{"main edited", map[string]string{"cmd/a/main.go": helloMain + "\n"}, "cmd/a", nil, false},
		{"other package edited", map[string]string{"lib/lib.go": "package lib\n\nconst X = 1\n"}, "cmd/a", nil, false},
		{"file added", map[string]string{"cmd/a/extra.go": "package main\n"}, "cmd/a", nil, false},
		{"go.sum edited", map[string]string{"go.sum": "example.com/x v1.0.0 h1:abc=\n"}, "cmd/a", nil, false},
		{"local replacement edited", map[string]string{"dep/dep.go": "package dep\n\nconst Y = 2\n"}, "cmd/a", nil, false},
		{"other main package", nil, "cmd/b", nil, false},
		{"overlay", nil, "cmd/a", map[string][]byte{"src/net/x.go": []byte("package net\n")}, false},
		{"hidden file", map[string]string{".env": "x"}, "cmd/a", nil, true},
		{"git directory", map[string]string{".git/HEAD": "ref: refs/heads/main\n"}, "cmd/a", nil, true},
		{"seedfall directory", map[string]string{".seedfall/runs/1.json": "{}"}, "cmd/a", nil, true},
		{"testdata", map[string]string{"cmd/a/testdata/in.txt": "x"}, "cmd/a", nil, true},
		// SEEDFALL_CACHE inside the module: the cache holds Go files (the
		// overlays) and grows with every build.
		{"tagged cache", map[string]string{"cache/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n", "cache/overlay/1/src/syscall/a.go": "package syscall\n"}, "cmd/a", nil, true},
		{"nested module", map[string]string{"tools/go.mod": "module example.com/tools\n", "tools/t.go": "package tools\n"}, "cmd/a", nil, true},
		// What no package can read: the root holds no Go files here.
		{"world file at the root", map[string]string{"seedfall.json": "{}", "seedfall.fixed.json": "{}"}, "cmd/a", nil, true},
		{"folder without Go files", map[string]string{"docs/notes.md": "x", "docs/img/a.png": "x"}, "cmd/a", nil, true},
		// Tests at the root (as in examples/) embed nothing into a
		// program: what they write beside them rebuilds nothing.
		{"tests at the root", map[string]string{"x_test.go": "package app\n", "results/shard-1-of-3/results.jsonl": "{}\n"}, "cmd/a", nil, true},
		// What a package can embed: anything at or below its directory.
		{"file beside a package", map[string]string{"cmd/a/page.html": "x"}, "cmd/a", nil, false},
		{"file below a package", map[string]string{"lib/static/css/a.css": "x"}, "cmd/a", nil, false},
		{"vendor", map[string]string{"vendor/modules.txt": "# example.com/x v1.0.0\n"}, "cmd/a", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := newModule(t, base)
			writeFiles(t, root, tt.files)
			got := key(t, root, tt.pkg, tt.overlay)
			if (got == baseKey) != tt.same {
				t.Errorf("key changed = %v, want %v", got != baseKey, !tt.same)
			}
		})
	}

	// With Go files at the root, every file of the module may be embedded.
	t.Run("root package", func(t *testing.T) {
		files := map[string]string{"go.mod": "module example.com/app\n\ngo 1.21\n", "main.go": helloMain}
		root := newModule(t, files)
		k1 := key(t, root, ".", nil)
		writeFiles(t, root, map[string]string{"docs/notes.md": "x"})
		if key(t, root, ".", nil) == k1 {
			t.Error("a file below the root package does not change the key")
		}
	})

	t.Run("the cache is tagged", func(t *testing.T) {
		tag, err := os.ReadFile(filepath.Join(b.CacheDir, "CACHEDIR.TAG"))
		if err != nil || !strings.HasPrefix(string(tag), "Signature: 8a477f597d28d172789f06886806bc55") {
			t.Errorf("the cache has no CACHEDIR.TAG: %q, %v", tag, err)
		}
	})

	t.Run("overlay content", func(t *testing.T) {
		root := newModule(t, base)
		k1 := key(t, root, "cmd/a", map[string][]byte{"src/net/x.go": []byte("package net\n")})
		k2 := key(t, root, "cmd/a", map[string][]byte{"src/net/x.go": []byte("package net // v2\n")})
		if k1 == k2 {
			t.Error("overlay content does not change the key")
		}
	})
}

func TestBuildErrors(t *testing.T) {
	noMod := t.TempDir() // t.TempDir is not inside any module
	writeFiles(t, noMod, map[string]string{"main.go": helloMain})
	tests := []struct {
		name    string
		pkg     func(t *testing.T) string
		overlay map[string][]byte
		want    []string
	}{
		{"compile error", func(t *testing.T) string {
			return newModule(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tfoo()\n}\n"})
		}, nil, []string{`build node "server" (`, "): ./main.go:4:2: undefined: foo"}},
		{"missing directory", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "server")
		}, nil, []string{`build node "server"`, "does not exist", `check the node's "pkg" path`}},
		{"a file, not a directory", func(t *testing.T) string {
			return filepath.Join(newModule(t, map[string]string{"main.go": helloMain}), "main.go")
		}, nil, []string{"is not a directory"}},
		{"no go.mod", func(t *testing.T) string { return noMod }, nil, []string{"no go.mod in " + noMod, `go mod init`}},
		{"not a main package", func(t *testing.T) string {
			return newModule(t, map[string]string{"lib.go": "package lib\n\nfunc F() {}\n"})
		}, nil, []string{"not a main package"}},
		{"overlay outside GOROOT", func(t *testing.T) string {
			return newModule(t, map[string]string{"main.go": helloMain})
		}, map[string][]byte{"../etc/passwd": nil}, []string{`overlay path "../etc/passwd"`}},
	}
	b := &Builder{CacheDir: t.TempDir()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Build(context.Background(), Request{Node: "server", Pkg: tt.pkg(t), Overlay: tt.overlay})
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("Build error = %v (%T), want *Error", err, err)
			}
			if be.Node != "server" {
				t.Errorf("Error.Node = %q, want %q", be.Node, "server")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

const simMain = `package main

import (
	"fmt"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	sim.SetupComplete()
	fmt.Printf("enabled=%v node=%s\n", sim.Enabled(), sim.Node())
}
`

// A program imports sim and builds without a replace directive of its own;
// inside seedfall, SetupComplete reaches the host.
func TestBuildSim(t *testing.T) {
	ownSim := map[string]string{
		"go.mod":       "module example.com/app\n\ngo 1.21\n\nrequire github.com/seedfall/seedfall/sim v0.0.0\n\nreplace github.com/seedfall/seedfall/sim => ./mysim\n",
		"main.go":      simMain,
		"mysim/go.mod": "module github.com/seedfall/seedfall/sim\n\ngo 1.21\n",
		"mysim/sim.go": "package sim\n\nfunc Enabled() bool { return false }\nfunc Node() string { return \"own\" }\nfunc SetupComplete() {}\n",
	}
	tests := []struct {
		name      string
		files     map[string]string
		wantOut   string
		wantCalls int
	}{
		{"no require", map[string]string{"main.go": simMain}, "enabled=true node=n1\n", 1},
		{"required at a published version", map[string]string{
			"go.mod":  "module example.com/app\n\ngo 1.21\n\nrequire github.com/seedfall/seedfall/sim v0.3.0\n",
			"main.go": simMain,
		}, "enabled=true node=n1\n", 1},
		{"module replaces sim itself", ownSim, "enabled=false node=own\n", 0},
		{"the user's go.work is ignored", map[string]string{
			"go.work": "go 1.21\n\nuse ./does-not-exist\n",
			"main.go": simMain,
		}, "enabled=true node=n1\n", 1},
	}
	b := &Builder{CacheDir: t.TempDir()}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			art, err := b.Build(context.Background(), Request{Node: "n1", Pkg: newModule(t, tt.files)})
			if err != nil {
				t.Fatal(err)
			}
			out, calls := runGuest(t, art.Path, "SEEDFALL=1", "SEEDFALL_NODE=n1")
			if out != tt.wantOut || calls != tt.wantCalls {
				t.Errorf("guest printed %q and called setup_complete %d times; want %q and %d", out, calls, tt.wantOut, tt.wantCalls)
			}
		})
	}
}

// runGuest runs a module to completion with a "seedfall" host module that
// counts setup_complete calls, and returns its stdout.
func runGuest(t *testing.T, path string, env ...string) (string, int) {
	t.Helper()
	bin, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, r := newRuntime(t)
	calls := 0
	_, err = r.NewHostModuleBuilder("seedfall").
		NewFunctionBuilder().WithFunc(func(context.Context) { calls++ }).Export("setup_complete").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cfg := wazero.NewModuleConfig().WithStdout(&stdout).WithStderr(&stderr).WithArgs("guest")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		cfg = cfg.WithEnv(k, v)
	}
	if _, err := r.InstantiateWithConfig(ctx, bin, cfg); err != nil {
		t.Fatalf("guest failed: %v\nstderr: %s", err, stderr.String())
	}
	return stdout.String(), calls
}

func TestBuildOverlay(t *testing.T) {
	// container/ring is imported by nothing else in the standard library, so
	// overlaying it recompiles one small package.
	mod := newModule(t, map[string]string{"main.go": `package main

import (
	"container/ring"
	"fmt"
)

func main() { fmt.Println(ring.SeedfallOverlay) }
`})
	cache := t.TempDir()
	b := &Builder{CacheDir: cache}
	ctx := context.Background()
	if _, err := b.Build(ctx, Request{Node: "n1", Pkg: mod}); err == nil {
		t.Fatal("build without the overlay succeeded; the test proves nothing")
	}
	overlay := map[string][]byte{"src/container/ring/seedfall.go": []byte("package ring\n\nconst SeedfallOverlay = \"overlaid\"\n")}
	art, err := b.Build(ctx, Request{Node: "n1", Pkg: mod, Overlay: overlay})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := runGuest(t, art.Path); out != "overlaid\n" {
		t.Errorf("guest printed %q, want %q", out, "overlaid\n")
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "overlay", "*", "src", "container", "ring", "seedfall.go"))
	if len(dirs) != 1 {
		t.Errorf("overlay files in the cache: %v, want one copy", dirs)
	}
}

// Two seedfall processes building the same package at once both succeed and
// leave one artifact behind, built once: the other waited for it.
func TestBuildConcurrent(t *testing.T) {
	mod := newModule(t, map[string]string{"main.go": simMain})
	cache := t.TempDir()
	var wg sync.WaitGroup
	arts := make([]*Artifact, 2)
	errs := make([]error, 2)
	for i := range arts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &Builder{CacheDir: cache}
			arts[i], errs[i] = b.Build(context.Background(), Request{Node: "n1", Pkg: mod})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("builder %d: %v", i, err)
		}
	}
	if arts[0].Hash != arts[1].Hash || arts[0].Path != arts[1].Path {
		t.Errorf("concurrent builds differ: %+v vs %+v", arts[0], arts[1])
	}
	if arts[0].Cached == arts[1].Cached {
		t.Errorf("Cached = %v and %v: want one build and one hit", arts[0].Cached, arts[1].Cached)
	}
	for _, tt := range []struct {
		dir  string
		want []string
	}{
		{"wasm", []string{filepath.Base(arts[0].Path), filepath.Base(arts[0].Path) + ".sha256"}},
		{"sim", []string{simDirName(t), simDirName(t) + ".sha256"}},
		{"tmp", nil},
	} {
		entries, err := os.ReadDir(filepath.Join(cache, tt.dir))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, tt.want) {
			t.Errorf("cache/%s holds %q, want %q", tt.dir, names, tt.want)
		}
	}
}

// A module is the same bytes wherever the module and the cache live, so a
// replay on another machine finds the same binary.
func TestBuildReproducible(t *testing.T) {
	files := map[string]string{"main.go": simMain}
	ctx := context.Background()
	a, err := (&Builder{CacheDir: t.TempDir()}).Build(ctx, Request{Node: "n1", Pkg: newModule(t, files)})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "deeper", "cache")
	b, err := (&Builder{CacheDir: elsewhere}).Build(ctx, Request{Node: "n1", Pkg: newModule(t, files)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash != b.Hash || a.Key != b.Key {
		t.Errorf("same module in two places: hash %s vs %s, key %s vs %s", a.Hash, b.Hash, a.Key, b.Key)
	}
}

// -trimpath builds are reproducible: a build from an empty Go build cache
// gives the same bytes as one from a warm cache.
func TestBuildColdMatchesWarm(t *testing.T) {
	// A cold build compiles the standard library: 25s of the suite's budget
	// on 2 cores in every run; CI runs it in its own step (.ci/run).
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("builds the standard library from nothing; run with SEEDFALL_SLOW=1")
	}
	t.Parallel() // mostly one compile at a time: overlaps well with the rest
	// No fmt: the fewer standard packages, the shorter the cold build.
	mod := newModule(t, map[string]string{"main.go": `package main

import (
	"os"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	sim.SetupComplete()
	os.Stdout.WriteString(sim.Node())
}
`})
	ctx := context.Background()
	cold := &Builder{CacheDir: t.TempDir(), Env: []string{"GOCACHE=" + t.TempDir()}}
	warm := &Builder{CacheDir: t.TempDir()}
	a, err := cold.Build(ctx, Request{Node: "n1", Pkg: mod})
	if err != nil {
		t.Fatal(err)
	}
	b, err := warm.Build(ctx, Request{Node: "n1", Pkg: mod})
	if err != nil {
		t.Fatal(err)
	}
	if a.Hash != b.Hash || a.Key != b.Key {
		t.Errorf("cold build hash %s key %s; warm build hash %s key %s", a.Hash, a.Key, b.Hash, b.Key)
	}
	t.Logf("cold build %v, warm build %v", a.Took, b.Took)
}

func TestLoad(t *testing.T) {
	raw := mustRawHello(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "hello.wasm")
	writeFiles(t, dir, map[string]string{"hello.wasm": string(raw), "junk.wasm": "not wasm at all"})
	b := &Builder{CacheDir: t.TempDir()}
	ctx := context.Background()

	a, err := b.Load(ctx, "n1", path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Cached {
		t.Error("first Load says Cached")
	}
	bin, err := os.ReadFile(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n := segmentCount(t, bin); n > 8 {
		t.Errorf("loaded module has %d data segments; Load must merge them", n)
	}
	if !bytes.Equal(initialMemory(t, bin), initialMemory(t, raw)) {
		t.Error("loaded module's initial memory differs from the prebuilt one")
	}
	again, err := b.Load(ctx, "n1", path)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Hash != a.Hash || again.Key != a.Key {
		t.Errorf("second Load = %+v, want the cached %+v", again, a)
	}

	for _, tt := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.wasm"), "does not exist"},
		{filepath.Join(dir, "junk.wasm"), "not a valid WebAssembly module"},
	} {
		_, err := b.Load(ctx, "n1", tt.path)
		var be *Error
		if !errors.As(err, &be) || !strings.Contains(err.Error(), tt.want) || be.Node != "n1" {
			t.Errorf("Load(%s) error = %v, want *Error for node n1 containing %q", tt.path, err, tt.want)
		}
	}
}

func BenchmarkBuildCached(b *testing.B) {
	mod := newModule(b, map[string]string{
		"main.go":       simMain,
		"lib/lib.go":    "package lib\n\nconst X = 1\n",
		"README.md":     strings.Repeat("seedfall\n", 1000),
		"server/srv.go": "package server\n",
	})
	bl := &Builder{CacheDir: b.TempDir()}
	ctx := context.Background()
	req := Request{Node: "n1", Pkg: mod}
	if _, err := bl.Build(ctx, req); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		a, err := bl.Build(ctx, req)
		if err != nil || !a.Cached {
			b.Fatalf("Build = %+v, %v; want a cache hit", a, err)
		}
	}
}

func simDirName(t *testing.T) string {
	h, err := simSourceHash()
	if err != nil {
		t.Fatal(err)
	}
	return h[:16]
}

// A build that waits for another process's build of the same module stops
// waiting when its context is done.
func TestBuildWaitIsCancelled(t *testing.T) {
	mod := newModule(t, map[string]string{"main.go": helloMain})
	b := &Builder{CacheDir: t.TempDir()}
	p, err := b.plan(context.Background(), Request{Node: "n1", Pkg: mod})
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockKey(context.Background(), p.cache, p.key) // the other process
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if !fileLocks {
		t.Skip("no file locks here")
	}
	if _, err := b.Build(ctx, Request{Node: "n1", Pkg: mod}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Build while another holds the module's lock: %v, want the context's error", err)
	}
}
