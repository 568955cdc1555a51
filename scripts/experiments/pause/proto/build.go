package proto

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// BuildGuest builds a main package of the given files with the overlay (and the
// others, keyed by GOROOT-relative path, that extra returns), through
// seedfall's shared cache, and exports what a pausing host needs. The
// tests of this package and of engine/guest/pauseoverlay build with it.
//
// The runtime patch makes Go build the standard library for wasip1 again
// (a minute or two from an empty cache on 2 cores), so these tests are in
// the slow tier (docs/contributing.md), which CI runs as a step of its own.
func BuildGuest(t testing.TB, opts pauseoverlay.Options, files map[string]string, extra ...func(goroot string) (map[string][]byte, error)) []byte {
	t.Helper()
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("builds the standard library for wasip1 again, with the runtime patched; run with SEEDFALL_SLOW=1")
	}
	dir := t.TempDir()
	files["go.mod"] = "module example.com/pausing\n\ngo 1.21\n"
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := &guest.Builder{}
	goroot, err := b.GOROOT()
	if err != nil {
		t.Fatal(err)
	}
	ovl, err := pauseoverlay.Files(goroot, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range extra {
		more, err := f(goroot)
		if err != nil {
			t.Fatal(err)
		}
		maps.Copy(ovl, more)
	}
	art, err := b.Build(context.Background(), guest.Request{Node: "pausing", Pkg: dir, Overlay: ovl})
	if err != nil {
		t.Fatal(err)
	}
	// The builder exports what a pause needs (as the engine uses it).
	if !guest.Pausable(art.Wasm) {
		t.Fatal("the built module does not export what a pause needs (guest.ExportPause)")
	}
	return art.Wasm
}
