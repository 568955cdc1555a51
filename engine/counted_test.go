package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/world"
)

// The rewrite that counts calls and pauses in host calls is kept: a second
// command that opens the same guest reads it instead of rewriting, gets
// the same module, and a damaged copy in the cache is rewritten, not used.
func TestRewriteIsCached(t *testing.T) {
	p := prepare(t, racyWorld(`{"strategy": "random"}`))
	prog := p.Programs[0]
	bin, err := os.ReadFile(prog.built)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, hash, err := rewritten(dir, bin, false)
	if err != nil {
		t.Fatal(err)
	}
	if hash != prog.Hash {
		t.Fatalf("the rewrite in a new cache has hash %s, the engine's %s", hash, prog.Hash)
	}
	refs, _ := filepath.Glob(filepath.Join(dir, "from-*.ref"))
	if len(refs) != 1 {
		t.Fatalf("want one entry for the rewrite, have %v", refs)
	}
	again, hash2, err := rewritten(dir, bin, false)
	if err != nil || hash2 != hash || !bytes.Equal(again, first) {
		t.Fatalf("the cached rewrite differs (hash %s, want %s; err %v)", hash2, hash, err)
	}
	// The loop variant is another rewrite, with its own entry.
	if _, lh, err := rewritten(dir, bin, true); err != nil || lh == hash {
		t.Fatalf("the loop variant: hash %s (calls' %s), err %v", lh, hash, err)
	}
	// A module gone from the cache, or damaged, is not taken: the rewrite
	// is made again, and written again.
	mod := filepath.Join(dir, hash+".wasm")
	os.Remove(mod)
	third, hash3, err := rewritten(dir, bin, false)
	if err != nil || hash3 != hash || !bytes.Equal(third, first) {
		t.Fatalf("after the module was removed: hash %s, want %s; err %v", hash3, hash, err)
	}
	if got, _ := os.ReadFile(mod); !bytes.Equal(got, first) {
		t.Fatal("the module was not written again")
	}
	if err := os.WriteFile(mod, append([]byte{}, first[:len(first)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if fourth, _, err := rewritten(dir, bin, false); err != nil || !bytes.Equal(fourth, first) {
		t.Fatalf("a half-written module in the cache was used (err %v)", err)
	}
	if got, _ := os.ReadFile(mod); !bytes.Equal(got, first) {
		t.Fatal("the half-written module was left in the cache")
	}
}

// Two processes that need the same module compile it once: the second
// waits for the first's compilation (guest.LockCompile), and stops
// waiting when its context is done.
func TestCompileWaitsForAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	js := `{"nodes": [], "workload": {"name": "w", "pkg": "./exitcode", "args": ["0"]}}`
	first, err := New(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	hash := prepareWith(t, first, js).Programs[0].Hash
	// Another process is compiling it now: its compiled code is not there.
	compiled, _ := filepath.Glob(filepath.Join(dir, "compiled", hash[:32]+"-*"))
	if len(compiled) == 0 {
		t.Fatalf("no compiled code for %s in %s", hash, dir)
	}
	for _, c := range compiled {
		os.RemoveAll(c)
	}
	unlock, err := guest.LockCompile(context.Background(), dir, hash)
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(context.Background(), Options{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	guests, _ := filepath.Abs("testdata/guests")
	w, err := world.Parse([]byte(js), filepath.Join(guests, "seedfall.json"), guests)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := second.Prepare(ctx, w); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Prepare while another process compiles the module: %v, want the context's error", err)
	}
	unlock()
	if p := prepareWith(t, second, js); p.Programs[0].Hash != hash {
		t.Fatalf("after the wait: module %s, want %s", p.Programs[0].Hash, hash)
	}
}
