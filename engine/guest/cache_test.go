package guest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flipByte damages the file at path as a bad disk would: one bit of the
// byte in the middle.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A damaged cache entry is never used: it is built again, with a note,
// into the same bytes.
func TestCorruptEntryRebuilt(t *testing.T) {
	ctx := context.Background()
	var notes []string
	b := &Builder{CacheDir: t.TempDir(), Note: func(msg string) { notes = append(notes, msg) }}
	req := Request{Node: "n1", Pkg: newModule(t, map[string]string{"main.go": simMain})}
	first, err := b.Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, first.Path)
	b = &Builder{CacheDir: b.CacheDir, Note: b.Note} // as the next process would
	again, err := b.Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if again.Cached || again.Hash != first.Hash || !bytes.Equal(again.Wasm, first.Wasm) {
		t.Errorf("after damage: Cached=%v, same hash=%v; want the same module built again", again.Cached, again.Hash == first.Hash)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "seedfall: the cached build of ") || !strings.HasSuffix(notes[0], " was corrupt (sha256 mismatch); rebuilding") {
		t.Errorf("notes %q, want one about the damaged build", notes)
	}
	if disk, _ := os.ReadFile(first.Path); !bytes.Equal(disk, first.Wasm) {
		t.Error("the damaged entry is still in the cache")
	}
	if third, err := b.Build(ctx, req); err != nil || !third.Cached {
		t.Errorf("the entry built again is not a hit: %+v, %v", third, err)
	}

	// A prebuilt module's cache entry is checked too.
	wasm := filepath.Join(t.TempDir(), "m.wasm")
	raw, err := rawHello()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wasm, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := b.Load(ctx, "n2", wasm)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, loaded.Path)
	b = &Builder{CacheDir: b.CacheDir, Note: b.Note}
	notes = nil
	if again, err := b.Load(ctx, "n2", wasm); err != nil || again.Cached || again.Hash != loaded.Hash {
		t.Errorf("damaged load = %+v, %v; want it made again with hash %s", again, err, loaded.Hash)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "was corrupt (sha256 mismatch); making it again") {
		t.Errorf("notes %q, want one about the damaged copy", notes)
	}
}

// The directories a build uses from the cache (here the built-in sim
// module) are checked too: a damaged one is made again, with a note.
func TestCorruptDirRemade(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	var notes []string
	b := &Builder{CacheDir: cache, Note: func(msg string) { notes = append(notes, msg) }}
	req := Request{Node: "n1", Pkg: newModule(t, map[string]string{"main.go": simMain})}
	first, err := b.Build(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	simDir := filepath.Join(cache, "sim", simDirName(t))
	goFile := filepath.Join(simDir, "go.mod")
	good, err := os.ReadFile(goFile)
	if err != nil {
		t.Fatal(err)
	}
	flipByte(t, goFile)
	os.Remove(first.Path) // so that the next build needs the sim module
	again, err := b.Build(ctx, req)
	if err != nil {
		t.Fatalf("build with a damaged sim module: %v", err)
	}
	if again.Hash != first.Hash {
		t.Errorf("hash %s, want %s", again.Hash, first.Hash)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "sim/"+simDirName(t)+" was corrupt (sha256 mismatch); making it again") {
		t.Errorf("notes %q, want one about the sim module", notes)
	}
	if now, _ := os.ReadFile(goFile); !bytes.Equal(now, good) {
		t.Error("the sim module was not made again")
	}
}

// What a killed seedfall left in the cache is removed by the next Builder,
// but never what a live process holds, nor what is too young to tell.
func TestSweepLeftovers(t *testing.T) {
	cache := t.TempDir()
	old := time.Now().Add(-2 * sweepAge)
	ancient := time.Now().Add(-2 * sweepUnlockedAge)
	mk := func(rel string, lock bool, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(cache, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "sub", "out.wasm"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(p, lockName), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := mk("tmp/build-dead", true, time.Now())     // its process died: lock free
	deadCompat := mk("compat/.tmp-123", true, old)     // a compat copy in progress
	deadSim := mk("sim/.tmp-456", true, old)           // likewise
	young := mk("tmp/build-young", false, time.Now())  // maybe not locked yet
	unlocked := mk("tmp/build-unlocked", false, old)   // an older seedfall's, maybe live
	forgotten := mk("tmp/build-old", false, ancient)   // an older seedfall's, long dead
	live := mk("tmp/build-live", true, old)            // another process holds it
	entry := mk("compat/0123456789abcdef", false, old) // an entry, not a leftover
	f, err := os.Open(filepath.Join(live, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !lockFile(f, false) {
		t.Fatal("cannot lock")
	}
	wasmDir := filepath.Join(cache, "wasm")
	os.MkdirAll(wasmDir, 0o755)
	halfWritten := filepath.Join(wasmDir, ".abc.wasm.tmp-99")
	os.WriteFile(halfWritten, []byte("x"), 0o644)
	os.Chtimes(halfWritten, old, old)
	writing := filepath.Join(wasmDir, ".def.wasm.tmp-98")
	os.WriteFile(writing, []byte("x"), 0o644)

	b := &Builder{CacheDir: cache}
	if _, err := b.Build(context.Background(), Request{Node: "n1", Pkg: newModule(t, map[string]string{"main.go": helloMain})}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dead, deadCompat, deadSim, forgotten, halfWritten} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was left: %v", p, err)
		}
	}
	for _, p := range []string{young, unlocked, live, entry, writing} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
}

// A build locks its temporary directory for as long as it runs, so that
// another process's sweep leaves it alone.
func TestBuildLocksItsTempDir(t *testing.T) {
	cache := t.TempDir()
	dir, release, err := mkTemp(cache, "build-")
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-2 * sweepUnlockedAge)
	os.Chtimes(dir, past, past)
	if n := sweep(cache); n != 0 {
		t.Errorf("swept %d entries, want none while the directory is in use", n)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("the directory in use was removed: %v", err)
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("release left %s: %v", dir, err)
	}
}

// A full disk is not a permission problem: the advice says which it is.
func TestCacheErrSaysWhatToDo(t *testing.T) {
	full := CacheErr(&os.PathError{Op: "write", Path: "/c/wasm/x", Err: syscall.ENOSPC})
	if !strings.Contains(full.Error(), "free space on that disk") || strings.Contains(full.Error(), "writable") {
		t.Errorf("a full disk: %v", full)
	}
	denied := CacheErr(&os.PathError{Op: "mkdir", Path: "/c/wasm", Err: syscall.EACCES})
	if !strings.Contains(denied.Error(), "make it writable") {
		t.Errorf("a read-only cache: %v", denied)
	}
}
