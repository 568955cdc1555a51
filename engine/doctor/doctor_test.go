package doctor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
)

// goroot is this machine's Go installation, as the doctor finds it.
func goroot(t *testing.T) string {
	t.Helper()
	c, root := Go(context.Background(), "", nil)
	if c.Status == Fail || root == "" {
		t.Fatalf("the go check failed on the machine that runs the tests: %+v", c)
	}
	return root
}

// TestOverlaysApplyHere: the Go the tests run with is the one the
// overlays were made for.
func TestOverlaysApplyHere(t *testing.T) {
	for _, c := range Overlays(goroot(t)) {
		if c.Status != OK {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Detail)
		}
	}
}

// copyGOROOT copies what the overlays read of the installation at from.
func copyGOROOT(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	files := []string{"VERSION", "src/net/net_fake.go", "src/net/fd_fake.go", "src/net/sockopt_fake.go",
		"src/net/tcpsockopt_stub.go", "src/net/dnsclient_unix.go", "src/net/interface_stub.go",
		fsyncoverlay.PatchedFile, "src/runtime/proc.go"}
	syscallDir := filepath.Join(from, "src", "syscall")
	err := filepath.WalkDir(syscallDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && filepath.Dir(p) == syscallDir &&
			filepath.ToSlash(p) != filepath.ToSlash(filepath.Join(from, fsyncoverlay.PatchedFile)) {
			rel, _ := filepath.Rel(from, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(to, f), b)
	}
	return to
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// dropLine removes the line of a file that equals line, trimmed.
func dropLine(t *testing.T, path, line string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if strings.TrimSpace(l) != line {
			out = append(out, l)
		}
	}
	if len(out) == len(strings.SplitAfter(string(b), "\n")) {
		t.Fatalf("%s has no line %q", path, line)
	}
	writeFile(t, path, []byte(strings.Join(out, "")))
}

// dropFunc removes the function name from a Go file: its first line, to
// the line "}" that ends it.
func dropFunc(t *testing.T, path, name string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, found := false, false
	for _, l := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, "func "+name+"("):
			in, found = true, true
		case in && strings.TrimRight(l, "\n") == "}":
			in = false
		case !in:
			out = append(out, l)
		}
	}
	if !found {
		t.Fatalf("%s has no func %s", path, name)
	}
	writeFile(t, path, []byte(strings.Join(out, "")))
}

// TestOverlayAnchorMissing: a Go installation whose sources lack the
// lines the overlays hook onto fails those checks, naming the file and
// the line, and says which Go to build with.
func TestOverlayAnchorMissing(t *testing.T) {
	root := copyGOROOT(t, goroot(t))
	for _, c := range Overlays(root) {
		if c.Status != OK {
			t.Fatalf("the copy of GOROOT does not pass as it is: %s: %s", c.Name, c.Detail)
		}
	}
	dropLine(t, filepath.Join(root, "src/net/fd_fake.go"), `netfd = newFD("tcp", d)`)
	// The file the fsync overlay hooks, without the function it hooks.
	dropFunc(t, filepath.Join(root, fsyncoverlay.PatchedFile), "Fsync")
	checks := Overlays(root)
	want := map[string][2]string{
		"net overlay": {"src/net/fd_fake.go: the line `netfd = newFD(\"tcp\", d)` appears 0 times, want exactly once",
			"build with " + netoverlay.TestedWith + `, whose sources seedfall's overlays were made for (or set "net_overlay": false in the world)`},
		"fsync overlay": {"fsync overlay: " + fsyncoverlay.PatchedFile + ": the line `",
			"build with " + netoverlay.TestedWith},
		// compat_overlay's Msync and Fdatasync park through the fsync overlay.
		"compat overlay": {"fsync overlay: " + fsyncoverlay.PatchedFile + ": the line `",
			"build with " + netoverlay.TestedWith},
	}
	for _, c := range checks {
		w, ok := want[c.Name]
		if !ok {
			if c.Status != OK {
				t.Errorf("%s failed too: %s", c.Name, c.Detail)
			}
			continue
		}
		if c.Status != Fail || !strings.Contains(c.Detail, w[0]) || !strings.HasPrefix(c.Fix, w[1]) {
			t.Errorf("%s: %s: %s\nfix: %s\nwant the detail to say %q and the fix %q", c.Name, c.Status, c.Detail, c.Fix, w[0], w[1])
		}
	}
	// Run names the installation it was given, and fails.
	all := Run(context.Background(), Options{GOROOT: root, CacheDir: t.TempDir()})
	if !Failed(all) {
		t.Errorf("Run passed with overlays that do not apply: %+v", all)
	}
}

