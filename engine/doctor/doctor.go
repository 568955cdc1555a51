// Package doctor checks that a machine can run seedfall: the Go
// installation against the overlays seedfall patches into it, a build and
// a run for GOOS=wasip1, the cache, and the browser seedfall's report
// tests use. Each check says what it found and, when something is wrong,
// what to do. `seedfall doctor` prints them.
package doctor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/compat"
	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
	"github.com/seedfall/seedfall/engine/world"
)

// The states of a check.
const (
	OK   = "ok"
	Warn = "warn" // worth knowing, but seedfall works
	Fail = "fail"
)

// Check is the outcome of one check.
type Check struct {
	Name   string `json:"name"`
	Status string `json:"status"` // OK, Warn or Fail
	Detail string `json:"detail"` // what was found
	Fix    string `json:"fix,omitempty"`
}

// Options say what to check.
type Options struct {
	GoCmd  string   // the go command; default "go" on PATH
	GoEnv  []string // extra environment for it
	GOROOT string   // the Go installation whose sources the overlays patch; default: the go command's
	// CacheDir is seedfall's cache; default engine.DefaultCacheDir.
	CacheDir string
	// Verify hashes every module in the cache against its sha256.
	Verify bool
	// Build builds and runs a small program for GOOS=wasip1.
	Build bool
	// Browser is the browser the report tests load pages in; default
	// "chromium", looked up on PATH.
	Browser string
}

// Run makes every check, in order: the Go installation, each overlay, the
// wasip1 build, the cache, the browser.
func Run(ctx context.Context, o Options) []Check {
	goCheck, goroot := Go(ctx, o.GoCmd, o.GoEnv)
	checks := []Check{goCheck}
	if o.GOROOT != "" {
		goroot = o.GOROOT
	}
	if goroot == "" {
		for _, name := range overlayNames {
			checks = append(checks, Check{Name: name, Status: Fail, Detail: "not checked: no Go installation", Fix: "see the go check"})
		}
	} else {
		checks = append(checks, Overlays(goroot)...)
	}
	if o.Build {
		checks = append(checks, Build(ctx, o.GoCmd, o.GoEnv))
	}
	checks = append(checks, Cache(o.CacheDir, o.Verify), Browser(o.Browser))
	// A Go release other than the overlays' is fine when they apply.
	if checks[0].Status == Warn && Failed(checks[1:4]) {
		checks[0].Status = Fail
	}
	return checks
}

// Failed says whether a check failed.
func Failed(checks []Check) bool {
	for _, c := range checks {
		if c.Status == Fail {
			return true
		}
	}
	return false
}

// minMinor is the oldest Go with GOOS=wasip1: go1.21.
const minMinor = 21

// Go checks the go command: its release and installation. It returns the
// installation's root, or "" when there is no usable go command.
func Go(ctx context.Context, goCmd string, env []string) (Check, string) {
	c := Check{Name: "go"}
	b := &guest.Builder{GoCmd: goCmd, Env: env}
	version, err := b.GoVersion(ctx)
	if err != nil {
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = fmt.Sprintf("install Go (seedfall's overlays were made for %s) and put its go command on PATH", netoverlay.TestedWith)
		return c, ""
	}
	goroot, _ := b.GOROOT()
	c.Status, c.Detail = OK, fmt.Sprintf("%s at %s", version, goroot)
	major, minor, ok := release(version)
	switch {
	case ok && (major < 1 || major == 1 && minor < minMinor):
		c.Status = Fail
		c.Detail += fmt.Sprintf(", older than go1.%d, the first with GOOS=wasip1", minMinor)
		c.Fix = fmt.Sprintf("install %s, which seedfall's overlays were made for", netoverlay.TestedWith)
	case version != netoverlay.TestedWith && !strings.HasPrefix(version, netoverlay.TestedWith+"."):
		c.Status = Warn
		c.Detail += fmt.Sprintf("; seedfall's overlays were made for %s: the overlay checks say whether they apply to this release", netoverlay.TestedWith)
		c.Fix = fmt.Sprintf("if they do not, build with %s", netoverlay.TestedWith)
	}
	return c, goroot
}

// release reads "go1.26.8" (or "go1.27rc1") as 1 and 26.
func release(v string) (major, minor int, ok bool) {
	v, found := strings.CutPrefix(v, "go")
	if !found {
		return 0, 0, false
	}
	ma, rest, _ := strings.Cut(v, ".")
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end >= 0 {
		rest = rest[:end]
	}
	major, err1 := strconv.Atoi(ma)
	minor, err2 := strconv.Atoi(rest)
	return major, minor, err1 == nil && err2 == nil
}

