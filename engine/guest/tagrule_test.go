package guest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Three libraries that needed a fork to build for wasip1 build with none
// under compat_overlay: goleveldb keeps its file storage in a file tagged
// for darwin, freebsd, linux... but not wasip1 (undefined: newFileLock),
// go-sockaddr its routes in route_info_linux.go with a fallback tagged
// nacl || plan9 || js (undefined: NewRouteInfo): the tag rule takes those
// files as for linux. pogreb calls syscall.Syscall(SYS_MADVISE, ...), which
// compat_overlay's raw system calls answer. (prometheus's tsdb, which
// needs both, builds too, but its build takes a minute: not here.)
//
// It builds three libraries from nothing (half a minute cold): the slow
// tier runs it (SEEDFALL_SLOW=1, .ci/run); TestTagRuleTakesLinuxFiles
// shows the rule in the default tier.
func TestNoForksNeeded(t *testing.T) {
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("builds three libraries for wasip1; run with SEEDFALL_SLOW=1")
	}
	dir, err := filepath.Abs("testdata/tagrule")
	if err != nil {
		t.Fatal(err)
	}
	// The modules must be in the module cache already (.ci/run downloads
	// them): a test does not reach the network.
	cmd := exec.Command("go", "mod", "verify")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("the libraries are not in the module cache (cd %s && go mod download): %v %s", dir, err, out)
	}
	b := &Builder{CacheDir: t.TempDir()}
	_, err = b.Build(context.Background(), Request{Node: "db", Pkg: filepath.Join(dir, "leveldb")})
	if err == nil || !strings.Contains(err.Error(), "undefined: newFileLock") {
		t.Fatalf("goleveldb without compat_overlay: %v, want undefined: newFileLock", err)
	}
	for _, tc := range []struct{ pkg, note string }{
		// docs/compat.md shows the first note.
		{"leveldb", `seedfall: node "db" builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): github.com/syndtr/goleveldb@v1.0.0/leveldb/storage/file_storage_unix.go`},
		{"sockaddr", `seedfall: node "db" builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): github.com/hashicorp/go-sockaddr@v1.0.7/route_info_linux.go`},
		{"pogreb", ""},
	} {
		var notes []string
		b.Note = func(s string) { notes = append(notes, s) }
		art, err := b.Build(context.Background(), Request{Node: "db", Pkg: filepath.Join(dir, tc.pkg), Compat: true})
		if err != nil {
			t.Fatalf("%s with compat_overlay: %v", tc.pkg, err)
		}
		if len(art.Wasm) == 0 {
			t.Fatalf("%s: no module", tc.pkg)
		}
		if tc.note != "" && !slices.Contains(notes, tc.note) {
			t.Errorf("%s: the notes:\n%s\nwant:\n%s", tc.pkg, strings.Join(notes, "\n"), tc.note)
		}
		if tc.note == "" && len(notes) > 0 {
			t.Errorf("%s: notes %q, want none (no file taken)", tc.pkg, notes)
		}
	}
	doc, err := os.ReadFile("../../docs/compat.md")
	if want := `seedfall: node "db" builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): github.com/syndtr/goleveldb@v1.0.0/leveldb/storage/file_storage_unix.go`; err != nil || !strings.Contains(string(doc), "\n"+want+"\n") {
		t.Errorf("docs/compat.md does not show the note (%v)", err)
	}
}

func TestBuildsAsLinuxWasm(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"storage_unix.go", "// +build darwin dragonfly freebsd linux netbsd openbsd\n\npackage s\n", true},
		{"lock_unix.go", "//go:build unix\n\npackage s\n", true},
		{"route_other.go", "//go:build nacl || plan9 || js\n\npackage s\n", false},
		{"mmap_linux.go", "package s\n", true},
		{"mmap_darwin.go", "package s\n", false},
		{"asm_amd64.go", "package s\n", false},
		{"x_linux_amd64.go", "package s\n", false},
		{"x_wasm.go", "package s\n", true},
		{"cgo_unix.go", "//go:build unix\n\npackage s\n\nimport \"C\"\n", false},
		{"new.go", "//go:build go1.30\n\npackage s\n", false},
		{"both.go", "//go:build linux && !wasm\n\npackage s\n", false},
	} {
		if got := buildsAsLinuxWasm(tc.name, []byte(tc.src)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The tag rule on a dependency of the user's (a local replacement, so no
// network): a file for linux and darwin that defines what the package
// lacks for wasip1 is taken; a name only a darwin file defines is not, and
// the error names that file and its constraint.
func TestTagRuleTakesLinuxFiles(t *testing.T) {
	files := map[string]string{
		"go.mod":           "module example.com/app\n\ngo 1.21\n\nrequire example.com/dep v0.0.0\n\nreplace example.com/dep => ./dep\n",
		"dep/go.mod":       "module example.com/dep\n\ngo 1.21\n",
		"dep/dep.go":       "package dep\n\nfunc Lock() error { return newLock() }\n",
		"dep/lock_unix.go": "//go:build linux || darwin\n\npackage dep\n\nimport \"os\"\n\nfunc newLock() error { _, err := os.Stat(\".\"); return err }\n",
		"main.go":          "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() { fmt.Println(dep.Lock()) }\n",
	}
	dir := newModule(t, files)
	b := &Builder{CacheDir: t.TempDir()}
	var notes []string
	b.Note = func(s string) { notes = append(notes, s) }
	if _, err := b.Build(context.Background(), Request{Node: "n", Pkg: dir, Compat: true}); err != nil {
		t.Fatalf("with the tag rule: %v", err)
	}
	if want := `seedfall: node "n" builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): example.com/dep/lock_unix.go`; !slices.Contains(notes, want) {
		t.Errorf("the notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), want)
	}

	files["dep/dep.go"] = "package dep\n\nfunc Lock() error { return newLock() }\n\nfunc Unlock() error { return release() }\n"
	files["dep/release_darwin.go"] = "package dep\n\nfunc release() error { return nil }\n"
	files["main.go"] = "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/dep\"\n)\n\nfunc main() { fmt.Println(dep.Lock(), dep.Unlock()) }\n"
	dir = newModule(t, files)
	_, err := b.Build(context.Background(), Request{Node: "n", Pkg: dir, Compat: true})
	if err == nil {
		t.Fatal("built without release")
	}
	for _, want := range []string{"undefined: release", "what is undefined is defined in example.com/dep/release_darwin.go, which would not build for linux either"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q:\n%v", want, err)
		}
	}
}
