package guest

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// GoVersion returns the release of the Go installation the Builder builds
// with ("go1.26.8"), as `go env GOVERSION` says with GOTOOLCHAIN=local.
func (b *Builder) GoVersion(ctx context.Context) (string, error) {
	e, err := b.goEnv(ctx)
	if err != nil {
		return "", err
	}
	return e.GOVERSION, nil
}

// CacheHealth is what CheckCache found in a cache directory. It changes
// nothing there.
type CacheHealth struct {
	Files int   // every file under the directory
	Bytes int64 // their size
	// Modules counts the built modules (wasm/*.wasm), which every run
	// reads; Damaged lists those that cannot be used as they are: not
	// readable, not a wasm module, no sha256 beside it, or (with verify)
	// bytes that do not match it. A run rebuilds a damaged module, with
	// a note.
	Modules int
	Damaged []Damaged
	// Leftovers are what killed processes left: build directories whose
	// lock no live process holds, half-written entries. The next seedfall
	// removes them.
	Leftovers []string
	// Busy lists the lock files (locks/) a live process holds: a build in
	// progress, which other processes wait for.
	Busy []string
}

// Damaged is a cache entry that cannot be used, and why.
type Damaged struct {
	Path string
	Why  string
}

// CheckCache looks at the cache directory dir: its size, whether each
// built module is sound, leftovers of killed processes, and builds in
// progress. verify also hashes every module against its sha256, which
// reads the whole cache. A missing dir is an empty cache.
func CheckCache(dir string, verify bool) (*CacheHealth, error) {
	h := &CacheHealth{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && os.IsNotExist(err) {
				return fs.SkipAll
			}
			return err
		}
		if d.Type().IsRegular() {
			h.Files++
			if fi, err := d.Info(); err == nil {
				h.Bytes += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	wasmDir := filepath.Join(dir, "wasm")
	ents, err := os.ReadDir(wasmDir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, e := range ents {
		if name := e.Name(); strings.HasSuffix(name, ".wasm") && !strings.HasPrefix(name, ".") {
			h.Modules++
			if why := checkModule(filepath.Join(wasmDir, name), verify); why != "" {
				h.Damaged = append(h.Damaged, Damaged{filepath.Join(wasmDir, name), why})
			}
		}
	}
	now := time.Now()
	leftovers := func(parent string, match func(name string) bool) {
		ents, _ := os.ReadDir(parent)
		for _, e := range ents {
			if p := filepath.Join(parent, e.Name()); match(e.Name()) && isLeftover(p, now) {
				h.Leftovers = append(h.Leftovers, p)
			}
		}
	}
	// What sweep removes, in the same places.
	leftovers(filepath.Join(dir, "tmp"), func(string) bool { return true })
	for _, sub := range []string{"sim", "overlay", "compat"} {
		leftovers(filepath.Join(dir, sub), func(name string) bool { return strings.HasPrefix(name, ".tmp-") })
	}
	leftovers(wasmDir, func(name string) bool { return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") })
	if fileLocks {
		ents, _ := os.ReadDir(filepath.Join(dir, locksDir))
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".done") || !e.Type().IsRegular() {
				continue
			}
			p := filepath.Join(dir, locksDir, e.Name())
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			if !lockFile(f, false) {
				h.Busy = append(h.Busy, p)
			}
			f.Close() // drops the lock if it was taken
		}
	}
	sort.Strings(h.Leftovers)
	return h, nil
}

// wasmMagic opens every wasm module.
var wasmMagic = []byte("\x00asm")

// checkModule says what is wrong with the built module at path, or "".
func checkModule(path string, verify bool) string {
	sum, err := os.ReadFile(path + ".sha256")
	if err != nil {
		return "its sha256 is missing"
	}
	f, err := os.Open(path)
	if err != nil {
		return "not readable: " + err.Error()
	}
	defer f.Close()
	head := make([]byte, len(wasmMagic))
	if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, wasmMagic) {
		return "not a wasm module"
	}
	if !verify {
		return ""
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return "not readable: " + err.Error()
	}
	if sha256Hex(bin) != strings.TrimSpace(string(sum)) {
		return "sha256 mismatch"
	}
	return ""
}

// isLeftover says whether p is a dead process's, as removeLeftover decides,
// without removing it.
func isLeftover(p string, now time.Time) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return now.Sub(fi.ModTime()) >= sweepAge
	}
	f, err := os.Open(filepath.Join(p, lockName))
	if os.IsNotExist(err) {
		return now.Sub(fi.ModTime()) >= sweepUnlockedAge
	}
	if err != nil {
		return false
	}
	defer f.Close()
	return lockFile(f, false) // taken: no live process holds it (Close drops it)
}
