package guest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A seedfall can be killed at any moment, even by SIGKILL, and several may
// share one cache. Every temporary directory in the cache is therefore
// locked (an flock on lockName inside it, which the kernel drops when its
// process dies) for as long as it is in use, and each Builder sweeps, once,
// what killed processes left behind: directories whose lock it can take,
// and temporary files that no live writer can still be writing.

// lockName is the lock file inside a temporary directory of the cache.
const lockName = ".seedfall-lock"

const (
	// sweepAge: a temporary file (written in one go) this old has no live
	// writer.
	sweepAge = time.Minute
	// sweepUnlockedAge: a directory without a lock file (made by a seedfall
	// from before the locks, or just made and not locked yet, or killed
	// then) is swept this long after it last changed.
	sweepUnlockedAge = time.Hour
	// sweepMax bounds the work of one sweep; the rest is left to the next.
	sweepMax = 1000
)

// lockDir locks the temporary directory dir, which its caller just made,
// until the returned file is closed (or the process dies). The lock file
// is locked before it gets its name, so a lock file whose lock is free
// always means a dead owner.
func lockDir(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, lockName+"-*")
	if err != nil {
		return nil, CacheErr(err)
	}
	lockFile(f, true)
	if err := os.Rename(f.Name(), filepath.Join(dir, lockName)); err != nil {
		f.Close()
		return nil, CacheErr(err)
	}
	return f, nil
}

// sweep removes the leftovers of killed processes from the cache: build
// directories in tmp/, half-made directories (.tmp-*) beside the sim,
// overlay and compat entries, and temporary files beside the modules.
// It returns how many it removed.
func sweep(cache string) int {
	now := time.Now()
	removed := 0
	dir := func(parent string, match func(name string) bool) {
		ents, err := os.ReadDir(parent)
		if err != nil {
			return
		}
		for _, e := range ents {
			if removed >= sweepMax {
				return
			}
			if match(e.Name()) && removeLeftover(filepath.Join(parent, e.Name()), now) {
				removed++
			}
		}
	}
	dir(filepath.Join(cache, "tmp"), func(string) bool { return true })
	for _, sub := range []string{"sim", "overlay", "compat"} {
		dir(filepath.Join(cache, sub), func(name string) bool { return strings.HasPrefix(name, ".tmp-") })
	}
	// fsutil.WriteFile's temporary files: .<name>.tmp-*
	dir(filepath.Join(cache, "wasm"), func(name string) bool {
		return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
	})
	return removed
}

// removeLeftover removes p if it is a dead process's: a directory whose
// lock it can take, a directory without a lock older than
// sweepUnlockedAge, or a file older than sweepAge.
func removeLeftover(p string, now time.Time) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if !fi.IsDir() {
		return now.Sub(fi.ModTime()) >= sweepAge && os.Remove(p) == nil
	}
	f, err := os.Open(filepath.Join(p, lockName))
	if errors.Is(err, fs.ErrNotExist) {
		if now.Sub(fi.ModTime()) < sweepUnlockedAge {
			return false
		}
		return os.RemoveAll(p) == nil
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if !lockFile(f, false) {
		return false // a live process is using it
	}
	return os.RemoveAll(p) == nil
}
