package guest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine/guest/compat"
)

// The tag rule. Many libraries keep what differs between systems in files
// whose build constraints name the systems they were written for: a
// file_storage_unix.go tagged darwin, freebsd, linux..., a fallback tagged
// nacl || plan9 || js. None of them names wasip1, so under GOOS=wasip1 the
// package loses those files and fails on what they defined (goleveldb:
// undefined: newFileLock), although the code in them is often portable
// once compat_overlay adds mmap and flock. Each such library needed a fork.
//
// Under compat_overlay, a build that fails on undefined names of a
// dependency's package takes, from that package's files left out for
// wasip1, those that would build for linux on wasm (their file name and
// build constraint allow GOOS=linux, GOARCH=wasm) and that define one of
// the missing names, and builds again with a copy of each, constrained to
// wasip1, in a patched copy of its module, as shims are (compatfiles.go).
// It goes on while a round adds files: a file taken may need another. The
// build output then says which files it took.

// tagRuleRounds bounds the rebuilds the rule may ask for.
const tagRuleRounds = 4

// tagRuleSuffix ends the name of the copy of a file the rule takes.
const tagRuleSuffix = "_seedfall_wasip1.go"

// tagRule looks at a failed build's output and adds to patches (by module
// path) the files that define what it says is undefined. It reports the
// files it added, as module@version/path, sorted, and the files that define
// a missing name but would not build for linux either, with their build
// constraint, for the error to name.
func (b *Builder) tagRule(ctx context.Context, dir string, env []string, output []byte, patches map[string]*compat.Patch) (added, other []string) {
	missing := undefinedByPackage(output)
	if len(missing) == 0 || ctx.Err() != nil {
		return nil, nil
	}
	paths := slices.Sorted(maps.Keys(missing))
	cmd, err := b.command(ctx, dir, env, append([]string{"list", "-e", "-json=ImportPath,Dir,Module,IgnoredGoFiles"}, paths...)...)
	if err != nil {
		return nil, nil
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if runCommand(cmd) != nil {
		return nil, nil
	}
	type module struct {
		Path, Version, Dir string
		Main               bool
		Replace            *module
	}
	dec := json.NewDecoder(&stdout)
	for {
		var lp struct {
			ImportPath, Dir string
			Module          *module
			IgnoredGoFiles  []string
		}
		if err := dec.Decode(&lp); err == io.EOF {
			break
		} else if err != nil {
			break
		}
		m := lp.Module
		if m == nil || m.Main && patches[m.Path] == nil {
			// The standard library, or the user's own code (or the sim
			// module, or a shim's copy): the workspace's main modules,
			// but for the copies this rule made in an earlier round.
			continue
		}
		modDir := m.Dir
		if m.Replace != nil && m.Replace.Dir != "" {
			modDir = m.Replace.Dir
		}
		rel, err := filepath.Rel(modDir, lp.Dir)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		version := m.Version
		if m.Replace != nil {
			version = m.Replace.Version // "" for a local directory
		}
		if p := patches[m.Path]; p != nil {
			version, modDir = p.Module.Version, p.Module.Dir // the copy's files are the original's
		}
		want := missing[lp.ImportPath]
		for _, name := range lp.IgnoredGoFiles {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			src, err := os.ReadFile(filepath.Join(lp.Dir, name))
			if err != nil || !definesAny(src, want) {
				continue
			}
			if !buildsAsLinuxWasm(name, src) {
				other = append(other, fileRef(m.Path, version, rel, name)+constraintOf(src))
				continue
			}
			patch := patches[m.Path]
			if patch == nil {
				patch = &compat.Patch{Module: compat.Module{Path: m.Path, Version: version, Dir: modDir}, Files: map[string][]byte{}}
				patches[m.Path] = patch
			}
			copyPath := filepath.ToSlash(filepath.Join(rel, strings.TrimSuffix(name, ".go")+tagRuleSuffix))
			if _, ok := patch.Files[copyPath]; ok {
				continue
			}
			patch.Files[copyPath] = forWasip1(src)
			added = append(added, fileRef(m.Path, version, rel, name))
		}
	}
	slices.Sort(added)
	slices.Sort(other)
	return added, other
}

// fileRef names a file of a module as module@version/dir/name (without
// @version for a local replacement).
func fileRef(module, version, rel, name string) string {
	if version != "" {
		module += "@" + version
	}
	return module + "/" + filepath.ToSlash(filepath.Join(rel, name))
}

// constraintOf is a file's build constraint, as " (//go:build ...)", or "".
func constraintOf(src []byte) string {
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if constraint.IsGoBuild(line) || constraint.IsPlusBuild(line) {
			return " (" + line + ")"
		}
		if line != "" && !strings.HasPrefix(line, "//") {
			break
		}
	}
	return ""
}

