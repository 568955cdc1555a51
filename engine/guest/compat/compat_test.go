package compat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A declaration the package already makes for wasip1 is left out of the
// generic shim, so one shim fits every version; imports it no longer needs
// go too.
func TestMissingOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.go"), "package unix\n\nconst PROT_READ = 1\n\nfunc Flock(fd, how int) error { return nil }\n")
	write(t, filepath.Join(dir, "b_linux.go"), "package unix\n\nconst MAP_SHARED = 1\n") // not built for wasip1
	src := []byte(`package unix

import (
	"errors"
	"syscall"
)

const (
	PROT_READ  = syscall.PROT_READ
	MAP_SHARED = syscall.MAP_SHARED
)

func Flock(fd int, how int) error { return errors.New("x") }

func Munmap(b []byte) error { return syscall.Munmap(b) }
`)
	out, err := missingOnly(src, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, want := range []string{"MAP_SHARED = syscall.MAP_SHARED", "func Munmap", `"syscall"`} {
		if !strings.Contains(got, want) {
			t.Errorf("shim lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"PROT_READ", "func Flock", `"errors"`} {
		if strings.Contains(got, gone) {
			t.Errorf("shim still has %q, which the package declares or nothing uses:\n%s", gone, got)
		}
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "out.go", out, 0); err != nil {
		t.Errorf("filtered shim does not parse: %v\n%s", err, out)
	}
}

// The generic syscall shim declares nothing this Go's syscall package
// already has for wasip1, and keeps Mmap and Flock.
func TestSyscallShimFitsThisGo(t *testing.T) {
	out, err := missingOnly(Template("shims/generic/syscall_wasip1.go.in"), filepath.Join(runtime.GOROOT(), "src", "syscall"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"func Mmap(", "func Flock(", "LOCK_NB", "MAP_SHARED", "//go:wasmimport seedfall mmap", "//go:linkname seedfallSleep time.Sleep"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("syscall shim lacks %q", want)
		}
	}
	if strings.Contains(string(out), "EAGAIN      Errno") {
		t.Errorf("syscall shim redeclares EAGAIN")
	}
}

// A shimmed module at a version the shim was not written for is refused
// with a message that names it and says what to do.
func TestUnknownVersion(t *testing.T) {
	defer func(saved []*Shim) { shims = saved }(shims)
	register(&Shim{Module: "example.com/store", Versions: []string{"v1.0.0", "v1.1.0"},
		Files: func(Module) (map[string][]byte, error) {
			return map[string][]byte{"x_wasm.go": []byte("package store\n")}, nil
		}})
	pkgs := func(v string) []Package {
		return []Package{{ImportPath: "example.com/store", Dir: "/m", Module: &Module{Path: "example.com/store", Version: v, Dir: "/m"}}}
	}
	_, err := Overlay(runtime.GOROOT(), pkgs("v1.2.0"), true)
	if err == nil {
		t.Fatal("v1.2.0 was accepted")
	}
	want := "compat_overlay: example.com/store v1.2.0 has no shim in this seedfall (it knows v1.0.0, v1.1.0); require a known version in go.mod (go get example.com/store@v1.1.0), or see docs/compat.md for adding a shim"
	if err.Error() != want {
		t.Errorf("error:\n%s\nwant:\n%s", err, want)
	}
	f, err := Overlay(runtime.GOROOT(), pkgs("v1.1.0"), true)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Modules) != 1 || f.Modules[0].Module.Version != "v1.1.0" || string(f.Modules[0].Files["x_wasm.go"]) != "package store\n" {
		t.Errorf("patches = %+v", f.Modules)
	}
	// Without compat_overlay a shim that is not Always stays out, whatever
	// the version.
	if f, err := Overlay(runtime.GOROOT(), pkgs("v1.2.0"), false); err != nil || len(f.Modules) != 0 {
		t.Errorf("without compat_overlay: %+v, %v", f, err)
	}
}

// The bolt shim derives bolt_wasm.go from the amd64 file, with a map size
// wasm32 memory can hold, and routes boltdb/bolt's raw madvise through the
// generic shim.
func TestBoltFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "bolt_amd64.go"), "package bolt\n\nconst maxMapSize = 0xFFFFFFFFFFFF // 256TB\n\nconst maxAllocSize = 0x7FFFFFFF\n")
	write(t, filepath.Join(dir, "bolt_unix.go"), "package bolt\n\nfunc madvise(b []byte, advice int) (err error) {\n\t_, _, e1 := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))\n\tif e1 != 0 {\n\t\terr = e1\n\t}\n\treturn\n}\n")
	files, err := boltFiles(Module{Path: "github.com/boltdb/bolt", Version: "v1.3.1", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(files["bolt_wasm.go"]); !strings.Contains(got, "const maxMapSize = 0x7FFFFFFF") || !strings.Contains(got, "maxAllocSize = 0x7FFFFFFF") {
		t.Errorf("bolt_wasm.go:\n%s", got)
	}
	if got := string(files["bolt_unix.go"]); !strings.Contains(got, "return syscall.Madvise(b, advice)") || strings.Contains(got, "SYS_MADVISE") {
		t.Errorf("bolt_unix.go:\n%s", got)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "bolt_unix.go", files["bolt_unix.go"], 0); err != nil {
		t.Error(err)
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// docs/compat.md shows the message for a bbolt version no shim knows.
func TestDocShowsVersionError(t *testing.T) {
	pkgs := []Package{{ImportPath: "go.etcd.io/bbolt", Dir: "/m", Module: &Module{Path: "go.etcd.io/bbolt", Version: "v1.3.12", Dir: "/m"}}}
	_, err := Overlay(runtime.GOROOT(), pkgs, true)
	if err == nil {
		t.Fatal("bbolt v1.3.12 was accepted")
	}
	doc, rerr := os.ReadFile("../../../docs/compat.md")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !strings.Contains(string(doc), `build node "server" (./server): `+err.Error()+"\n") {
		t.Errorf("docs/compat.md does not show the message as it is now:\n%s", err)
	}
}

// docs/antithesis.md shows the message for an SDK version no shim knows,
// which does not blame compat_overlay: the bridge applies without it.
func TestDocShowsAlwaysVersionError(t *testing.T) {
	pkgs := []Package{{ImportPath: AntithesisSDK + "/assert", Dir: "/m/assert", Module: &Module{Path: AntithesisSDK, Version: "v0.3.8", Dir: "/m"}}}
	_, err := Overlay(runtime.GOROOT(), pkgs, false)
	if err == nil {
		t.Fatal("SDK v0.3.8 was accepted")
	}
	doc, rerr := os.ReadFile("../../../docs/antithesis.md")
	if rerr != nil {
		t.Fatal(rerr)
	}
	if strings.Contains(err.Error(), "compat_overlay") || !strings.Contains(string(doc), `build node "c" (./x): `+err.Error()+"\n") {
		t.Errorf("docs/antithesis.md does not show the message as it is now:\n%s", err)
	}
}

// docs/compat.md lists every shim with exactly the versions it knows.
func TestDocListsEveryShim(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/compat.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Shims() {
		var row string
		for _, line := range strings.Split(string(doc), "\n") {
			if strings.HasPrefix(line, "| `"+s.Module+"` |") {
				row = line
			}
		}
		if row == "" {
			t.Errorf("docs/compat.md has no row for %s", s.Module)
			continue
		}
		if got, want := strings.TrimSpace(strings.Split(row, "|")[2]), strings.Join(s.Versions, ", "); got != want {
			t.Errorf("docs/compat.md lists %s at %s; the shim knows %s", s.Module, got, want)
		}
	}
}

// Every constant the generic shims add has Linux's value, as
// golang.org/x/sys/unix gives it on this (linux) machine.
func TestGenericShimConstantsAreLinuxValues(t *testing.T) {
	want := map[string]int{
		"PROT_NONE": unix.PROT_NONE, "PROT_READ": unix.PROT_READ, "PROT_WRITE": unix.PROT_WRITE, "PROT_EXEC": unix.PROT_EXEC,
		"MAP_SHARED": unix.MAP_SHARED, "MAP_PRIVATE": unix.MAP_PRIVATE, "MAP_FIXED": unix.MAP_FIXED, "MAP_ANON": unix.MAP_ANON,
		"MAP_ANONYMOUS": unix.MAP_ANONYMOUS, "MAP_NORESERVE": unix.MAP_NORESERVE, "MAP_POPULATE": unix.MAP_POPULATE, "MAP_LOCKED": unix.MAP_LOCKED,
		"MS_ASYNC": unix.MS_ASYNC, "MS_INVALIDATE": unix.MS_INVALIDATE, "MS_SYNC": unix.MS_SYNC,
		"LOCK_SH": unix.LOCK_SH, "LOCK_EX": unix.LOCK_EX, "LOCK_NB": unix.LOCK_NB, "LOCK_UN": unix.LOCK_UN,
		"MADV_NORMAL": unix.MADV_NORMAL, "MADV_RANDOM": unix.MADV_RANDOM, "MADV_SEQUENTIAL": unix.MADV_SEQUENTIAL,
		"MADV_WILLNEED": unix.MADV_WILLNEED, "MADV_DONTNEED": unix.MADV_DONTNEED, "MADV_FREE": unix.MADV_FREE,
		"MADV_REMOVE": unix.MADV_REMOVE, "MADV_DONTFORK": unix.MADV_DONTFORK, "MADV_DOFORK": unix.MADV_DOFORK,
		"MADV_HUGEPAGE": unix.MADV_HUGEPAGE, "MADV_NOHUGEPAGE": unix.MADV_NOHUGEPAGE,
		"SOL_SOCKET": unix.SOL_SOCKET, "SCM_RIGHTS": unix.SCM_RIGHTS,
		"MCL_CURRENT": unix.MCL_CURRENT, "MCL_FUTURE": unix.MCL_FUTURE, "MCL_ONFAULT": unix.MCL_ONFAULT,
		"SYS_MMAP": unix.SYS_MMAP, "SYS_MPROTECT": unix.SYS_MPROTECT, "SYS_MUNMAP": unix.SYS_MUNMAP, "SYS_MSYNC": unix.SYS_MSYNC,
		"SYS_MADVISE": unix.SYS_MADVISE, "SYS_FLOCK": unix.SYS_FLOCK, "SYS_FSYNC": unix.SYS_FSYNC, "SYS_FDATASYNC": unix.SYS_FDATASYNC,
		"SYS_MLOCK": unix.SYS_MLOCK, "SYS_MUNLOCK": unix.SYS_MUNLOCK, "SYS_FADVISE64": unix.SYS_FADVISE64,
		"SYS_SYNC_FILE_RANGE": unix.SYS_SYNC_FILE_RANGE, "SYS_FALLOCATE": unix.SYS_FALLOCATE,
		"RLIMIT_CPU": unix.RLIMIT_CPU, "RLIMIT_FSIZE": unix.RLIMIT_FSIZE, "RLIMIT_DATA": unix.RLIMIT_DATA,
		"RLIMIT_STACK": unix.RLIMIT_STACK, "RLIMIT_CORE": unix.RLIMIT_CORE, "RLIMIT_AS": unix.RLIMIT_AS,
	}
	file, err := parser.ParseFile(token.NewFileSet(), "syscall.go", Template("shims/generic/syscall_wasip1.go.in"), 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					continue // EWOULDBLOCK = EAGAIN
				}
				v, err := strconv.ParseInt(lit.Value, 0, 64)
				if err != nil {
					t.Fatal(err)
				}
				w, known := want[n.Name]
				if !known {
					t.Errorf("%s = %s: add it to this test with Linux's value", n.Name, lit.Value)
				} else if int(v) != w {
					t.Errorf("%s = %#x, Linux has %#x", n.Name, v, w)
				}
				seen[n.Name] = true
			}
		}
	}
	for n := range want {
		if !seen[n] {
			t.Errorf("the syscall shim lacks %s", n)
		}
	}
	// The x/sys/unix shim names each of them after syscall's.
	unixShim := string(Template("shims/generic/unix_wasip1.go.in"))
	for n := range want {
		if !strings.Contains(unixShim, n+" = syscall."+n) && !regexp.MustCompile(`\b`+n+`\s+= syscall\.`+n+`\b`).MatchString(unixShim) {
			t.Errorf("the x/sys/unix shim does not define %s as syscall.%s", n, n)
		}
	}
}