// fakeGo writes a go command that answers go env with version.
func fakeGo(t *testing.T, version string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands for the go command")
	}
	p := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/sh\necho '{\"GOVERSION\": \"" + version + "\", \"GOROOT\": \"/opt/go\", \"GOCACHE\": \"/tmp\"}'\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGoVersions: the go check names the release and where it is; a
// release other than the overlays' is worth a warning, one without
// wasip1 fails, and no go command fails with what to install.
func TestGoVersions(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		version, status, detail string
	}{
		{netoverlay.TestedWith + ".3", OK, netoverlay.TestedWith + ".3 at /opt/go"},
		{"go1.99.1", Warn, "go1.99.1 at /opt/go; seedfall's overlays were made for " + netoverlay.TestedWith + ": the overlay checks say whether they apply to this release"},
		{"go1.20.4", Fail, "go1.20.4 at /opt/go, older than go1.21, the first with GOOS=wasip1"},
	} {
		got, root := Go(ctx, fakeGo(t, c.version), nil)
		if got.Status != c.status || got.Detail != c.detail || root != "/opt/go" {
			t.Errorf("%s: %s: %s (GOROOT %s), want %s: %s", c.version, got.Status, got.Detail, root, c.status, c.detail)
		}
	}
	got, root := Go(ctx, "seedfall-no-such-go", nil)
	if got.Status != Fail || root != "" || !strings.Contains(got.Detail, `cannot find the go command "seedfall-no-such-go"`) ||
		!strings.HasPrefix(got.Fix, "install Go") {
		t.Errorf("no go command: %+v (GOROOT %q)", got, root)
	}
}

// TestRunWarnsOnlyWhenOverlaysApply: another Go release is a failure of
// the go check when an overlay does not apply to it.
func TestRunWarnsOnlyWhenOverlaysApply(t *testing.T) {
	ctx := context.Background()
	good := goroot(t)
	checks := Run(ctx, Options{GoCmd: fakeGo(t, "go1.99.1"), GOROOT: good, CacheDir: t.TempDir(), Browser: "sh"})
	if checks[0].Status != Warn || Failed(checks) {
		t.Errorf("another release whose sources take the overlays: %+v", checks)
	}
	bad := copyGOROOT(t, good)
	dropFunc(t, filepath.Join(bad, fsyncoverlay.PatchedFile), "Fsync")
	checks = Run(ctx, Options{GoCmd: fakeGo(t, "go1.99.1"), GOROOT: bad, CacheDir: t.TempDir(), Browser: "sh"})
	if checks[0].Status != Fail || checks[2].Status != Fail {
		t.Errorf("another release whose sources do not take the fsync overlay: %+v", checks)
	}
}

// TestCacheUnwritable: a cache where nothing can be written fails, saying
// where and what to do.
func TestCacheUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	writeFile(t, file, []byte("not a directory\n"))
	c := Cache(filepath.Join(file, "cache"), false)
	want := filepath.Join(file, "cache") + ": cannot write there: mkdir " + file + ": not a directory"
	if c.Status != Fail || c.Detail != want || c.Fix != "make it writable, or set SEEDFALL_CACHE to a directory you can write" {
		t.Errorf("got %s: %s\nfix: %s\nwant %s", c.Status, c.Detail, c.Fix, want)
	}
}

