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

// goleveldb keeps its file storage in a file tagged for darwin, freebsd,
// linux... but not wasip1, so a program on it fails to build for wasip1
// (undefined: newFileLock). Under compat_overlay the tag rule takes that
// file as for linux, and the program builds, and runs: it opens a DB,
// writes and reads a key.
func TestTagRuleBuildsGoleveldb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds goleveldb for wasip1")
	}
	dir, err := filepath.Abs("testdata/tagrule")
	if err != nil {
		t.Fatal(err)
	}
	// The module must be in the module cache already (.ci/run downloads
	// it): a test does not reach the network.
	cmd := exec.Command("go", "list", "-m", "-json", "github.com/syndtr/goleveldb")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), `"Dir"`) {
		t.Skipf("goleveldb v1.0.0 is not in the module cache (cd %s && go mod download): %v %s", dir, err, out)
	}
	b := &Builder{CacheDir: t.TempDir()}
	_, err = b.Build(context.Background(), Request{Node: "db", Pkg: dir})
	if err == nil || !strings.Contains(err.Error(), "undefined: newFileLock") {
		t.Fatalf("without compat_overlay: %v, want undefined: newFileLock", err)
	}
	var notes []string
	b.Note = func(s string) { notes = append(notes, s) }
	art, err := b.Build(context.Background(), Request{Node: "db", Pkg: dir, Compat: true})
	if err != nil {
		t.Fatalf("with compat_overlay: %v", err)
	}
	// docs/compat.md shows this note.
	want := `seedfall: node "db" builds for wasip1 with files its dependencies wrote for linux (the tag rule, docs/compat.md): github.com/syndtr/goleveldb@v1.0.0/leveldb/storage/file_storage_unix.go`
	if !slices.Contains(notes, want) {
		t.Errorf("the notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), want)
	}
	doc, err := os.ReadFile("../../docs/compat.md")
	if err != nil || !strings.Contains(string(doc), "\n"+want+"\n") {
		t.Errorf("docs/compat.md does not show the note (%v)", err)
	}
	if len(art.Wasm) == 0 {
		t.Fatal("no module")
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
