package starlark

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	sl "go.starlark.net/starlark"
)

// A front end lists a schedule from its to_json() as `seedfall faults`
// does, and finds a world value's programs, without the engine.
func TestFrontendListings(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.star")
	src := `w = load_config("` + filepath.Join(mustAbs(t, "testdata/lossy"), "seedfall.json") + `")
s = schedule(seed = 3, duration = "10s", faults = [{"at": "500ms", "kind": "crash", "node": "server", "until": "600ms"}], branches = [{"at": "1s", "key": 2, "stream": "net"}, {"at": "2s", "key": 5}])
text = s.to_json()
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := NewEnv(Options{}).ExecFile(script)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := sl.AsString(g["text"])
	l, err := ListSchedule(text)
	if err != nil {
		t.Fatal(err)
	}
	want := &ScheduleListing{Seed: 3, Duration: 10 * time.Second,
		Faults:   []string{"500ms  crash server, restart at 600ms"},
		Branches: []BranchListing{{At: time.Second, Stream: "net", Key: 2}, {At: 2 * time.Second, Key: 5}}}
	if !reflect.DeepEqual(l, want) {
		t.Errorf("ListSchedule = %+v, want %+v", l, want)
	}
	if _, err := ListSchedule("{"); err == nil {
		t.Error("ListSchedule of broken JSON: no error")
	}
	if names, ok := ProgramNames(g["w"]); !ok || !slices.Equal(names, []string{"server", "client"}) {
		t.Errorf("ProgramNames(w) = %v, %v; want [server client], true", names, ok)
	}
	if _, ok := ProgramNames(g["s"]); ok {
		t.Error("ProgramNames of a schedule: ok")
	}
	if !slices.Contains(WorldFields(), "nodes[].pkg") || !slices.Contains(FaultFields(), "kind") || !slices.Contains(BranchStreams(), "net") {
		t.Errorf("WorldFields %v, FaultFields %v, BranchStreams %v: want nodes[].pkg, kind, net among them", WorldFields(), FaultFields(), BranchStreams())
	}
	if s := Suggest("nett", BranchStreams()); s != "net" {
		t.Errorf("Suggest(nett) = %q, want net", s)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
