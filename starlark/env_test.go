package starlark

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// A run whose context ends says it was interrupted, and Cancel leaves the
// Env usable: the next run goes to its end.
func TestCancel(t *testing.T) {
	env := NewEnv(Options{Engine: testEngine(t)})
	w, err := LoadWorld("testdata/lib/world.star", Options{Engine: testEngine(t)})
	if err != nil {
		t.Fatal(err)
	}
	wv, err := WorldValue(w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := env.RunValue(ctx, wv, 1, nil); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("a run with its context ended: err = %v, want ErrInterrupted", err)
	}
	before := env.Context()
	env.Cancel()
	if before.Err() == nil {
		t.Fatal("Cancel left the running context alive")
	}
	r, err := env.RunWorld(env.Context(), w, 1, nil)
	if err != nil {
		t.Fatalf("a run after Cancel: %v", err)
	}
	if r.Result.Passed || r.Seed != 1 {
		t.Fatalf("seed 1 of the lossy world: passed=%v seed=%d, want a failure", r.Result.Passed, r.Seed)
	}
}

// LoadWorld gives the script's `world` global; its relative paths are the
// script's.
func TestLoadWorld(t *testing.T) {
	w, err := LoadWorld("testdata/lib/world.star", Options{})
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("testdata/lossy/server")
	if w.Nodes[0].Pkg != abs {
		t.Errorf("nodes[0].pkg = %s, want %s", w.Nodes[0].Pkg, abs)
	}
	if w.File != "testdata/lib/world.star" {
		t.Errorf("File = %q, want the script", w.File)
	}
	for _, tc := range []struct{ path, want string }{
		{"testdata/lib/consts.star", "testdata/lib/consts.star: defines no global `world`; end the script with world = world(nodes=[...], ...)"},
		{"testdata/nothere.star", "cannot read testdata/nothere.star: no such file or directory"},
	} {
		if _, err := LoadWorld(tc.path, Options{}); err == nil || err.Error() != tc.want {
			t.Errorf("LoadWorld(%s): %v, want %q", tc.path, err, tc.want)
		}
	}
}