// undefinedByPackage reads go build's output: a "# import/path" line
// before each package's errors, and errors "file:line:col: undefined: name".
func undefinedByPackage(output []byte) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	pkg := ""
	sc := bufio.NewScanner(bytes.NewReader(output))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "# "); ok {
			pkg, _, _ = strings.Cut(p, " ") // "# pkg [pkg.test]"
			continue
		}
		_, name, ok := strings.Cut(line, ": undefined: ")
		if !ok || pkg == "" || !token.IsIdentifier(name) {
			continue
		}
		if out[pkg] == nil {
			out[pkg] = map[string]bool{}
		}
		out[pkg][name] = true
	}
	return out
}

// buildsAsLinuxWasm says whether a Go file would be built for GOOS=linux,
// GOARCH=wasm: its name's _GOOS and _GOARCH suffixes and its build
// constraint allow it. cgo files are not: wasip1 has no cgo.
func buildsAsLinuxWasm(name string, src []byte) bool {
	if bytes.Contains(src, []byte(`import "C"`)) {
		return false
	}
	parts := strings.Split(strings.TrimSuffix(name, ".go"), "_")
	if n := len(parts); n >= 2 {
		last := parts[n-1]
		switch {
		case knownArch[last]:
			if last != "wasm" {
				return false
			}
			if n >= 3 && knownOS[parts[n-2]] && parts[n-2] != "linux" {
				return false
			}
		case knownOS[last]:
			if last != "linux" {
				return false
			}
		}
	}
	tag := func(t string) bool {
		switch t {
		case "linux", "unix", "wasm", "gc":
			return true
		}
		if v, ok := strings.CutPrefix(t, "go1."); ok {
			n, err := strconv.Atoi(v)
			return err == nil && n <= 26
		}
		return false
	}
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "//") {
			break // constraints come before the package clause
		}
		if constraint.IsGoBuild(line) || constraint.IsPlusBuild(line) {
			expr, err := constraint.Parse(line)
			if err != nil || !expr.Eval(tag) {
				return false
			}
			if constraint.IsGoBuild(line) {
				return true // //go:build wins over // +build
			}
		}
	}
	return true
}

// definesAny says whether a Go file declares one of names at top level.
func definesAny(src []byte, names map[string]bool) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return false
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && names[d.Name.Name] {
				return true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if names[s.Name.Name] {
						return true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if names[n.Name] {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// forWasip1 is a file's text with its build constraints replaced by
// wasip1's.
func forWasip1(src []byte) []byte {
	var out bytes.Buffer
	out.WriteString("//go:build wasip1\n\n// seedfall: this file is taken for wasip1 from the file of the same name\n// without the suffix, whose build constraint leaves wasip1 out (the tag rule).\n\n")
	for _, line := range strings.SplitAfter(string(src), "\n") {
		t := strings.TrimSpace(line)
		if constraint.IsGoBuild(t) || constraint.IsPlusBuild(t) {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// The GOOS and GOARCH values a file name's suffix can name (go/build's
// lists, which it does not export).
var knownOS = setOf("aix", "android", "darwin", "dragonfly", "freebsd", "hurd", "illumos", "ios", "js", "linux", "nacl", "netbsd", "openbsd", "plan9", "solaris", "wasip1", "windows", "zos")

var knownArch = setOf("386", "amd64", "amd64p32", "arm", "armbe", "arm64", "arm64be", "loong64", "mips", "mipsle", "mips64", "mips64le", "mips64p32", "mips64p32le", "ppc", "ppc64", "ppc64le", "riscv", "riscv64", "s390", "s390x", "sparc", "sparc64", "wasm")

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}
