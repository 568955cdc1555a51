package guest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/guest/compat"
	"github.com/seedfall/seedfall/sim"
)

// Builder builds guests and keeps them in a content-addressed cache. Its
// methods are safe for concurrent use, and several processes may share one
// CacheDir: every cache entry appears by an atomic rename, and every entry
// is checked against its sha256 when it is used. A Builder's first use of
// the cache removes what killed processes left in it (see sweep).
type Builder struct {
	CacheDir string   // default: $SEEDFALL_CACHE, else os.UserCacheDir()/seedfall
	GoCmd    string   // default "go"
	Env      []string // extra environment for the go command, after the process's own
	// Note hears about damaged cache entries, which are made again. By
	// default the note goes to the process's stderr.
	Note func(msg string)

	mu  sync.Mutex
	env *goEnv // what `go env` said, asked once per Builder

	vmu      sync.Mutex
	verified map[string]checkedAt // entries this Builder checked, by path

	swept sync.Once
}

// checkedAt is a cache entry as it was when its hash was checked.
type checkedAt struct {
	fi   os.FileInfo
	hash string
}

// Request asks for one node's program.
type Request struct {
	Node string // for error messages
	Pkg  string // directory of a Go main package; made absolute if relative
	// Overlay replaces or adds files of the Go distribution for this build,
	// keyed by GOROOT-relative slash path ("src/net/net_fake.go").
	Overlay map[string][]byte
	// Compat applies compat_overlay: the generic mmap/flock shim and the
	// library shims of package compat. Shims marked Always apply without it.
	Compat bool
	// Cover builds with Go's coverage counters (-cover -covermode=count) for
	// the packages CoverPkgs matches (-coverpkg); with none, the main
	// module's packages.
	Cover     bool
	CoverPkgs []string
}

// coverPkg is the -coverpkg value of a request: its patterns, or every
// package of the main module at path.
func (r Request) coverPkg(path string) string {
	if len(r.CoverPkgs) > 0 {
		return strings.Join(r.CoverPkgs, ",")
	}
	return path + "/..."
}

// Artifact is a built (or loaded) module in the cache.
type Artifact struct {
	Path   string        // merged .wasm in the cache
	Wasm   []byte        // the bytes at Path, as read or written by this call
	Hash   string        // sha256 hex of Wasm
	Key    string        // cache key: what the module was made from
	Cached bool          // true when no build was needed
	Took   time.Duration // wall time of the call, for progress reports
}

// Error is a build that failed because of the node's program or its
// configuration. Output is the compiler's output, or what is wrong.
type Error struct {
	Node   string
	Pkg    string // as shown to the user: relative to the working directory when inside it
	Output string
}

func (e *Error) Error() string {
	head := fmt.Sprintf("build node %q (%s):", e.Node, e.Pkg)
	out := strings.TrimSpace(e.Output)
	if !strings.Contains(out, "\n") {
		return head + " " + out
	}
	return head + "\n    " + strings.ReplaceAll(out, "\n", "\n    ")
}

// goEnv is the part of the go command's configuration that decides what a
// build produces. It includes settings from `go env -w`, which the process
// environment does not show.
type goEnv struct {
	GOVERSION, GOROOT, GOFLAGS, GOEXPERIMENT, GOWASM string
	GOCACHE                                          string // not in the key: where, not what (buildlock.go)
}

// environ is the environment of every go command the Builder runs. The
// target cannot be overridden, and a user's go.work never applies (Build
// may set a workspace of its own); GOTOOLCHAIN=local keeps the go command
// from switching to another toolchain than the one whose version is in the
// cache key.
func (b *Builder) environ() []string {
	env := append(os.Environ(), "GOTOOLCHAIN=local")
	env = append(env, b.Env...)
	return append(env, "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0", "GOWORK=off")
}

func (b *Builder) note(msg string) {
	if b.Note != nil {
		b.Note(msg)
		return
	}
	fmt.Fprintln(os.Stderr, msg)
}

