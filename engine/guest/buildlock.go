package guest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Several processes (and goroutines) sharing one cache build each guest
// once. The go command does not coordinate with other go commands: two
// builds that need the same packages both compile them, the standard
// library for wasip1 included (half a minute of CPU). So a build takes two
// locks, flocks on files in <cache>/locks that the kernel drops when the
// process dies:
//
//   - one per cache key (bucketed by its first two hex digits, so the
//     directory stays small), held while the module is built: whoever waited
//     for it looks in the cache again and finds the module there;
//   - one per build configuration (Go installation, settings, overlay and
//     GOCACHE), held by the first build of that configuration only, until it
//     ends: the builds that wait for it find the standard library compiled,
//     instead of compiling it alongside. A marker file says that first build
//     is done.
//
// Where files cannot be locked (not unix), nothing waits: builds may then
// repeat work, never share a half-written result (entries appear by
// rename).

const locksDir = "locks"

// lockWait polls for a lock held by another process at most this often.
const lockWait = 50 * time.Millisecond

// waitLock takes an exclusive flock on the file at path, made if missing,
// waiting until ctx is done. unlock releases it.
func waitLock(ctx context.Context, path string) (unlock func(), err error) {
	if !fileLocks {
		return func() {}, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, CacheErr(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, CacheErr(err)
	}
	for !lockFile(f, false) {
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(lockWait):
		}
	}
	return func() { f.Close() }, nil
}

// lockKey holds the build of one cache key.
func lockKey(ctx context.Context, cache, key string) (func(), error) {
	return waitLock(ctx, filepath.Join(cache, locksDir, "build-"+key[:2]))
}

// LockCompile holds the compilation of one module (key: its hash, hex)
// into machine code, which takes a CPU-second or more for a guest of a few
// MB: two processes that need the same module (two test packages, two
// scripts of one, two shards) compile it once, and the second loads what
// the first wrote. unlock releases it.
func LockCompile(ctx context.Context, cache, key string) (unlock func(), err error) {
	return waitLock(ctx, filepath.Join(cache, locksDir, "compile-"+key[:2]))
}

// configID names a build configuration: what decides which packages of the
// standard library a build compiles, and where the go command keeps them.
func configID(e *goEnv, overlay string) string {
	h := sha256.New()
	for _, f := range []string{e.GOVERSION, e.GOROOT, e.GOFLAGS, e.GOEXPERIMENT, e.GOWASM, e.GOCACHE, overlay} {
		keyField(h, "f", f)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// firstOfConfig waits while another build is the first of its
// configuration. When this build is the first, done must be called when it
// ends, with whether it succeeded; otherwise done does nothing.
func firstOfConfig(ctx context.Context, cache, id string) (done func(ok bool), err error) {
	marker := filepath.Join(cache, locksDir, "config-"+id+".done")
	nothing := func(bool) {}
	if _, err := os.Stat(marker); err == nil {
		return nothing, nil
	}
	unlock, err := waitLock(ctx, filepath.Join(cache, locksDir, "config-"+id))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(marker); err == nil || !errors.Is(err, fs.ErrNotExist) {
		unlock() // the first build is done, or nothing can be said: do not wait
		return nothing, nil
	}
	return func(ok bool) {
		if ok {
			writeAtomic(marker, nil) // best effort: without it the next first build waits again
		}
		unlock()
	}, nil
}
