package compat

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// modCache returns where the go command keeps module files.
func modCache() string {
	if d := os.Getenv("GOMODCACHE"); d != "" {
		return d
	}
	return filepath.Join(build.Default.GOPATH, "pkg", "mod")
}

// copyPackages copies the Go files of the named package directories of a
// module into dst.
func copyPackages(t *testing.T, src, dst string, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		ents, err := os.ReadDir(filepath.Join(src, d))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dst, d), 0o755)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".go") {
				b, err := os.ReadFile(filepath.Join(src, d, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(dst, d, e.Name()), string(b))
			}
		}
	}
}

// For every pebble version the shims know and the module cache holds, the
// patched vfs, rawalloc (and v1's manual) packages select for wasip1
// exactly the shim's files in place of the generic lock file, and every
// file parses.
func TestPebbleShimSelectsItsFilesForWasip1(t *testing.T) {
	tried := 0
	for _, s := range Shims() {
		if !strings.HasPrefix(s.Module, "github.com/cockroachdb/pebble") {
			continue
		}
		for _, v := range s.Versions {
			dir := filepath.Join(modCache(), s.Module+"@"+v)
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			tried++
			t.Run(s.Module+"@"+v, func(t *testing.T) {
				files, err := s.Files(Module{Path: s.Module, Version: v, Dir: dir})
				if err != nil {
					t.Fatal(err)
				}
				tmp := t.TempDir()
				pkgs := []string{"vfs", "internal/rawalloc"}
				if _, err := os.Stat(filepath.Join(dir, "internal/manual/manual_64bit.go")); err == nil {
					pkgs = append(pkgs, "internal/manual")
				}
				copyPackages(t, dir, tmp, pkgs...)
				for rel, b := range files {
					write(t, filepath.Join(tmp, filepath.FromSlash(rel)), string(b))
				}
				ctx := wasip1()
				for _, pkg := range pkgs {
					p, err := ctx.ImportDir(filepath.Join(tmp, pkg), 0)
					if err != nil {
						t.Fatalf("%s: %v", pkg, err)
					}
					for rel := range files {
						if filepath.Dir(rel) == pkg && !slices.Contains(p.GoFiles, filepath.Base(rel)) && !strings.HasSuffix(rel, "_generic.go") {
							t.Errorf("%s is not built for wasip1 (files %v)", rel, p.GoFiles)
						}
					}
					if pkg == "vfs" && slices.Contains(p.GoFiles, "file_lock_generic.go") {
						t.Errorf("vfs/file_lock_generic.go is still built for wasip1")
					}
					if _, err := declared(filepath.Join(tmp, pkg)); err != nil {
						t.Errorf("%s does not parse: %v", pkg, err)
					}
				}
				have, _ := declared(filepath.Join(tmp, "vfs"))
				for _, name := range []string{"wrapOSFileImpl", "errNotEmpty", "IsNoSpaceError", "lockedFiles"} {
					if !have[name] {
						t.Errorf("vfs declares no %s for wasip1", name)
					}
				}
			})
		}
	}
	if tried == 0 {
		t.Skip("no shimmed pebble version in the module cache")
	}
}

// A pebble whose files the shim does not expect is refused with a reason,
// never patched blindly.
func TestPebbleShimRefusesUnexpectedFiles(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "vfs"), 0o755)
	write(t, filepath.Join(dir, "vfs/file_lock_generic.go"), "//go:build !windows\n\npackage vfs\n")
	if _, err := pebbleFiles(Module{Path: "github.com/cockroachdb/pebble", Version: "v1.1.5", Dir: dir}, 1); err == nil ||
		!strings.Contains(err.Error(), "build constraint") {
		t.Errorf("changed constraint: err = %v, want one about the build constraint", err)
	}
	write(t, filepath.Join(dir, "vfs/default_wasip1.go"), "package vfs\n")
	if _, err := pebbleFiles(Module{Path: "github.com/cockroachdb/pebble", Version: "v1.1.5", Dir: dir}, 1); err == nil ||
		!strings.Contains(err.Error(), "builds for wasip1 on its own") {
		t.Errorf("existing wasip1 file: err = %v, want one saying the version builds on its own", err)
	}
}
