package world

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedCorpus adds every bundled example world, in JSON and as TOML, and a
// few hostile shapes, to a fuzz target's corpus.
func seedCorpus(f *testing.F, toml bool) {
	paths, _ := filepath.Glob("../../examples/*/seedfall*.json")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if toml {
			if b, err = JSONToTOML(b, p); err != nil {
				f.Fatal(err)
			}
		}
		f.Add(b)
	}
	if toml {
		for _, s := range []string{
			"duration = \"5s\"\n[[nodes]]\nname = \"a\"\npkg = \"./a\"\n",
			"a = [[[[[[[[[[1]]]]]]]]]]", "[faults]\ncrash_per_sec = 1e400", "x = { y = { z = 1 } }", "\"\\u0000\" = 1", "[[a]]\n[a]\n",
		} {
			f.Add([]byte(s))
		}
		return
	}
	for _, s := range []string{
		`{"nodes": [{"name": "a", "pkg": "./a"}], "faults": {"partition_per_sec": 1e12}}`,
		`{"extends": "/dev/zero"}`, `{"preempt": {"strategy": "pct", "depth": 1e9}}`,
		`[[[[[[[[[[[[`, `{"duration": "-2562047h"}`, `{"a": "\ud800"}`, "\uFEFF{}", "",
	} {
		f.Add([]byte(s))
	}
}

// fuzzWorld checks what any input must give: an error that names the file
// and no Go type, or a world that writes out and reads back the same.
func fuzzWorld(t *testing.T, name string, data []byte) {
	dir := t.TempDir()
	w, err := Parse(data, name, dir)
	if err != nil {
		if msg := err.Error(); !strings.HasPrefix(msg, name) || goTypes(msg) {
			t.Fatalf("error %q", msg)
		}
		return
	}
	out, err := w.JSON()
	if err != nil {
		t.Fatalf("an accepted world does not write out: %v", err)
	}
	again, err := Parse(out, "out.json", dir)
	if err != nil {
		t.Fatalf("a world written out does not read back: %v\n%s", err, out)
	}
	if out2, _ := again.JSON(); string(out2) != string(out) {
		t.Fatalf("the round trip changed the world:\n%s\n---\n%s", out, out2)
	}
}

// goTypes reports whether an error shows the user Go's own decoding
// messages instead of seedfall's.
func goTypes(msg string) bool {
	for _, s := range []string{"Go struct", "Go value", "of type ", "json: ", "toml: ", "reflect", "runtime error"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// FuzzWorldJSON feeds JSON world files of any shape to the parser.
func FuzzWorldJSON(f *testing.F) {
	seedCorpus(f, false)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzWorld(t, "w.json", b) })
}

// FuzzWorldTOML feeds TOML world files of any shape to the parser.
func FuzzWorldTOML(f *testing.F) {
	seedCorpus(f, true)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzWorld(t, "w.toml", b) })
}