// sweep removes the leftovers of killed processes from cache, once per
// Builder.
func (b *Builder) sweep(cache string) {
	b.swept.Do(func() { sweep(cache) })
}

func (b *Builder) goCmd() string {
	if b.GoCmd != "" {
		return b.GoCmd
	}
	return "go"
}

func (b *Builder) goEnv(ctx context.Context) (*goEnv, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.env != nil {
		return b.env, nil
	}
	// In os.TempDir no go.mod or go.work of the caller's may interfere.
	cmd, err := b.command(ctx, os.TempDir(), b.environ(), "env", "-json", "GOVERSION", "GOROOT", "GOFLAGS", "GOEXPERIMENT", "GOWASM", "GOCACHE")
	if err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := runCommand(cmd); err != nil {
		return nil, fmt.Errorf("go env failed: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	out := stdout.Bytes()
	var e goEnv
	if err := json.Unmarshal(out, &e); err != nil || e.GOVERSION == "" || e.GOROOT == "" {
		return nil, fmt.Errorf("go env printed something unexpected (%q); is %q the go command?", out, b.goCmd())
	}
	b.env = &e
	return b.env, nil
}

// GOROOT returns the Go installation the Builder builds with, the root that
// Request.Overlay paths are relative to.
func (b *Builder) GOROOT() (string, error) {
	e, err := b.goEnv(context.Background())
	if err != nil {
		return "", err
	}
	return e.GOROOT, nil
}

func (b *Builder) cacheDir() (string, error) {
	dir := b.CacheDir
	if dir == "" {
		dir = os.Getenv("SEEDFALL_CACHE")
	}
	if dir == "" {
		user, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: %v; set SEEDFALL_CACHE", err)
		}
		dir = filepath.Join(user, "seedfall")
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		tagCache(dir)
	}
	return dir, err
}

// Build builds req.Pkg for wasip1, merges its data segments and returns the
// cached module. When the cache already holds a module for the same inputs
// (the module's files, local replacements, overlay, Go version and settings)
// no go command runs at all.
func (b *Builder) Build(ctx context.Context, req Request) (*Artifact, error) {
	start := time.Now()
	p, err := b.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	if art, why := b.cached(p.dest); art != nil {
		art.Key, art.Cached, art.Took = p.key, true, time.Since(start)
		return art, nil
	} else if why != "" {
		b.note(fmt.Sprintf("seedfall: the cached build of %s was corrupt (%s); rebuilding", displayPath(p.pkg), why))
	}
	// One build of a key at a time, across processes: whoever waited finds
	// the module in the cache (buildlock.go).
	unlock, err := lockKey(ctx, p.cache, p.key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if art, _ := b.cached(p.dest); art != nil {
		art.Key, art.Cached, art.Took = p.key, true, time.Since(start)
		return art, nil
	}
	first, err := firstOfConfig(ctx, p.cache, configID(p.env, overlayHash(req.Overlay)))
	if err != nil {
		return nil, err
	}
	built := false
	defer func() { first(built) }()

	tmp, release, err := mkTemp(p.cache, "build-")
	if err != nil {
		return nil, err
	}
	defer release()
	args := []string{"build", "-trimpath", "-buildvcs=false"}
	env := b.environ()
	var uses []string // modules of the workspace besides the program's own
	if p.injectSim {
		simDir, err := ensureSim(p.cache, p.simHash, b.note)
		if err != nil {
			return nil, err
		}
		uses = append(uses, simDir)
	}
	workEnv := func() ([]string, error) {
		if len(uses) == 0 {
			return env, nil
		}
		work, err := writeGoWork(tmp, p.root, p.mod, uses)
		if err != nil {
			return nil, err
		}
		return append(env, "GOWORK="+work), nil
	}
	overlay := req.Overlay
	if p.compat {
		listEnv, err := workEnv()
		if err != nil {
			return nil, err
		}
		var patched []string
		if overlay, patched, err = b.compatFiles(ctx, p, req, listEnv); err != nil {
			return nil, err
		}
		uses = append(uses, patched...)
	}
	if env, err = workEnv(); err != nil {
		return nil, err
	}
	if len(overlay) > 0 {
		ovl, err := writeOverlay(p.cache, tmp, p.env.GOROOT, overlay, b.note)
		if err != nil {
			return nil, err
		}
		args = append(args, "-overlay="+ovl)
	}
	if req.Cover {
		args = append(args, "-cover", "-covermode=count", "-coverpkg="+req.coverPkg(p.mod.path))
	}
	out := filepath.Join(tmp, "out.wasm")
	args = append(args, "-o", out, ".")
	// Under compat_overlay a build that fails on names a dependency's
	// files for linux define is made again with those files (tagrule.go).
	shimmed, rule, taken := uses, map[string]*compat.Patch{}, []string(nil)
	for round := 0; ; round++ {
		cmd, err := b.command(ctx, p.pkg, append(env, "GOTMPDIR="+tmp), args...)
		if err != nil {
			return nil, err
		}
		var combined bytes.Buffer
		cmd.Stdout, cmd.Stderr = &combined, &combined
		err = runCommand(cmd)
		if err == nil {
			break
		}
		output := combined.Bytes()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var other []string
		if p.compat && round < tagRuleRounds {
			var more []string
			if more, other = b.tagRule(ctx, p.pkg, env, output, rule); len(more) > 0 {
				taken = append(taken, more...)
				uses = slices.Clone(shimmed)
				for _, path := range slices.Sorted(maps.Keys(rule)) {
					dir, err := patchedModule(p.cache, *rule[path], b.note)
					if err != nil {
						return nil, err
					}
					uses = append(uses, dir)
				}
				if env, err = workEnv(); err != nil {
					return nil, err
				}
				continue
			}
		}
		if len(bytes.TrimSpace(output)) == 0 {
			output = []byte(err.Error())
		}
		took := ""
		if len(taken) > 0 {
			took = "\nseedfall built it with these files, which leave wasip1 out, taken as for linux (the tag rule, docs/compat.md): " + strings.Join(taken, ", ")
		}
		if len(other) > 0 {
			took += "\nwhat is undefined is defined in " + strings.Join(other, ", ") + ", which would not build for linux either, so the tag rule does not take it: add a file for wasip1 to a fork of that module and point a replace directive at it (docs/compat.md)"
		}
		return nil, p.userErr("%s%s%s", cleanOutput(string(output)), took, b.buildHint(ctx, p, req, env, output)) // nativehint.go
	}
	if len(taken) > 0 {
		b.note(fmt.Sprintf("seedfall: node %q builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): %s", req.Node, strings.Join(taken, ", ")))
	}
	bin, err := os.ReadFile(out)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(bin) == 0) {
		// go build said it succeeded; a full disk can do that.
		return nil, p.userErr("go build succeeded but wrote no module to %s: is the disk full?", out)
	}
	if err != nil {
		return nil, err
	}
	// For a library package go build -o writes an archive, not a module.
	if !bytes.HasPrefix(bin, wasmHeader[:4]) {
		return nil, p.userErr("not a main package: a node's \"pkg\" must be a Go package named main with a func main")
	}
	merged, err := postProcess(bin)
	if err != nil {
		return nil, fmt.Errorf("build node %q: %v", req.Node, err)
	}
	hash, err := store(p.dest, merged)
	if err != nil {
		return nil, err
	}
	built = true
	return &Artifact{Path: p.dest, Wasm: merged, Hash: hash, Key: p.key, Took: time.Since(start)}, nil
}

// buildPlan is everything Build decides before it looks in the cache.
type buildPlan struct {
	node, pkg, root string
	gomod           []byte
	mod             modInfo
	cache           string
	env             *goEnv
	injectSim       bool
	compat          bool // compat_overlay, or a module an Always shim covers
	simHash         string
	key, dest       string
}

func (p *buildPlan) userErr(format string, args ...any) error {
	return &Error{Node: p.node, Pkg: displayPath(p.pkg), Output: fmt.Sprintf(format, args...)}
}

// plan checks the request and computes its cache key: a hash of everything
// that decides what go build produces.
func (b *Builder) plan(ctx context.Context, req Request) (*buildPlan, error) {
	pkg, err := filepath.Abs(req.Pkg)
	if err != nil {
		return nil, err
	}
	p := &buildPlan{node: req.Node, pkg: pkg}
	if fi, err := os.Stat(pkg); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, p.userErr("package directory %s does not exist; check the node's \"pkg\" path", pkg)
		}
		return nil, p.userErr("%v", err)
	} else if !fi.IsDir() {
		return nil, p.userErr("%s is not a directory; \"pkg\" names the directory of a Go main package", pkg)
	}
	root, ok := findModuleRoot(pkg)
	if !ok {
		return nil, p.userErr("no go.mod in %s or any parent directory; run \"go mod init <module path>\" in the root of the project", pkg)
	}
	p.root = root
	if p.gomod, err = os.ReadFile(filepath.Join(root, "go.mod")); err != nil {
		return nil, p.userErr("%v", err)
	}
	p.mod = parseGoMod(p.gomod)
	for _, path := range sortedKeys(req.Overlay) {
		if !validOverlayPath(path) {
			return nil, p.userErr("overlay path %q must be a clean slash path inside GOROOT, like src/net/net_fake.go", path)
		}
	}
	if p.cache, err = b.cacheDir(); err != nil {
		return nil, err
	}
	b.sweep(p.cache)
	if p.env, err = b.goEnv(ctx); err != nil {
		return nil, err
	}
	// Programs that import sim get the copy built into this binary, which
	// speaks the host calls this binary implements, unless their module
	// points at a sim of its own with a replace directive or vendors its
	// dependencies (workspaces ignore a module's vendor directory).
	_, vendorErr := os.Stat(filepath.Join(root, "vendor", "modules.txt"))
	p.injectSim = !p.mod.replacesSim && p.mod.path != simModule && vendorErr != nil
	if p.injectSim {
		if p.simHash, err = simSourceHash(); err != nil {
			return nil, fmt.Errorf("hashing the built-in sim module: %v", err)
		}
	}

	rel, err := filepath.Rel(root, pkg)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	keyField(h, "version", keyVersion)
	keyField(h, "go", p.env.GOVERSION)
	keyField(h, "target", "wasip1/wasm")
	keyField(h, "goflags", p.env.GOFLAGS)
	keyField(h, "goexperiment", p.env.GOEXPERIMENT)
	keyField(h, "gowasm", p.env.GOWASM)
	keyField(h, "flags", "-trimpath -buildvcs=false CGO_ENABLED=0")
	keyField(h, "sim", p.simHash)
	keyField(h, "overlay", overlayHash(req.Overlay))
	if req.Cover {
		keyField(h, "cover", req.coverPkg(p.mod.path))
	}
	if p.compat = req.Compat || compat.Wanted(p.gomod); p.compat {
		// The shims depend on the dependency graph, which go.mod and
		// go.sum (hashed with the module below) decide, and on the shims.
		keyField(h, "compat", fmt.Sprintf("%v %s", req.Compat, compat.Hash()))
	}
	keyField(h, "pkg", filepath.ToSlash(rel))
	if err := hashTree(h, root); err != nil {
		return nil, p.userErr("reading the module at %s: %v", root, err)
	}
	for _, r := range p.mod.localReplaces {
		keyField(h, "replace", r)
		dir := r
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(root, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			keyField(h, "missing", "") // go build will say what is wrong
			continue
		}
		if err := hashTree(h, dir); err != nil {
			return nil, p.userErr("reading the replacement module at %s: %v", dir, err)
		}
	}
	p.key = hex.EncodeToString(h.Sum(nil))
	p.dest = filepath.Join(p.cache, "wasm", p.key+".wasm")
	return p, nil
}

