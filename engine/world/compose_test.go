package world

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// writeFiles lays out files (name -> contents) in a fresh directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// loadIn loads name from dir as the user would, with dir as the working
// directory, so errors name files as -c does.
func loadIn(t *testing.T, dir, name string, o Options) (*World, error) {
	t.Helper()
	t.Chdir(dir)
	return LoadWith(name, o)
}

const base = `{
  "nodes": [{ "name": "n1", "pkg": "./node", "args": ["-a"], "env": {"A": "1", "B": "2"} }],
  "workload": { "name": "client", "pkg": "./client" },
  "duration": "10s",
  "faults": { "crash_per_sec": 0.5, "restart_after": ["1ms", "2ms"] },
  "profiles": { "ci": { "duration": "5m" }, "quick": { "duration": "1s" } }
}`

func TestExtendsMerge(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base/seedfall.json": base,
		"child.json": `{
  "extends": "base/seedfall.json",
  "duration": "20s",
  "faults": { "crash_per_sec": 1 },
  "profiles": { "ci": { "latency": ["5ms", "5ms"] } }
}`,
		"list.json": `{
  "extends": "base/seedfall.json",
  "nodes": [{ "name": "n2", "pkg": "./other" }]
}`,
		"grand.json": `{ "extends": "child.json", "supervise": true }`,
	})
	w, err := loadIn(t, dir, "child.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Scalars: the child wins. Objects: key by key. Paths: against the
	// file that wrote them.
	checks := []struct {
		name      string
		got, want any
	}{
		{"duration", w.Duration, 20 * time.Second},
		{"crash_per_sec", w.Faults.CrashPerSec, 1.0},
		{"restart_after kept", w.Faults.RestartAfter, Range{ms, 2 * ms}},
		{"node pkg against base/", w.Nodes[0].Pkg, filepath.Join(dir, "base", "node")},
		{"node args kept", w.Nodes[0].Args, []string{"-a"}},
		{"files", w.Files, []string{"child.json", filepath.Join("base", "seedfall.json")}},
		{"extends", w.Extends, "base/seedfall.json"},
		{"profiles merged", len(w.Profiles), 2},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}

	// Lists replace: the child's nodes are the only ones.
	w, err = loadIn(t, dir, "list.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 1 || w.Nodes[0].Name != "n2" || w.Nodes[0].Pkg != filepath.Join(dir, "other") {
		t.Errorf("nodes = %+v, want only n2", w.Nodes)
	}

	// Two levels, and a profile merged from both files.
	w, err = loadIn(t, dir, "grand.json", Options{Profile: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Supervise || w.Duration != 5*time.Minute || w.Latency != (Range{5 * ms, 5 * ms}) || w.Faults.CrashPerSec != 1 {
		t.Errorf("grand with ci: supervise %v duration %v latency %v crash %v", w.Supervise, w.Duration, w.Latency, w.Faults.CrashPerSec)
	}
	if len(w.Files) != 3 || w.Profile != "ci" {
		t.Errorf("files %v profile %q", w.Files, w.Profile)
	}
}

func TestComposeErrors(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base.json": base,
		"a.json":    "{\n  \"extends\": \"b.json\",\n  \"duration\": \"1s\"\n}",
		"b.json":    "{\n\n  \"extends\": \"a.json\"\n}",
		"self.json": `{ "extends": "self.json" }`,
		"missing.json": `{
  "extends": "nope.json"
}`,
		"badparent.json": `{ "extends": "sub/bad.json" }`,
		"sub/bad.json": `{
  "workload": { "name": "client", "pkg": "./client" },
  "duraton": "1s"
}`,
		"badchild.json": `{
  "extends": "base.json",
  "faults": { "crash_per_sec": -1 }
}`,
		"dup.json": `{
  "extends": "base.json",
  "duration": "1s",
  "duration": "2s"
}`,
		"badprofile.json": `{
  "extends": "base.json",
  "profiles": {
    "ci": { "faults": { "crash_per_seg": 1 } },
    "ok": { "duration": "1s" }
  }
}`,
		"deepprofile.json": `{
  "extends": "base.json",
  "profiles": {
    "deep": { "extends": "x.json" }
  }
}`,
		"nameclash.json": `{
  "extends": "base.json",
  "workload": { "name": "n1", "pkg": "./client" }
}`,
		"notobj.json":    `{ "extends": "list.json" }`,
		"list.json":      `[1]`,
		"noprofile.json": `{ "workload": { "name": "client", "pkg": "./client" } }`,
	})
	tests := []struct {
		name, file string
		o          Options
		want       string
	}{
		{"cycle", "a.json", Options{}, `b.json:3: extends: "a.json" closes a cycle (a.json -> b.json -> a.json); a world cannot extend itself`},
		{"self", "self.json", Options{}, `self.json:1: extends: "self.json" closes a cycle (self.json -> self.json); a world cannot extend itself`},
		{"missing", "missing.json", Options{}, `missing.json:2: extends: cannot read "nope.json": no such file or directory; the path is relative to missing.json`},
		{"error in parent", "badparent.json", Options{}, `sub/bad.json:3: duraton: unknown field (did you mean "duration"?)`},
		{"error in child", "badchild.json", Options{}, `badchild.json:3: faults.crash_per_sec: want a rate per second of 0 or more, got -1`},
		{"repeat in child", "dup.json", Options{}, `dup.json:4: duration: set twice; it is already set on line 3`},
		{"name clash across files", "nameclash.json", Options{}, `nameclash.json:3: workload.name: "n1" is already the name of nodes[0] on base.json:2; names must be unique across nodes, workloads and finally`},
		{"parent not an object", "notobj.json", Options{}, `list.json:1: want a JSON object at the top of the file, got a list`},
		{"profile error", "badprofile.json", Options{Profile: "ci"}, `badprofile.json:4: profiles.ci.faults.crash_per_seg: unknown field (did you mean "crash_per_sec"?)`},
		{"error in a profile not selected", "badprofile.json", Options{Profile: "ok"}, `badprofile.json:4: profiles.ci.faults.crash_per_seg: unknown field (did you mean "crash_per_sec"?)`},
		{"profile extends", "deepprofile.json", Options{Profile: "deep"}, `deepprofile.json:4: profiles.deep.extends: a profile cannot set extends; set it at the top of the file`},
		{"unknown profile", "base.json", Options{Profile: "cj"}, `base.json: -profile "cj": base.json has no such profile (did you mean "ci"?)`},
		{"unknown profile list", "base.json", Options{Profile: "nightly"}, `base.json: -profile "nightly": base.json has no such profile; its profiles are ci, quick`},
		{"no profiles", "noprofile.json", Options{Profile: "ci"}, `noprofile.json: -profile "ci": noprofile.json has no such profile; it defines none (add "profiles": {"ci": {...}})`},
		{"set typo", "base.json", Options{Set: []string{"faults.crash_per_seg=1"}}, `-set: faults.crash_per_seg: unknown field (did you mean "crash_per_sec"?)`},
		{"set top typo", "base.json", Options{Set: []string{"duraton=1s"}}, `-set: duraton: unknown field (did you mean "duration"?)`},
		{"set bad value", "base.json", Options{Set: []string{"faults.crash_per_sec=-2"}}, `-set: faults.crash_per_sec: want a rate per second of 0 or more, got -2`},
		{"set bare string", "base.json", Options{Set: []string{"duration=soon"}}, `-set: duration: want a duration such as "250ms" or "2s", got "soon"`},
		{"set no equals", "base.json", Options{Set: []string{"duration"}}, `-set "duration": want path=value, such as faults.crash_per_sec=0.5 or nodes[1].args='["-x"]'`},
		{"set out of range", "base.json", Options{Set: []string{"nodes[3].args=[]"}}, `-set nodes[3].args: nodes has 1 entries, so [3] is out of range; set the whole list to add one`},
		{"set into scalar", "base.json", Options{Set: []string{"duration.x=1"}}, `-set duration.x: duration is "10s", not an object`},
		{"set extends", "base.json", Options{Set: []string{"extends=a.json"}}, `-set extends: extends cannot be set from the command line; use -c to pick the file, -profile to pick a profile`},
		{"set index of unset list", "noprofile.json", Options{Set: []string{"nodes[0].args=[]"}}, `-set nodes[0].args: nodes is not set, so it has no [0]; set the whole list`},
		{"set bad path", "base.json", Options{Set: []string{"nodes[x]=1"}}, `-set nodes[x]: [x] is not a list index such as [0]`},
	}
	for _, tt := range tests {
		_, err := loadIn(t, dir, tt.file, tt.o)
		got := "<nil>"
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	dir := writeFiles(t, map[string]string{"base.json": base})
	w, err := loadIn(t, dir, "base.json", Options{Profile: "quick", Set: []string{
		"faults.crash_per_sec=0.25",
		`nodes[0].args=["-x", "-y"]`,
		"nodes[0].env.C=three",
		"workload.pkg=./other",
		"duration=2s", // after the profile, so it wins
		"faults.partition_topologies=[\"one\"]",
		`nodes[0].files["data/seed.db"]=./seed.db`,
	}})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"crash", w.Faults.CrashPerSec, 0.25},
		{"restart_after kept", w.Faults.RestartAfter, Range{ms, 2 * ms}},
		{"args", w.Nodes[0].Args, []string{"-x", "-y"}},
		{"env", w.Nodes[0].Env, []string{"A=1", "B=2", "C=three"}},
		{"pkg against the file's dir", w.Workloads[0].Pkg, filepath.Join(dir, "other")},
		{"duration", w.Duration, 2 * time.Second},
		{"topologies", w.Faults.PartitionTopologies, []Topology{TopologyOne}},
		{"files", w.Nodes[0].Files, []FileCopy{{"data/seed.db", filepath.Join(dir, "seed.db")}}},
		{"sets", len(w.Sets), 7},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// A -set value that reaches the engine unsupported is named as such.
	w, err = loadIn(t, dir, "base.json", Options{Set: []string{"faults.clock_skew=5ms"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Unsupported(map[string]bool{"nodes": true, "workload": true, "duration": true, "profiles": true, "faults.crash_per_sec": true, "faults.restart_after": true}); err == nil ||
		err.Error() != "-set: faults.clock_skew: not supported yet" {
		t.Errorf("unsupported: %v", err)
	}
}

func TestPresets(t *testing.T) {
	// Each level adds to the one before: every field a level sets keeps
	// its value in the levels above.
	var prev map[string]bool
	for _, p := range Presets {
		src := withWorkload(`"faults": "` + string(p) + `"`)
		w := mustParse(t, src)
		if w.Faults.Preset != p {
			t.Errorf("%s: preset = %q", p, w.Faults.Preset)
		}
		set := map[string]bool{}
		for _, s := range w.set {
			set[s.path] = true
		}
		for f := range prev {
			if !set[f] {
				t.Errorf("%s drops %s, which the level below sets", p, f)
			}
		}
		if p != PresetNone && len(set) <= len(prev) {
			t.Errorf("%s adds nothing to the level below", p)
		}
		prev = set
	}

	// Fields next to the preset override it; the shorthand and the object
	// form agree.
	a := mustParse(t, withWorkload(`"faults": {"preset": "durability", "crash_per_sec": 0, "fsync_eio": 0.5}`))
	if a.Faults.CrashPerSec != 0 || a.Faults.FsyncEIO != 0.5 || !a.Faults.TornWrites || a.Faults.CrashOnIO != 0.005 {
		t.Errorf("override: %+v", a.Faults)
	}
	b := mustParse(t, withWorkload(`"faults": "resilient"`))
	c := mustParse(t, withWorkload(`"faults": {"preset": "resilient"}`))
	if !reflect.DeepEqual(b.Faults, c.Faults) || b.Faults.PartitionPerSec == 0 || b.Faults.CrashPerSec == 0 {
		t.Errorf("shorthand %+v\nobject %+v", b.Faults, c.Faults)
	}

	// A preset's field that is not supported is refused as if written,
	// at the line naming the preset, saying it came from the preset.
	w := mustParse(t, withWorkload("\"duration\": \"1s\",\n\"faults\": {\"preset\": \"high_availability\"}"))
	impl := map[string]bool{"workload": true, "duration": true, "faults.preset": true, "faults.crash_per_sec": true}
	err := w.Unsupported(impl)
	want := `seedfall.json:3: faults.torn_writes: not supported yet (set by preset "high_availability")`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if got := w.Errorf("faults.pause_per_sec", "boom").Error(); got != `seedfall.json:3: faults.pause_per_sec: boom (set by preset "high_availability")` {
		t.Errorf("Errorf = %s", got)
	}
	// A preset in a parent file, a profile and -set compose: the shorthand
	// in a child over a parent's faults object merges.
	dir := writeFiles(t, map[string]string{
		"base.json":  base,
		"child.json": `{ "extends": "base.json", "faults": "durability" }`,
	})
	w, err = loadIn(t, dir, "child.json", Options{Set: []string{"faults.torn_writes=false"}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Faults.CrashPerSec != 0.5 || w.Faults.RestartAfter != (Range{ms, 2 * ms}) || w.Faults.TornWrites || !w.Faults.StrictDirs {
		t.Errorf("child over base with preset: %+v", w.Faults)
	}
	w, err = loadIn(t, dir, "base.json", Options{Set: []string{"faults=everything"}})
	if err != nil {
		t.Fatal(err)
	}
	if w.Faults.Preset != PresetEverything || !w.Faults.Buggify || w.Faults.CrashPerSec != 0.2 {
		t.Errorf("-set faults=everything replaces the faults object with the preset: %+v", w.Faults)
	}
	if !strings.Contains(presetJSON(PresetEverything), `"crash_per_sec"`) {
		t.Errorf("everything lacks the durability level")
	}
}

func TestResolvedRoundTrip(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base/seedfall.json": base,
		"child.json": `{
  "extends": "base/seedfall.json",
  "nodes": [{ "name": "n1", "pkg": "./base/node", "files": {"z": "f1", "a/b": "/abs/f2"}, "faults": false }],
  "finally": { "name": "check", "wasm": "check.wasm" },
  "links": [{ "to": "n1", "latency": ["3ms", "4ms"] }],
  "faults": "resilient"
}`,
	})
	w, err := loadIn(t, dir, "child.json", Options{Profile: "ci", Set: []string{"faults.udp_loss=0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.Resolved(false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"pkg": "./base/node"`, `"pkg": "./base/client"`, `"wasm": "./check.wasm"`, `"a/b": "/abs/f2"`,
		`"duration": "5m0s"`, `"preset": "resilient"`, `"udp_loss": 0.5`, `"crash_per_sec": 0.5`, `"partition_per_sec": 0.1`, `"swarm": false`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("resolved world lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "profiles") || strings.Contains(string(out), "extends") {
		t.Errorf("resolved world still names profiles or extends:\n%s", out)
	}
	// Read back from the same directory, it is the same world.
	w2, err := ParseWith(out, "resolved.json", dir, Options{})
	if err != nil {
		t.Fatalf("resolved world does not parse: %v\n%s", err, out)
	}
	out2, _ := w2.Resolved(false)
	if string(out) != string(out2) {
		t.Errorf("round trip differs:\n%s\n---\n%s", out, out2)
	}
	abs, _ := w.Resolved(true)
	if !strings.Contains(string(abs), `"pkg": "`+filepath.ToSlash(filepath.Join(dir, "base", "node"))+`"`) {
		t.Errorf("absolute form:\n%s", abs)
	}
}
