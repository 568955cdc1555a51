package compat

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Badger: github.com/dgraph-io/badger/v4 builds for wasip1, but its storage
// goes through ristretto's z package, whose z/mmap_wasip1.go returns ENOSYS
// for mmap, munmap, madvise and msync: badger.Open fails at the first
// memtable log. Badger maps every file it writes (memtable logs, value log
// files, tables, the discard stats) read-write and shared, writes through
// the mapping and msyncs it, so the mapping is the file's content.
//
// The ristretto shim replaces z/mmap_wasip1.go with the functions of
// z/mmap_unix.go written against package syscall, which compat_overlay
// extends (shims/badger/ristretto_mmap_wasip1.go.in). On a system other than
// Linux, z's MmapFile.Truncate is msync, munmap, ftruncate and mmap again
// (z/file_default.go), so mremap is never needed. A mapping larger than
// 1 GiB is refused with a message saying which badger.Options to lower:
// badger's defaults map 2 GiB per value log file, which wasm32 memory (and
// the host, which backs it) cannot afford.
//
// The badger shim makes two wasip1 files behave as the Linux ones do:
//
//   - dir_other.go skips the flock that dir_unix.go takes on the database
//     directory; the shim takes it (shims/badger/badger_flock_wasip1.go.in),
//     so a second badger.Open of a directory in use fails as on Linux.
//   - y/file_dsync.go gives files opened with y.Sync O_DSYNC on Linux, and
//     nothing sets it on wasip1: the key registry, written once with no fsync
//     and then renamed into place, was not durable, and a crash could leave an
//     empty KEYREGISTRY that fails every later badger.Open. The shim sets
//     O_SYNC, wasip1's nearest flag (shims/badger/badger_dsync_wasip1.go.in).
//
// Every version listed has the same z/mmap_wasip1.go and z/file_default.go
// (ristretto) and the same dir_other.go and y/y.go (badger); the Files
// functions check the shapes they rely on and say what differs.
func init() {
	register(&Shim{
		Module:   "github.com/dgraph-io/ristretto/v2",
		Versions: []string{"v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0", "v2.4.0", "v2.4.1", "v2.4.2"},
		What:     "z's mmap, munmap, madvise and msync through the generic shim (at most 1 GiB per mapping)",
		Files:    ristrettoFiles,
	})
	register(&Shim{
		Module:   "github.com/dgraph-io/badger/v4",
		Versions: []string{"v4.8.0", "v4.9.0", "v4.9.1", "v4.9.2", "v4.9.3", "v4.9.4", "v4.9.5", "v4.9.6"},
		What:     "flock of the database directory; O_SYNC for files badger opens with O_DSYNC on Linux",
		Files:    badgerFiles,
	})
}

func ristrettoFiles(m Module) (map[string][]byte, error) {
	dir := filepath.Join(m.Dir, "z")
	funcs, err := topFuncs(filepath.Join(dir, "mmap_wasip1.go"))
	if err != nil {
		return nil, err
	}
	want := []string{"madvise(b []byte, readahead bool) error", "mmap(fd *os.File, writeable bool, size int64) ([]byte, error)",
		"msync(b []byte) error", "munmap(b []byte) error"}
	if !slices.Equal(funcs, want) {
		return nil, fmt.Errorf("z/mmap_wasip1.go declares %q, the shim replaces %q", funcs, want)
	}
	// The files z builds from for wasip1 must truncate a mapped file without
	// mremap, which the shim does not provide.
	ctx := wasip1()
	pkg, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return nil, fmt.Errorf("package z: %v", err)
	}
	if !slices.Contains(pkg.GoFiles, "file_default.go") {
		return nil, fmt.Errorf("package z does not build z/file_default.go (Truncate by munmap and mmap) for wasip1")
	}
	for _, name := range pkg.GoFiles {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if name != "mmap_wasip1.go" && bytes.Contains(src, []byte("mremap(")) {
			return nil, fmt.Errorf("z/%s calls mremap for wasip1, which the shim does not provide", name)
		}
	}
	return map[string][]byte{"z/mmap_wasip1.go": Template("shims/badger/ristretto_mmap_wasip1.go.in")}, nil
}

// badgerFlockNote is where dir_other.go would take the directory lock.
const badgerFlockNote = "\t// NOTE: Here is where we would normally call flock.\n\t// This is not supported in js / wasm, so skip it.\n"

const badgerFlockCall = "\t// seedfall compat_overlay: the flock dir_unix.go takes.\n" +
	"\tif err := seedfallLockDir(f, readOnly); err != nil {\n" +
	"\t\tf.Close()\n" +
	"\t\treturn nil, y.Wrapf(err,\n" +
	"\t\t\t\"Cannot acquire directory lock on %q.  Another process is using this Badger database.\",\n" +
	"\t\t\tdirPath)\n" +
	"\t}\n"

func badgerFiles(m Module) (map[string][]byte, error) {
	other, err := os.ReadFile(filepath.Join(m.Dir, "dir_other.go"))
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(other, []byte("//go:build js || wasip1\n")) {
		return nil, fmt.Errorf("dir_other.go is not the js and wasip1 directory lock the shim expects")
	}
	if bytes.Count(other, []byte(badgerFlockNote)) != 1 || !bytes.Contains(other, []byte("func acquireDirectoryLock(dirPath string, pidFileName string, readOnly bool) (")) {
		return nil, fmt.Errorf("dir_other.go does not skip flock where the shim expects")
	}
	other = bytes.Replace(other, []byte(badgerFlockNote), []byte(badgerFlockCall), 1)

	y, err := os.ReadFile(filepath.Join(m.Dir, "y", "y.go"))
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(y, []byte("\tdatasyncFileFlag = 0x0\n")) {
		return nil, fmt.Errorf("y/y.go does not declare datasyncFileFlag as the shim expects")
	}
	ctx := wasip1()
	pkg, err := ctx.ImportDir(filepath.Join(m.Dir, "y"), 0)
	if err != nil {
		return nil, fmt.Errorf("package y: %v", err)
	}
	for _, name := range pkg.GoFiles {
		src, err := os.ReadFile(filepath.Join(m.Dir, "y", name))
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(src), "datasyncFileFlag = ") && name != "y.go" {
			return nil, fmt.Errorf("y/%s sets datasyncFileFlag for wasip1 already", name)
		}
	}
	return map[string][]byte{
		"dir_other.go":               other,
		"seedfall_flock_wasip1.go":   Template("shims/badger/badger_flock_wasip1.go.in"),
		"y/seedfall_dsync_wasip1.go": Template("shims/badger/badger_dsync_wasip1.go.in"),
	}, nil
}

// topFuncs lists the signatures of the top-level functions of a Go file,
// sorted, as "name(params) results" with parameters as written.
func topFuncs(path string) ([]string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		typ := string(src[fset.Position(fd.Type.Params.Pos()).Offset:fset.Position(fd.Type.End()).Offset])
		out = append(out, fd.Name.Name+typ)
	}
	slices.Sort(out)
	return out, nil
}