// Load brings a prebuilt module into the cache, merged like a built one. The
// key is the content of the input, so loading the same file twice is a hit.
func (b *Builder) Load(ctx context.Context, node, wasmPath string) (*Artifact, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(wasmPath)
	if err != nil {
		return nil, err
	}
	userErr := func(format string, args ...any) error {
		return &Error{Node: node, Pkg: displayPath(abs), Output: fmt.Sprintf(format, args...)}
	}
	bin, err := os.ReadFile(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, userErr("prebuilt module %s does not exist; check the node's \"wasm\" path", abs)
		}
		return nil, userErr("%v", err)
	}
	cache, err := b.cacheDir()
	if err != nil {
		return nil, err
	}
	b.sweep(cache)
	h := sha256.New()
	keyField(h, "version", keyVersion)
	keyField(h, "load", sha256Hex(bin))
	key := hex.EncodeToString(h.Sum(nil))
	dest := filepath.Join(cache, "wasm", key+".wasm")
	if art, why := b.cached(dest); art != nil {
		art.Key, art.Cached, art.Took = key, true, time.Since(start)
		return art, nil
	} else if why != "" {
		b.note(fmt.Sprintf("seedfall: the cached copy of %s was corrupt (%s); making it again", displayPath(abs), why))
	}
	merged, err := postProcess(bin)
	if err != nil {
		return nil, userErr("%s is not a valid WebAssembly module: %v", abs, err)
	}
	hash, err := store(dest, merged)
	if err != nil {
		return nil, err
	}
	return &Artifact{Path: dest, Wasm: merged, Hash: hash, Key: key, Took: time.Since(start)}, nil
}