var overlayNames = []string{"net overlay", "fsync overlay", "pause overlay", "compat overlay"}

// Overlays computes each overlay seedfall patches into a build against
// the sources of the Go installation at goroot, as a build does, and
// reports each one's error: an anchor line this release lacks or has
// twice, a file it lacks.
func Overlays(goroot string) []Check {
	fix := func(what string) string {
		return fmt.Sprintf("build with %s, whose sources seedfall's overlays were made for (%s)", netoverlay.TestedWith, what)
	}
	check := func(name string, n int, err error, fixWhat string) Check {
		if err != nil {
			return Check{Name: name, Status: Fail, Detail: err.Error(), Fix: fix(fixWhat)}
		}
		return Check{Name: name, Status: OK, Detail: fmt.Sprintf("applies to %s (%s)", goroot, count(n, "file"))}
	}
	netFiles, netErr := netoverlay.FilesWith(goroot, netoverlay.Options{UDP: true})
	fsyncFiles, fsyncErr := fsyncoverlay.Files(goroot)
	pauseFiles, pauseErr := pauseoverlay.Files(goroot, pauseoverlay.Options{})
	syscallDir := filepath.Join(goroot, "src", "syscall")
	compatFiles, compatErr := compat.Overlay(goroot, []compat.Package{{ImportPath: "syscall", Dir: syscallDir}}, true)
	n := 0
	if compatErr == nil {
		n = len(compatFiles.GOROOT)
	}
	return []Check{
		check(overlayNames[0], len(netFiles), netErr, `or set "net_overlay": false in the world`),
		check(overlayNames[1], len(fsyncFiles), fsyncErr, "every program built from source gets it"),
		check(overlayNames[2], len(pauseFiles), pauseErr, "every program built from source gets it"),
		check(overlayNames[3], n, compatErr, `or leave "compat_overlay" off`),
	}
}

// hello is the program Build builds: it writes a file, fsyncs it and
// reads it back, and listens on the simulated network.
const hello = `package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	if err := os.WriteFile("hello.txt", []byte("hello"), 0o644); err != nil {
		panic(err)
	}
	f, err := os.OpenFile("hello.txt", os.O_RDWR, 0)
	if err != nil {
		panic(err)
	}
	if err := f.Sync(); err != nil {
		panic(err)
	}
	f.Close()
	ln, err := net.Listen("tcp", ":7000")
	if err != nil {
		panic(err)
	}
	ln.Close()
	fmt.Println("hello from wasip1")
}
`

