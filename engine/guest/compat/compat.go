package compat

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Module is one module of a build's dependency graph, as `go list -m`
// reports it: Dir is where its files are (the module cache, or the
// directory of a local replacement, for which Version is "").
type Module struct {
	Path, Version, Dir string
}

// Shim replaces or adds files of one module.
type Shim struct {
	// Module is the module path ("go.etcd.io/bbolt").
	Module string
	// Versions are the exact versions the shim was written against.
	Versions []string
	// Always applies the shim whenever the module is in the build graph,
	// without compat_overlay (the Antithesis SDK bridge: a program written
	// against the SDK must never pass because its assertions went nowhere).
	Always bool
	// What says in a few words what the shim does, for docs and messages.
	What string
	// Files returns the files to overlay, keyed by module-relative slash
	// path ("internal/common/bolt_wasm.go"): an existing file is replaced,
	// a new one is added to its package. m.Dir holds the module's files.
	Files func(m Module) (map[string][]byte, error)
}

var shims []*Shim

// register adds a library shim; each shim file calls it from init.
func register(s *Shim) { shims = append(shims, s) }

// Shims returns every library shim, sorted by module path.
func Shims() []*Shim {
	out := append([]*Shim(nil), shims...)
	sort.Slice(out, func(i, j int) bool { return out[i].Module < out[j].Module })
	return out
}

// Wanted reports whether a module whose go.mod is gomod may need the
// overlay even without compat_overlay: it mentions a module of an Always
// shim. Module files list every dependency since Go 1.17, so this is a
// cheap test that avoids asking the go command for the graph.
func Wanted(gomod []byte) bool {
	for _, s := range shims {
		if s.Always && strings.Contains(string(gomod), s.Module+" ") {
			return true
		}
	}
	return false
}

// Files is what compat_overlay changes in one build.
type Files struct {
	// GOROOT files, keyed by GOROOT-relative slash path ("src/syscall/x.go"),
	// for go build -overlay.
	GOROOT map[string][]byte
	// Modules to build from a patched copy, in module path order. The go
	// command refuses overlays of files in the module cache, so the builder
	// copies each module, applies Files (module-relative slash paths) and
	// puts the copy into the build's workspace in place of the original.
	Modules []Patch
}

// Patch is the set of files a build replaces or adds in one module.
type Patch struct {
	Module Module
	Files  map[string][]byte
}

// VersionError is a shimmed module at a version its shim was not written
// for.
type VersionError struct {
	Module, Version string
	Known           []string
	// Always is set for a shim that applies without compat_overlay, which
	// the message then does not blame.
	Always bool
}

func (e *VersionError) Error() string {
	latest := e.Known[len(e.Known)-1]
	head := "compat_overlay: "
	if e.Always {
		head = "seedfall bridges this module in every build: "
	}
	return fmt.Sprintf("%s%s %s has no shim in this seedfall (it knows %s); "+
		"require a known version in go.mod (go get %s@%s), or see docs/compat.md for adding a shim",
		head, e.Module, e.Version, strings.Join(e.Known, ", "), e.Module, latest)
}

func known(s *Shim, version string) bool {
	for _, v := range s.Versions {
		if v == version {
			return true
		}
	}
	return false
}

// Needing lists, as "module version", the modules of pkgs that a shim
// applied only under compat_overlay covers: a failed build without it
// names them.
func Needing(pkgs []Package) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pkgs {
		m := p.Module
		if m == nil || seen[m.Path] {
			continue
		}
		seen[m.Path] = true
		for _, s := range shims {
			if s.Module == m.Path && !s.Always {
				out = append(out, m.Path+" "+m.Version)
			}
		}
	}
	sort.Strings(out)
	return out
}

// genericNames are what the generic shim adds, as a compiler names them
// when they are missing.
var genericNames = regexp.MustCompile(`undefined: (syscall|unix)\.(Mmap|Munmap|Msync|Mprotect|Madvise|Mlock|Munlock|Flock|Fdatasync|PROT_|MAP_|MS_|LOCK_|MADV_)`)

// GenericMissing reports whether compiler output complains of a name the
// generic shim adds.
func GenericMissing(output string) bool { return genericNames.MatchString(output) }