// cached returns the artifact at path, bytes and all, if a sound one is
// there. Entries only ever appear by rename, so one that exists is whole;
// its bytes are checked against the hash that store wrote beside it before
// it, which catches damage on disk (a flipped bit would otherwise run as
// the program, and its crash be blamed on the program). A damaged entry is
// removed and why is said; why is "" when there was no entry. An entry is
// hashed once per Builder: while it is the same file, unchanged, it is not
// hashed again.
func (b *Builder) cached(path string) (art *Artifact, why string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, ""
	}
	bin := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, bin); err != nil {
		return nil, ""
	}
	b.vmu.Lock()
	seen, ok := b.verified[path]
	b.vmu.Unlock()
	if ok && os.SameFile(seen.fi, fi) && seen.fi.Size() == fi.Size() && seen.fi.ModTime().Equal(fi.ModTime()) {
		return &Artifact{Path: path, Wasm: bin, Hash: seen.hash}, ""
	}
	hash := sha256Hex(bin)
	switch sum, err := os.ReadFile(path + ".sha256"); {
	case err != nil:
		why = "its sha256 is missing"
	case string(sum) != hash:
		why = "sha256 mismatch"
	default:
		b.vmu.Lock()
		if b.verified == nil {
			b.verified = map[string]checkedAt{}
		}
		b.verified[path] = checkedAt{fi, hash}
		b.vmu.Unlock()
		return &Artifact{Path: path, Wasm: bin, Hash: hash}, ""
	}
	os.Remove(path)
	return nil, why
}