// Build builds a small program for GOOS=wasip1 through the engine, with
// the net, fsync and pause overlays, in a fresh seedfall cache (the go command's
// own build cache is the user's, so the standard library for wasip1 is
// compiled only when it is not there yet), runs one seed of it, and says
// how long that took.
func Build(ctx context.Context, goCmd string, env []string) Check {
	c := Check{Name: "wasip1 build"}
	fail := func(err error, fix string) Check {
		c.Status, c.Detail, c.Fix = Fail, err.Error(), fix
		return c
	}
	tmp, err := os.MkdirTemp("", "seedfall-doctor-")
	if err != nil {
		return fail(err, "make the temporary directory writable, or set TMPDIR")
	}
	defer os.RemoveAll(tmp)
	files := map[string]string{
		"go.mod":        "module example.com/hello\n\ngo 1.21\n",
		"hello/main.go": hello,
		"seedfall.json": `{"workload": {"name": "hello", "pkg": "./hello"}, "net_overlay": true, "duration": "1s"}` + "\n",
	}
	for name, text := range files {
		p := filepath.Join(tmp, "src", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fail(err, "make the temporary directory writable, or set TMPDIR")
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return fail(err, "make the temporary directory writable, or set TMPDIR")
		}
	}
	start := time.Now()
	w, err := world.Load(filepath.Join(tmp, "src", "seedfall.json"))
	if err != nil {
		return fail(err, "report this: the doctor's own world did not load")
	}
	e, err := engine.New(ctx, engine.Options{CacheDir: filepath.Join(tmp, "cache"), GoEnv: env, Note: func(string) {}})
	if err != nil {
		return fail(err, "")
	}
	defer e.Close(ctx)
	p, err := e.Prepare(ctx, w)
	if err != nil {
		return fail(err, "the go command's message above says why; the overlay checks, if one failed, say what to do")
	}
	built := time.Since(start)
	res, err := p.Run(ctx, engine.RunOptions{Seed: 1})
	if err != nil {
		return fail(err, "report this: the program built but did not run")
	}
	if !res.Passed {
		return fail(fmt.Errorf("the program built but its run failed: %s: %s", res.Class, res.Reason), "report this, with the output of seedfall doctor -json")
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("built a program with the net, fsync and pause overlays in %s and ran it in %s",
		built.Round(10*time.Millisecond), time.Duration(res.WallNs).Round(time.Millisecond))
	if built > 20*time.Second {
		c.Detail += " (a first build compiles the standard library for wasip1; later builds reuse it)"
	}
	return c
}

// Cache checks seedfall's cache directory: where it is, that it can be
// written, its size, that its modules are sound, and what killed
// processes left there.
func Cache(dir string, verify bool) Check {
	c := Check{Name: "cache"}
	if dir == "" {
		var err error
		if dir, err = engine.DefaultCacheDir(); err != nil {
			c.Status, c.Detail, c.Fix = Fail, err.Error(), "set SEEDFALL_CACHE to a directory you can write"
			return c
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if err := writable(dir); err != nil {
		c.Status = Fail
		c.Detail = fmt.Sprintf("%s: cannot write there: %v", dir, err)
		c.Fix = "make it writable, or set SEEDFALL_CACHE to a directory you can write"
		return c
	}
	h, err := guest.CheckCache(dir, verify)
	if err != nil {
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: cannot read it: %v", dir, err)
		c.Fix = "make it readable, or set SEEDFALL_CACHE to another directory"
		return c
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("%s: writable, %s, %s, %s", dir, count(h.Modules, "module"), count(h.Files, "file"), size(h.Bytes))
	if verify {
		c.Detail += ", every module matches its sha256"
	}
	if n := len(h.Leftovers); n > 0 {
		c.Detail += fmt.Sprintf("; %d left by killed processes (the next seedfall removes them)", n)
	}
	if n := len(h.Busy); n > 0 {
		c.Detail += fmt.Sprintf("; %s in progress in other processes", count(n, "build"))
	}
	if n := len(h.Damaged); n > 0 {
		c.Status = Fail
		if verify {
			c.Detail = strings.Replace(c.Detail, ", every module matches its sha256", "", 1)
		}
		var paths []string
		for i, d := range h.Damaged {
			if i < 5 {
				c.Detail += fmt.Sprintf("\n%s: %s", d.Path, d.Why)
			}
			paths = append(paths, d.Path)
		}
		if n > 5 {
			c.Detail += fmt.Sprintf("\nand %d more", n-5)
		}
		c.Detail = fmt.Sprintf("%s damaged; ", count(n, "module")) + c.Detail
		c.Fix = "remove them (a run builds them again): rm " + strings.Join(paths[:min(n, 5)], " ")
		if n > 5 {
			c.Fix = "remove the cache (runs build what they need again): rm -r " + dir
		}
	}
	return c
}

// writable makes dir if it is missing and writes a file there.
func writable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte("seedfall doctor\n"))
	cerr := f.Close()
	os.Remove(f.Name())
	if werr != nil {
		return werr
	}
	return cerr
}

// size writes a byte count for a person: "23.1 GiB".
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", v, []string{"KiB", "MiB", "GiB", "TiB"}[i])
}

// Browser looks for the browser seedfall's report tests load pages in
// (chromium by default), on PATH. Only those tests need it: without it
// they skip, unless SEEDFALL_BROWSER_TESTS is set, as in CI, where they
// fail; so does this check.
func Browser(name string) Check {
	if name == "" {
		name = "chromium"
	}
	c := Check{Name: "browser"}
	path, err := exec.LookPath(name)
	if err == nil {
		c.Status, c.Detail = OK, fmt.Sprintf("%s at %s", name, path)
		return c
	}
	c.Status = Warn
	c.Detail = fmt.Sprintf("no %s on PATH: the HTML report's browser test skips (only seedfall's own tests need it)", name)
	if os.Getenv("SEEDFALL_BROWSER_TESTS") != "" {
		c.Status = Fail
		c.Detail = fmt.Sprintf("no %s on PATH, and SEEDFALL_BROWSER_TESTS is set: the HTML report's browser test fails", name)
	}
	c.Fix = "apt-get install -y chromium (Debian; .ci/run does it)"
	return c
}

// count writes "1 file", "3 files".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