// UnixRights lays out its control message as Linux does: the shim's
// function, run natively, against x/sys/unix's.
func TestUnixRightsLayout(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "syscall.go", Template("shims/generic/syscall_wasip1.go.in"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn bytes.Buffer
	for _, d := range file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Name.Name == "UnixRights" {
			printer.Fprint(&fn, fset, f)
		}
	}
	if fn.Len() == 0 {
		t.Fatal("the syscall shim has no UnixRights")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module rights\n\ngo 1.21\n")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nimport \"fmt\"\n\nconst SOL_SOCKET, SCM_RIGHTS = 0x1, 0x1\n\n"+
		fn.String()+"\n\nfunc main() { fmt.Print(UnixRights(3, 7)) }\n")
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if want := fmt.Sprint(unix.UnixRights(3, 7)); string(out) != want {
		t.Errorf("the shim lays out UnixRights(3, 7) as %s, Linux as %s", out, want)
	}
}

// Under compat_overlay, syscall.Syscall and its kin answer the calls that
// have a meaning here (seedfallSyscall) instead of failing with ENOSYS:
// the overlay replaces their four bodies in this Go's syscall_wasip1.go.
func TestRawSyscallsFitThisGo(t *testing.T) {
	goroot := runtime.GOROOT()
	got, err := rawSyscalls(filepath.Join(goroot, "src", "syscall"))
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatal("this Go's syscall_wasip1.go does not have the ENOSYS bodies the overlay replaces")
	}
	if n := strings.Count(string(got), "return seedfallSyscall(trap, a1, a2, a3) // seedfall compat_overlay"); n != 4 {
		t.Errorf("%d bodies replaced, want 4 (Syscall, Syscall6, RawSyscall, RawSyscall6)", n)
	}
	if !strings.Contains(string(got), "return seedfallGetrlimit(which, lim) // seedfall compat_overlay") {
		t.Error("Getrlimit's body is not replaced")
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "syscall_wasip1.go", got, 0); err != nil {
		t.Errorf("the patched file does not parse: %v", err)
	}
}