// store puts a module into the cache at path and returns its hash: the
// sidecar first, so that whoever sees the module also finds its hash.
func store(path string, bin []byte) (string, error) {
	hash := sha256Hex(bin)
	if err := writeAtomic(path+".sha256", []byte(hash)); err != nil {
		return "", err
	}
	return hash, writeAtomic(path, bin)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// findModuleRoot walks up from dir to the directory holding go.mod.
func findModuleRoot(dir string) (string, bool) {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && fi.Mode().IsRegular() {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func validOverlayPath(p string) bool {
	return p != "" && path.Clean(p) == p && !strings.Contains(p, `\`) && filepath.IsLocal(filepath.FromSlash(p))
}

// displayPath shows p relative to the working directory when it is inside
// it ("./server"), as a user would have written it.
func displayPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(wd, p)
	switch {
	case err != nil || !filepath.IsLocal(rel):
		return p
	case rel == ".":
		return "."
	}
	return "." + string(filepath.Separator) + rel
}

// cleanOutput drops the "# import/path" header go build prints above the
// errors of a package when it is the only one: the error already names the
// node and its directory.
func cleanOutput(out string) string {
	out = strings.TrimSpace(out)
	lines := strings.Split(out, "\n")
	headers := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") {
			headers++
		}
	}
	if headers == 1 && strings.HasPrefix(lines[0], "# ") && len(lines) > 1 {
		return strings.Join(lines[1:], "\n")
	}
	return out
}

// writeGoWork writes a go.work that puts the module side by side with the
// modules in dirs (the built-in sim module, patched copies of modules that
// compat_overlay shims), and returns its path for GOWORK. A workspace,
// unlike a replace directive, leaves no directory path in the binary's
// build info, so the module is the same bytes whatever the cache's
// location, on every machine. Its go line is the module's own, which
// decides the program's GODEBUG defaults, raised to the newest of the
// other modules' when the module's is older.
func writeGoWork(tmp, root string, mod modInfo, dirs []string) (string, error) {
	goLine := mod.goVersion
	if goLine == "" {
		goLine = "1.16" // what the go command assumes for a go.mod without one
	}
	var use strings.Builder
	fmt.Fprintf(&use, "\t%s\n", strconv.Quote(root))
	for _, dir := range dirs {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			return "", err
		}
		if v := parseGoMod(gomod).goVersion; v != "" && compareGoVersions(goLine, v) < 0 {
			goLine = v
		}
		fmt.Fprintf(&use, "\t%s\n", strconv.Quote(dir))
	}
	work := fmt.Sprintf("go %s\n\nuse (\n%s)\n", goLine, use.String())
	path := filepath.Join(tmp, "go.work")
	return path, os.WriteFile(path, []byte(work), 0o644)
}

var simSourceHash = sync.OnceValues(func() (string, error) { return hashFS(sim.Source()) })

// ensureSim extracts the built-in sim module into <cache>/sim/<hash>, once.
func ensureSim(cache, hash string, note func(string)) (string, error) {
	return ensureDir(filepath.Join(cache, "sim", hash[:16]), note, WriteSim)
}

// WriteSim writes the source of the sim module this binary carries, not its
// tests, into dir: the copy builds use, and the one seedfall sim-mod puts
// into a user's module.
func WriteSim(dir string) error {
	src := sim.Source()
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
}

// writeOverlay stores the overlay files under <cache>/overlay/<hash> and
// writes, into tmp, the overlay.json that maps GOROOT's files to them.
func writeOverlay(cache, tmp, goroot string, overlay map[string][]byte, note func(string)) (string, error) {
	dir, err := ensureDir(filepath.Join(cache, "overlay", overlayHash(overlay)[:16]), note, func(dir string) error {
		for _, p := range sortedKeys(overlay) {
			dst := filepath.Join(dir, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, overlay[p], 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	replace := make(map[string]string, len(overlay))
	for p := range overlay {
		replace[filepath.Join(goroot, filepath.FromSlash(p))] = filepath.Join(dir, filepath.FromSlash(p))
	}
	js, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t") // sorted keys
	if err != nil {
		return "", err
	}
	file := filepath.Join(tmp, "overlay.json")
	return file, os.WriteFile(file, js, 0o644)
}

// ensureDir makes dir exist with the content fill writes, atomically: fill
// writes into a temporary sibling, locked while it is filled, that is
// renamed into place. When another process wins the race, its directory is
// as good as ours. The hash of the content is written beside it, in
// dir.sha256, before the rename, and checked whenever the directory is used:
// a directory that does not match it (damaged on disk) is made again, with
// a note, and so is one without it (made by a seedfall from before the
// hashes).
func ensureDir(dir string, note func(string), fill func(dir string) error) (string, error) {
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		why := checkDir(dir)
		if why == "" {
			return dir, nil
		}
		if why != "no checksum" && note != nil {
			note(fmt.Sprintf("seedfall: the cache's %s was corrupt (%s); making it again", filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir)), why))
		}
		discardDir(dir)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", CacheErr(err)
	}
	tmp, err := os.MkdirTemp(parent, ".tmp-")
	if err != nil {
		return "", CacheErr(err)
	}
	lock, err := lockDir(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	defer lock.Close()
	fail := func(err error) (string, error) {
		os.RemoveAll(tmp)
		return "", CacheErr(err)
	}
	if err := fill(tmp); err != nil {
		return fail(err)
	}
	// The lock file goes before the rename (the lock itself stays until
	// the end): the entry holds only what fill wrote.
	if err := os.Remove(filepath.Join(tmp, lockName)); err != nil {
		return fail(err)
	}
	sum, err := hashFS(os.DirFS(tmp))
	if err != nil {
		return fail(err)
	}
	if err := fsutil.WriteFile(dir+".sha256", []byte(sum), 0o644); err != nil {
		return fail(err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		os.RemoveAll(tmp)
		if fi, statErr := os.Stat(dir); statErr == nil && fi.IsDir() {
			return dir, nil
		}
		return "", CacheErr(err)
	}
	return dir, nil
}

// checkDir says what is wrong with the cache directory dir, or "" if its
// content matches the hash beside it.
func checkDir(dir string) string {
	want, err := os.ReadFile(dir + ".sha256")
	if err != nil {
		return "no checksum"
	}
	got, err := hashFS(os.DirFS(dir))
	switch {
	case err != nil:
		return err.Error()
	case got != string(want):
		return "sha256 mismatch"
	}
	return ""
}

// discardDir takes a damaged cache directory out of the way: renamed first,
// so that no one finds half of it, then removed.
func discardDir(dir string) {
	gone := filepath.Join(filepath.Dir(dir), fmt.Sprintf(".tmp-discard-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if os.Rename(dir, gone) == nil {
		os.RemoveAll(gone)
	}
}

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers see the whole file or none of it.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return CacheErr(err)
	}
	if err := fsutil.WriteFile(path, data, 0o644); err != nil {
		return CacheErr(err)
	}
	return nil
}

// mkTemp makes a temporary directory under <cache>/tmp, locked until
// release, which also removes it.
func mkTemp(cache, prefix string) (dir string, release func(), err error) {
	parent := filepath.Join(cache, "tmp")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, CacheErr(err)
	}
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", nil, CacheErr(err)
	}
	lock, err := lockDir(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return tmp, func() {
		os.RemoveAll(tmp)
		lock.Close()
	}, nil
}

// CacheErr says what to do about an error writing seedfall's cache.
func CacheErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("seedfall cache: %v; free space on that disk, or point SEEDFALL_CACHE at a disk with room", err)
	}
	return fmt.Errorf("seedfall cache: %v; make it writable or point SEEDFALL_CACHE at a writable directory", err)
}

// postProcess prepares a module for seedfall: its data segments merged, so
// that instantiation is fast, its loops given a budget, so that the
// watchdog can stop it (see Instrument), and what a paused guest's state
// is exported (ExportPause), so that the engine can snapshot it. A well-formed module that cannot be
// instrumented is kept without the budget; the engine runs it in a slower
// runtime that can still interrupt it.
func postProcess(bin []byte) ([]byte, error) {
	merged, err := MergeData(bin)
	if err != nil {
		return nil, fmt.Errorf("merging data segments: %w", err)
	}
	inst, err := Instrument(merged)
	if errors.Is(err, errUnsupported) {
		return merged, nil
	}
	if err != nil {
		return nil, fmt.Errorf("adding the loop budget: %w", err)
	}
	paused, err := ExportPause(inst)
	if errors.Is(err, errUnsupported) {
		return inst, nil
	}
	if err != nil {
		return nil, fmt.Errorf("exporting the pause state: %w", err)
	}
	return paused, nil
}
