package world

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestEncodeRoundTrip loads every example world and a composed one, and
// checks that its JSON and its TOML each parse back to an equal world.
func TestEncodeRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("../../examples/*/seedfall*.json")
	if err != nil || len(paths) < 10 {
		t.Fatalf("found %d example worlds (%v); the test wants them all", len(paths), err)
	}
	var worlds []*World
	for _, p := range paths {
		w, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		worlds = append(worlds, w)
	}
	dir := writeFiles(t, map[string]string{
		"base/seedfall.json": base,
		"child.toml": `extends = "base/seedfall.json"
faults = "resilient"
links = [{to = "n1", latency = ["3ms", "4ms"]}]
finally = {name = "check", wasm = "check.wasm"}

[[nodes]]
name = "n1"
pkg = "./base/node"
faults = false
env = ["QUOTE=\"x\"", "TAB=a\tb", "UNI=é"]
files = {z = "f1", "a/b" = "/abs/f2"}

[[workloads]]
name = "w2"
pkg = "./w2"
args = ['C:\path', "new\nline"]
`,
	})
	w, err := loadIn(t, dir, "child.toml", Options{Profile: "ci", Set: []string{"faults.udp_loss=0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	worlds = append(worlds, w)
	for _, w := range worlds {
		j, err := w.JSON()
		if err != nil {
			t.Fatalf("%s: JSON: %v", w.File, err)
		}
		tm, err := w.TOML()
		if err != nil {
			t.Fatalf("%s: TOML: %v", w.File, err)
		}
		for _, c := range []struct{ name, data string }{{"world.json", string(j)}, {"world.toml", string(tm)}} {
			back, err := Parse([]byte(c.data), c.name, w.Dir)
			if err != nil {
				t.Errorf("%s as %s does not parse: %v\n%s", w.File, c.name, err, c.data)
				continue
			}
			if !reflect.DeepEqual(comparable(w), comparable(back)) {
				again, _ := back.JSON()
				t.Errorf("%s as %s gives another world:\n%s\n---\n%s", w.File, c.name, j, again)
			}
		}
	}
	if !strings.Contains(string(mustTOML(t, w)), "[[workloads]]\n") {
		t.Errorf("workloads are not an array of tables:\n%s", mustTOML(t, w))
	}
}

func mustTOML(t *testing.T, w *World) []byte {
	t.Helper()
	b, err := w.TOML()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJSONToTOML converts JSON to TOML and back and checks nothing is lost
// and key order is kept, whatever the keys and strings hold. (Keys holding
// tables must follow the others in TOML, so the cases put them last.)
func TestJSONToTOML(t *testing.T) {
	cases := []string{
		`{"a": 1, "b": [1.5, -2, 1e+21, 12345678901234567890], "c": true}`,
		`{"a": "before the tables", "z": {"w": 1, "y": {"x": "deep"}}}`,
		`{"odd keys": {"a.b": "dot", "": "empty", "é": "accent", "q\"uote": "x"}}`,
		`{"s": "quote \" backslash \\ newline \n tab \t bell \u0007 del \u007f nul \u0000 emoji 🙂"}`,
		`{"mixed": [{"a": 1}, 2], "empty": [], "eo": {}, "t": [{"a": 1}, {"b": {"c": [{"d": 2}]}}]}`,
		`{"null": null, "kept": 1}`,
	}
	for _, src := range cases {
		tm, err := JSONToTOML([]byte(src), "in.json")
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		back, err := TOMLToJSON(tm, "out.toml")
		if err != nil {
			t.Errorf("%s: TOML does not read back: %v\n%s", src, err, tm)
			continue
		}
		want := compact(t, strings.ReplaceAll(src, `"null": null, `, ""))
		want = strings.ReplaceAll(want, "12345678901234567890", "1.2345678901234567e+19")
		if got := compact(t, string(back)); got != want {
			t.Errorf("round trip of %s\ngot  %s\nTOML:\n%s", want, got, tm)
		}
	}
	if _, err := JSONToTOML([]byte(`{"a": [1, null]}`), "in.json"); err == nil || !strings.Contains(err.Error(), "null") {
		t.Errorf("null in a list: err = %v, want a refusal", err)
	}
	if _, err := JSONToTOML([]byte(`[1]`), "in.json"); err == nil {
		t.Errorf("a list at the top: no error")
	}
}

// compact writes JSON on one line, keys in their order.
func compact(t *testing.T, s string) string {
	t.Helper()
	v, err := newSource("x.json", []byte(s)).parse()
	if err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	var b bytes.Buffer
	jsonValue(&b, v)
	return b.String()
}
