package compat

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/build"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/seedfall/seedfall/engine/guest/fsyncoverlay"
)

//go:embed shims
var shimFS embed.FS

// sourceFS is the package's own code: what the shims do to a module is
// written there as well as in the templates.
//
//go:embed *.go
var sourceFS embed.FS

// Template returns an embedded shim file, "shims/<dir>/<name>.go.in".
func Template(name string) []byte {
	b, err := shimFS.ReadFile(name)
	if err != nil {
		panic("compat: missing embedded shim " + name) // a build of seedfall without its shims
	}
	return b
}

// Hash identifies every shim this seedfall applies, for the build cache key:
// a changed template, or changed code that derives a shim's files, builds
// anew.
var Hash = sync.OnceValue(func() string {
	h := sha256.New()
	for _, fsys := range []embed.FS{shimFS, sourceFS} {
		fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, "_test.go") {
				b, _ := fsys.ReadFile(p)
				fmt.Fprintf(h, "%s %d\n", p, len(b))
				h.Write(b)
			}
			return nil
		})
	}
	h.Write(fsyncoverlay.Sources()) // Msync and Fdatasync park through it
	return hex.EncodeToString(h.Sum(nil))
})

// Package is one package of a build, as `go list -deps` reports it.
type Package struct {
	ImportPath string
	Dir        string
	Module     *Module // nil for the standard library
}

// Overlay computes the files that compat_overlay (on) and the shims that
// apply without it add to a build of pkgs, the packages a main package
// depends on. goroot is the Go installation that builds them.
func Overlay(goroot string, pkgs []Package, on bool) (*Files, error) {
	f := &Files{GOROOT: map[string][]byte{}}
	mods := map[string]*Module{}
	patch := func(m *Module, rel string, b []byte) {
		if n := len(f.Modules); n == 0 || f.Modules[n-1].Module.Path != m.Path {
			f.Modules = append(f.Modules, Patch{Module: *m, Files: map[string][]byte{}})
		}
		f.Modules[len(f.Modules)-1].Files[rel] = b
	}
	var unix *Package
	for _, p := range pkgs {
		if p.Module != nil {
			mods[p.Module.Path] = p.Module
		}
		if !on {
			continue
		}
		switch p.ImportPath {
		case "syscall":
			src, err := missingOnly(Template("shims/generic/syscall_wasip1.go.in"), p.Dir)
			if err != nil {
				return nil, fmt.Errorf("compat_overlay: package syscall: %v", err)
			}
			f.GOROOT["src/syscall/seedfall_compat_wasip1.go"] = src
			if raw, err := rawSyscalls(p.Dir); err != nil {
				return nil, fmt.Errorf("compat_overlay: package syscall: %v", err)
			} else if raw != nil {
				f.GOROOT["src/syscall/syscall_wasip1.go"] = raw
			}
			// Its Msync and Fdatasync park through the fsync overlay,
			// which every build from source has: add it here too, for
			// builds that ask for compat_overlay alone.
			sync, err := fsyncoverlay.Files(goroot)
			if err != nil {
				return nil, err
			}
			maps.Copy(f.GOROOT, sync)
		case "golang.org/x/sys/unix":
			unix = &p
		}
	}
	// Library shims first, in module order, then x/sys, whose module path
	// sorts after every shimmed one.
	for _, s := range Shims() {
		m := mods[s.Module]
		if m == nil || !(on || s.Always) {
			continue
		}
		if m.Version == "" {
			// A local replacement is the user's own copy: they adapt it.
			continue
		}
		if !known(s, m.Version) {
			return nil, &VersionError{Module: m.Path, Version: m.Version, Known: s.Versions, Always: s.Always}
		}
		files, err := s.Files(*m)
		if err != nil {
			return nil, fmt.Errorf("compat_overlay: shim for %s %s: %v", m.Path, m.Version, err)
		}
		for _, rel := range sortedKeys(files) {
			if !validRel(rel) {
				return nil, fmt.Errorf("compat_overlay: shim for %s: bad path %q", m.Path, rel)
			}
			patch(m, rel, files[rel])
		}
	}
	if unix != nil && unix.Module != nil && unix.Module.Version != "" {
		src, err := missingOnly(Template("shims/generic/unix_wasip1.go.in"), unix.Dir)
		if err != nil {
			return nil, fmt.Errorf("compat_overlay: package golang.org/x/sys/unix: %v", err)
		}
		patch(unix.Module, "unix/seedfall_compat_wasip1.go", src)
	}
	sort.Slice(f.Modules, func(i, j int) bool { return f.Modules[i].Module.Path < f.Modules[j].Module.Path })
	return f, nil
}

