package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// notes collects an engine's notes.
type notes struct {
	mu   sync.Mutex
	msgs []string
}

func (n *notes) add(msg string) { n.mu.Lock(); n.msgs = append(n.msgs, msg); n.mu.Unlock() }

func (n *notes) take() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.msgs
	n.msgs = nil
	return m
}

// compiledFile is the one file of wazero's compiled code under dir.
func compiledFile(t *testing.T, cache string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cache, "compiled", "*", "wazero-*", "*"))
	var found []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".sha256") {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("compiled files %q, want one", found)
	}
	if _, err := os.Stat(found[0] + ".sha256"); err != nil {
		t.Fatalf("compiled code without its hash: %v", err)
	}
	return found[0]
}

// flip damages one byte of the file at path at offset off (the middle if
// off < 0).
func flip(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off = len(b) / 2
	}
	b[off] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Every damaged part of the cache, the built module or its compiled code,
// is found, made again with a note, and the run is the same as before.
func TestCorruptCacheIsMadeAgain(t *testing.T) {
	ctx := context.Background()
	cache := t.TempDir()
	var heard notes
	dir, _ := filepath.Abs("testdata/guests")
	w, err := world.Parse([]byte(`{"nodes": [], "workload": {"name": "client", "pkg": "./hello"}}`), filepath.Join(dir, "seedfall.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	// runOnce runs seed 1 in a new engine, as a new seedfall process would.
	runOnce := func(t *testing.T) (*Prepared, string) {
		t.Helper()
		e, err := New(ctx, Options{CacheDir: cache, Note: heard.add})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(ctx) })
		p, err := e.Prepare(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Run(ctx, RunOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed {
			t.Fatalf("%s: %s\n%s", res.Class, res.Reason, output(res, ""))
		}
		return p, res.Digest
	}
	p, want := runOnce(t)
	if n := heard.take(); len(n) != 0 {
		t.Fatalf("notes from a fresh cache: %q", n)
	}
	check := func(t *testing.T, wantNote string) {
		t.Helper()
		if _, got := runOnce(t); got != want {
			t.Errorf("digest %s, want %s", got, want)
		}
		if n := heard.take(); wantNote == "" && len(n) != 0 || wantNote != "" && (len(n) != 1 || !strings.Contains(n[0], wantNote)) {
			t.Errorf("notes %q, want one with %q", n, wantNote)
		}
		if _, got := runOnce(t); got != want {
			t.Errorf("digest %s, want %s", got, want)
		}
		if n := heard.take(); len(n) != 0 {
			t.Errorf("notes after the repair: %q", n)
		}
	}

	t.Run("module", func(t *testing.T) {
		flip(t, p.Programs[0].built, -1)
		check(t, "seedfall: the cached build of ./testdata/guests/hello was corrupt (sha256 mismatch); rebuilding")
	})
	// The table of function offsets, before the machine code, only
	// seedfall's hash covers.
	t.Run("function offsets", func(t *testing.T) {
		path := compiledFile(t, cache)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// "WAZEVO", the version's length and bytes, the number of
		// functions, then an offset per function.
		offsets := 7 + int(b[6]) + 4
		flip(t, path, offsets+8*3+1)
		check(t, "seedfall: the cached compiled code of client was corrupt (sha256 mismatch); compiling again")
	})
	// The machine code, most of the file, wazero's CRC covers: it fails
	// the compilation, and seedfall removes the file and compiles again.
	t.Run("machine code", func(t *testing.T) {
		flip(t, compiledFile(t, cache), -1)
		check(t, "seedfall: the cached compiled code of client was corrupt (compilationcache: checksum mismatch")
	})
	// Without its hash, compiled code is not trusted, nor worth a note: a
	// process killed right after wazero wrote it leaves it so.
	t.Run("hash missing", func(t *testing.T) {
		path := compiledFile(t, cache)
		os.Remove(path + ".sha256")
		flip(t, path, 7+int(mustRead(t, path)[6])+4+8*3+1)
		check(t, "")
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
