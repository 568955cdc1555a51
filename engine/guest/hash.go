package guest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// keyVersion changes whenever the way an artifact is produced changes (build
// flags, MergeData, Instrument), so that old cache entries are never
// mistaken for new.
const keyVersion = "seedfall-build-v3"

// hashTree writes the content of the module rooted at root into h: every
// file go build may read, in lexical order, as its slash path, size and
// bytes. Hidden files and directories, testdata, nested modules and cache
// directories (tagged with CACHEDIR.TAG, as seedfall's own cache is: one kept
// inside the module holds Go files) are left out, since none of them can
// change what go build produces for this module, and so are files that no
// package can reach: a file is kept only when its directory or one above
// it, up to the root, holds Go files other than tests (a package's own files, and what its //go:embed patterns can
// name, which never climb out of its directory; a test's embeds are not
// built into a program), or when it is go.mod, go.sum or under vendor/ at
// the root. So a world file, a README, a schedule or a results directory in
// a folder without Go code changes no key, and rebuilds nothing, even when
// the module's root holds tests (examples/ does).
func hashTree(h io.Writer, root string) error {
	type file struct {
		rel, path string
		size      int64
	}
	var files []file
	goDirs := map[string]bool{} // slash paths of directories holding .go files
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root {
			name := d.Name()
			if strings.HasPrefix(name, ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() {
				if name == "testdata" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(p, cacheTag)); err == nil {
					return filepath.SkipDir // a cache: seedfall's own, kept in the tree
				}
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir // nested module
				}
				return nil
			}
		} else if !d.IsDir() {
			return fmt.Errorf("%s is not a directory", root)
		}
		if d.IsDir() {
			return nil
		}
		var info fs.FileInfo
		switch {
		case d.Type().IsRegular():
			info, err = d.Info()
		case d.Type()&fs.ModeSymlink != 0:
			// A symlinked file is read through the link by go build.
			info, err = os.Stat(p)
			if err != nil {
				return nil // dangling: go build ignores it too, or fails on its own
			}
		default:
			return nil
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if strings.HasSuffix(rel, ".go") && !strings.HasSuffix(rel, "_test.go") {
			goDirs[path.Dir(rel)] = true
		}
		files = append(files, file{rel, p, info.Size()})
		return nil
	})
	if err != nil {
		return err
	}
	reachable := func(rel string) bool {
		switch {
		case rel == "go.mod" || rel == "go.sum" || strings.HasPrefix(rel, "vendor/"):
			return true
		}
		for dir := path.Dir(rel); ; dir = path.Dir(dir) {
			if goDirs[dir] {
				return true
			}
			if dir == "." {
				return false
			}
		}
	}
	for _, f := range files {
		if !reachable(f.rel) {
			continue
		}
		if err := hashFile(h, f.rel, f.path, f.size); err != nil {
			return err
		}
	}
	_, err = io.WriteString(h, "end\n")
	return err
}

func hashFile(h io.Writer, name, path string, size int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "file %q %d\n", name, size)
	n, err := io.CopyN(h, f, size)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if n != size {
		return fmt.Errorf("%s changed while it was read; try again", path)
	}
	return nil
}

// hashFS hashes every file of fsys except tests, in lexical order.
func hashFS(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "file %q %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// overlayHash identifies a set of overlay files by their paths and contents.
func overlayHash(overlay map[string][]byte) string {
	if len(overlay) == 0 {
		return ""
	}
	h := sha256.New()
	for _, p := range sortedKeys(overlay) {
		fmt.Fprintf(h, "file %q %d\n", p, len(overlay[p]))
		h.Write(overlay[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// keyField writes one named field of a cache key.
func keyField(h hash.Hash, name, value string) {
	fmt.Fprintf(h, "%s %q\n", name, value)
}

// cacheTag marks a cache directory, after the Cache Directory Tagging
// Specification (https://bford.info/cachedir/): backup tools skip it, and
// so does hashTree.
const cacheTag = "CACHEDIR.TAG"

// tagCache makes dir, a cache, and tags it as one unless it is already;
// errors surface later, where the cache is written.
func tagCache(dir string) {
	tag := filepath.Join(dir, cacheTag)
	if _, err := os.Stat(tag); err == nil {
		return
	}
	if os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(tag, []byte("Signature: 8a477f597d28d172789f06886806bc55\n# seedfall's cache of builds and compiled code: see docs/limits.md\n"), 0o644)
	}
}