func validRel(p string) bool {
	return p != "" && path.Clean(p) == p && filepath.IsLocal(filepath.FromSlash(p))
}

// wasip1 selects a package's files as a GOOS=wasip1 build does.
func wasip1() build.Context {
	c := build.Default
	c.GOOS, c.GOARCH, c.CgoEnabled = "wasip1", "wasm", false
	return c
}

// missingOnly returns the shim template src without the top-level
// declarations the package in dir already makes for wasip1, so that one
// generic shim fits every version of a package.
func missingOnly(src []byte, dir string) ([]byte, error) {
	have, err := declared(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "shim.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var decls []ast.Decl
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && have[d.Name.Name] {
				continue
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				break
			}
			var specs []ast.Spec
			for _, s := range d.Specs {
				if !specDeclared(s, have) {
					specs = append(specs, s)
				}
			}
			if len(specs) == 0 {
				continue
			}
			d.Specs = specs
		}
		decls = append(decls, d)
	}
	file.Decls = decls
	dropUnusedImports(file)
	var out bytes.Buffer
	if err := format.Node(&out, fset, file); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func specDeclared(s ast.Spec, have map[string]bool) bool {
	switch s := s.(type) {
	case *ast.ValueSpec:
		for _, n := range s.Names {
			if have[n.Name] {
				return true
			}
		}
	case *ast.TypeSpec:
		return have[s.Name.Name]
	}
	return false
}

// declared lists the top-level names the package in dir declares in the
// files a wasip1 build compiles.
func declared(dir string) (map[string]bool, error) {
	ctx := wasip1()
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		if _, ok := err.(*build.NoGoError); !ok {
			return nil, err
		}
	}
	have := map[string]bool{}
	names := append([]string(nil), pkg.GoFiles...)
	sort.Strings(names)
	fset := token.NewFileSet()
	for _, name := range names {
		file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					have[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							have[n.Name] = true
						}
					case *ast.TypeSpec:
						have[s.Name.Name] = true
					}
				}
			}
		}
	}
	return have, nil
}

// dropUnusedImports removes the imports that the declarations left after
// filtering no longer use. "unsafe" stays, blank, for go:linkname.
func dropUnusedImports(file *ast.File) {
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var specs []ast.Spec
		for _, s := range g.Specs {
			is := s.(*ast.ImportSpec)
			name := path.Base(is.Path.Value[1 : len(is.Path.Value)-1])
			if is.Name != nil {
				name = is.Name.Name
			}
			switch {
			case used[name] || name == "_":
			case name == "unsafe":
				is.Name = ast.NewIdent("_")
			default:
				continue
			}
			specs = append(specs, s)
		}
		g.Specs = specs
	}
	file.Imports = nil
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// rawSyscalls is package syscall's syscall_wasip1.go (in dir) with the
// bodies of Syscall, Syscall6, RawSyscall, RawSyscall6 and Getrlimit,
// which fail with ENOSYS, calling seedfallSyscall and seedfallGetrlimit
// instead (the generic shim), or nil when the file does not have those
// bodies (another Go release): the calls then fail with ENOSYS, as without
// the overlay.
func rawSyscalls(dir string) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(dir, "syscall_wasip1.go"))
	if err != nil {
		return nil, err
	}
	out := string(src)
	for _, f := range []struct{ sig, call string }{
		{"func Syscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err Errno) {", "seedfallSyscall(trap, a1, a2, a3)"},
		{"func Syscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err Errno) {", "seedfallSyscall(trap, a1, a2, a3)"},
		{"func RawSyscall(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err Errno) {", "seedfallSyscall(trap, a1, a2, a3)"},
		{"func RawSyscall6(trap, a1, a2, a3, a4, a5, a6 uintptr) (r1, r2 uintptr, err Errno) {", "seedfallSyscall(trap, a1, a2, a3)"},
		{"func Getrlimit(which int, lim *Rlimit) error {", "seedfallGetrlimit(which, lim)"},
	} {
		fails := "0, 0, ENOSYS"
		if strings.HasPrefix(f.sig, "func Getrlimit") {
			fails = "ENOSYS"
		}
		old := f.sig + "\n\treturn " + fails + "\n}"
		if strings.Count(out, old) != 1 {
			return nil, nil
		}
		out = strings.Replace(out, old, f.sig+"\n\treturn "+f.call+" // seedfall compat_overlay\n}", 1)
	}
	return []byte(out), nil
}