// TestCacheDamaged: modules that cannot be used fail the check, each
// named with why; -verify finds bytes that do not match their sha256; a
// killed process's build directory is counted, not failed.
func TestCacheDamaged(t *testing.T) {
	dir := t.TempDir()
	good := append([]byte("\x00asm\x01\x00\x00\x00"), "a module"...)
	sum := sha256.Sum256(good)
	writeFile(t, filepath.Join(dir, "wasm", "aa.wasm"), good)
	writeFile(t, filepath.Join(dir, "wasm", "aa.wasm.sha256"), []byte(hex.EncodeToString(sum[:])))
	if c := Cache(dir, true); c.Status != OK || !strings.Contains(c.Detail, "writable, 1 module, 2 files") ||
		!strings.Contains(c.Detail, "every module matches its sha256") {
		t.Fatalf("a sound cache: %+v", c)
	}
	// A flipped bit: only hashing finds it.
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 1
	writeFile(t, filepath.Join(dir, "wasm", "bb.wasm"), bad)
	writeFile(t, filepath.Join(dir, "wasm", "bb.wasm.sha256"), []byte(hex.EncodeToString(sum[:])))
	if c := Cache(dir, false); c.Status != OK {
		t.Errorf("without -verify, a module with the right header passes: %+v", c)
	}
	c := Cache(dir, true)
	if c.Status != Fail || !strings.HasPrefix(c.Detail, "1 module damaged; ") ||
		!strings.Contains(c.Detail, "\n"+filepath.Join(dir, "wasm", "bb.wasm")+": sha256 mismatch") ||
		c.Fix != "remove them (a run builds them again): rm "+filepath.Join(dir, "wasm", "bb.wasm") {
		t.Errorf("a module that does not match its sha256: %s: %s\nfix: %s", c.Status, c.Detail, c.Fix)
	}
	// No sidecar, and not a module at all.
	os.Remove(filepath.Join(dir, "wasm", "bb.wasm"))
	os.Remove(filepath.Join(dir, "wasm", "bb.wasm.sha256"))
	writeFile(t, filepath.Join(dir, "wasm", "cc.wasm"), good)
	writeFile(t, filepath.Join(dir, "wasm", "dd.wasm"), []byte("<html>"))
	writeFile(t, filepath.Join(dir, "wasm", "dd.wasm.sha256"), []byte("00"))
	// A build directory a killed process left: its lock file, unlocked.
	writeFile(t, filepath.Join(dir, "tmp", "build-123", ".seedfall-lock"), nil)
	c = Cache(dir, false)
	for _, want := range []string{
		"2 modules damaged; ",
		"\n" + filepath.Join(dir, "wasm", "cc.wasm") + ": its sha256 is missing",
		"\n" + filepath.Join(dir, "wasm", "dd.wasm") + ": not a wasm module",
		"; 1 left by killed processes (the next seedfall removes them)",
	} {
		if !strings.Contains(c.Detail, want) {
			t.Errorf("the check does not say %q:\n%s", want, c.Detail)
		}
	}
	if c.Status != Fail {
		t.Errorf("status %s, want %s", c.Status, Fail)
	}
}

// TestBrowser: without chromium on PATH the check warns (the report's
// browser test skips), and fails where SEEDFALL_BROWSER_TESTS makes that
// test fail instead.
func TestBrowser(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("SEEDFALL_BROWSER_TESTS", "")
	c := Browser("")
	if c.Status != Warn || c.Detail != "no chromium on PATH: the HTML report's browser test skips (only seedfall's own tests need it)" ||
		c.Fix != "apt-get install -y chromium (Debian; .ci/run does it)" {
		t.Errorf("no chromium: %+v", c)
	}
	t.Setenv("SEEDFALL_BROWSER_TESTS", "1")
	if c := Browser(""); c.Status != Fail || !strings.Contains(c.Detail, "SEEDFALL_BROWSER_TESTS is set: the HTML report's browser test fails") {
		t.Errorf("no chromium, SEEDFALL_BROWSER_TESTS=1: %+v", c)
	}
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "chromium"), []byte("#!/bin/sh\n"))
	os.Chmod(filepath.Join(bin, "chromium"), 0o755)
	t.Setenv("PATH", bin)
	if c := Browser(""); c.Status != OK || c.Detail != "chromium at "+filepath.Join(bin, "chromium") {
		t.Errorf("chromium on PATH: %+v", c)
	}
}
