package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/elle"
)

const ms = time.Millisecond

// parse parses a config named seedfall.json living in /proj.
func parse(t *testing.T, src string) (*World, error) {
	t.Helper()
	return Parse([]byte(src), "seedfall.json", "/proj")
}

func mustParse(t *testing.T, src string) *World {
	t.Helper()
	w, err := parse(t, src)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return w
}

// withWorkload wraps top-level fields into a world that has the one
// required field, a workload.
func withWorkload(fields string) string {
	if fields != "" {
		fields = ",\n" + fields
	}
	return "{\"workload\": {\"name\": \"client\", \"pkg\": \"./client\"}" + fields + "\n}"
}

func TestDefaults(t *testing.T) {
	w := mustParse(t, withWorkload(""))
	checks := []struct {
		name      string
		got, want any
	}{
		{"File", w.File, "seedfall.json"},
		{"Dir", w.Dir, "/proj"},
		{"Nodes", len(w.Nodes), 0},
		{"Finally", w.Finally, (*Program)(nil)},
		{"Duration", w.Duration, 30 * time.Second},
		{"Latency", w.Latency, Range{1 * ms, 10 * ms}},
		{"Links", len(w.Links), 0},
		{"FaultsAfterSetup", w.FaultsAfterSetup, false},
		{"Supervise", w.Supervise, false},
		{"NetOverlay", w.NetOverlay, false},
		{"CompatOverlay", w.CompatOverlay, false},
		{"Watchdog", w.Watchdog, 30 * time.Second},
		{"MemoryLimit", w.MemoryLimit, int64(512 << 20)},
		{"Preempt", w.Preempt, Preempt{Strategy: "none", Depth: 3, Steps: StepsAuto, Calls: 4096}},
		{"Liveness", w.Liveness, Liveness{}},
		{"Extends", w.Extends, ""},
		{"Profiles", len(w.Profiles), 0},
		{"Preset", w.Faults.Preset, Preset("")},
		{"CrashPerSec", w.Faults.CrashPerSec, 0.0},
		{"RestartAfter", w.Faults.RestartAfter, Range{10 * ms, time.Second}},
		{"PartitionPerSec", w.Faults.PartitionPerSec, 0.0},
		{"PartitionFor", w.Faults.PartitionFor, Range{50 * ms, 2 * time.Second}},
		{"PartitionTopologies", w.Faults.PartitionTopologies, []Topology{"half"}},
		{"ClogPerSec", w.Faults.ClogPerSec, 0.0},
		{"ClogFor", w.Faults.ClogFor, Range{100 * ms, 2 * time.Second}},
		{"ClogModes", w.Faults.ClogModes, []ClogMode{"stop", "slow", "jam"}},
		{"ClogDelay", w.Faults.ClogDelay, Range{10 * ms, 200 * ms}},
		{"SwizzlePerSec", w.Faults.SwizzlePerSec, 0.0},
		{"ResetPerSec", w.Faults.ResetPerSec, 0.0},
		{"UDPLoss", w.Faults.UDPLoss, 0.0},
		{"UDPDup", w.Faults.UDPDup, 0.0},
		{"SlowPerSec", w.Faults.SlowPerSec, 0.0},
		{"SlowFor", w.Faults.SlowFor, Range{500 * ms, 5 * time.Second}},
		{"SlowFactor", w.Faults.SlowFactor, 10.0},
		{"TornWrites", w.Faults.TornWrites, false},
		{"ReorderWrites", w.Faults.ReorderWrites, false},
		{"FSModel", w.Faults.FSModel, FSModel("ext4_ordered")},
		{"CrashOnIO", w.Faults.CrashOnIO, 0.0},
		{"FsyncEIO", w.Faults.FsyncEIO, 0.0},
		{"DiskBytes", w.Faults.DiskBytes, int64(0)},
		{"WriteEIO", w.Faults.WriteEIO, 0.0},
		{"WriteENOSPC", w.Faults.WriteENOSPC, 0.0},
		{"ReadEIO", w.Faults.ReadEIO, 0.0},
		{"ReadCorrupt", w.Faults.ReadCorrupt, 0.0},
		{"LostWrite", w.Faults.LostWrite, 0.0},
		{"MisdirectedWrite", w.Faults.MisdirectedWrite, 0.0},
		{"CorruptOnCrash", w.Faults.CorruptOnCrash, false},
		{"BitrotPerSec", w.Faults.BitrotPerSec, 0.0},
		{"DiskLatency", w.Faults.DiskLatency, Range{}},
		{"MmapEarlyWriteback", w.Faults.MmapEarlyWriteback, 0.0},
		{"StrictDirs", w.Faults.StrictDirs, false},
		{"SectorBytes", w.Faults.SectorBytes, int64(1)},
		{"ClockSkew", w.Faults.ClockSkew, time.Duration(0)},
		{"PausePerSec", w.Faults.PausePerSec, 0.0},
		{"PauseFor", w.Faults.PauseFor, Range{100 * ms, 3 * time.Second}},
		{"ClockJumpPerSec", w.Faults.ClockJumpPerSec, 0.0},
		{"ClockJumpMax", w.Faults.ClockJumpMax, 10 * time.Second},
		{"Buggify", w.Faults.Buggify, false},
		{"IncludeWorkload", w.Faults.IncludeWorkload, false},
		{"Swarm", w.Faults.Swarm, false},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// Every field of Faults is covered above: a new field needs a default test.
	if n := reflect.TypeOf(Faults{}).NumField(); n != 43 {
		t.Errorf("Faults has %d fields; add the new ones to this test", n)
	}
	wl := w.Workloads[0]
	want := Program{Name: "client", Pkg: "/proj/client", Role: RoleWorkload, Path: "workload", Line: 1}
	if !reflect.DeepEqual(wl, want) {
		t.Errorf("workload = %+v, want %+v", wl, want)
	}
}

// The first example of configuration-and-faults.md.
const specExample = `{
  "nodes": [
    { "name": "n1", "pkg": "./node", "args": ["-id", "n1"] },
    { "name": "n2", "pkg": "./node", "args": ["-id", "n2"] }
  ],
  "workload": { "name": "client", "pkg": "./client" },
  "duration": "60s",
  "latency": ["1ms", "5ms"],
  "supervise": true,
  "faults": {
    "crash_per_sec": 0.5,
    "restart_after": ["10ms", "500ms"],
    "partition_per_sec": 0.2,
    "partition_for": ["50ms", "1s"],
    "torn_writes": true,
    "crash_on_io": 0.005,
    "fsync_eio": 0.01,
    "strict_dirs": true,
    "clock_skew": "200ms",
    "pause_per_sec": 0.2,
    "clock_jump_per_sec": 0.05,
    "buggify": true,
    "swarm": true
  }
}`

func TestSpecExample(t *testing.T) {
	w := mustParse(t, specExample)
	var names []string
	for _, p := range w.Programs() {
		names = append(names, p.Role.String()+":"+p.Name+":"+p.Pkg+":"+strings.Join(p.Args, " "))
	}
	wantNames := []string{"node:n1:/proj/node:-id n1", "node:n2:/proj/node:-id n2", "workload:client:/proj/client:"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("programs = %q, want %q", names, wantNames)
	}
	if p := w.Program("n2"); p == nil || p != &w.Nodes[1] {
		t.Errorf("Program(n2) = %v, want the second node", p)
	}
	if p := w.Program("n9"); p != nil {
		t.Errorf("Program(n9) = %v, want nil", p)
	}
	f := w.Faults
	checks := []struct {
		name      string
		got, want any
	}{
		{"duration", w.Duration, 60 * time.Second},
		{"latency", w.Latency, Range{1 * ms, 5 * ms}},
		{"supervise", w.Supervise, true},
		{"crash_per_sec", f.CrashPerSec, 0.5},
		{"restart_after", f.RestartAfter, Range{10 * ms, 500 * ms}},
		{"partition_per_sec", f.PartitionPerSec, 0.2},
		{"partition_for", f.PartitionFor, Range{50 * ms, time.Second}},
		{"torn_writes", f.TornWrites, true},
		{"crash_on_io", f.CrashOnIO, 0.005},
		{"fsync_eio", f.FsyncEIO, 0.01},
		{"strict_dirs", f.StrictDirs, true},
		{"clock_skew", f.ClockSkew, 200 * ms},
		{"pause_per_sec", f.PausePerSec, 0.2},
		{"clock_jump_per_sec", f.ClockJumpPerSec, 0.05},
		{"buggify", f.Buggify, true},
		{"swarm", f.Swarm, true},
		{"pause_for untouched", f.PauseFor, Range{100 * ms, 3 * time.Second}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestEveryField sets every field of the format to a non-default value and
// checks what it decodes to.
func TestEveryField(t *testing.T) {
	src := `{
  "nodes": [
    { "name": "n1", "wasm": "bin/n1.wasm", "env": {"B": "2", "A": "1"}, "faults": false,
      "disk": "seed", "files": {"z/b": "host/b", "a": "/abs/a"}, "upgrade_to": "./node2", "memory_limit": "64MiB" },
    { "name": "n2", "pkg": "node", "env": ["Z=1", "A=x=y"], "args": ["-v"] },
    { "name": "n3", "pkg": "node" }
  ],
  "workloads": [{ "name": "reader", "pkg": "./client", "faults": true }],
  "workload": { "name": "writer", "pkg": "./client" },
  "finally": { "name": "check", "pkg": "./check", "faults": false },
  "liveness": { "within": "5s" },
  "duration": "1m",
  "latency": ["2ms", "3ms"],
  "links": [{ "from": "n1", "to": "n2", "latency": ["20ms", "80ms"] }, { "to": "n3", "latency": ["1ms", "1ms"] }],
  "faults_after_setup": true,
  "supervise": true,
  "net_overlay": true,
  "compat_overlay": true,
  "coverage": true, "coverage_packages": ["example.com/app/...", "go.etcd.io/raft/v3"],
  "watchdog": "1s", "memory_limit": "2GiB",
  "consistency": ["snapshot-isolation", "strong-session-serializable"],
  "preempt": { "strategy": "pct", "depth": 4, "steps": 1000, "calls": 4194304, "loops": true },
  "cpu": { "ns_per_call": 2.5, "jitter": 0.5 },
  "faults": {
    "preset": "high_availability",
    "crash_per_sec": 1, "restart_after": ["1ms", "2ms"],
    "partition_per_sec": 2, "partition_for": ["3ms", "4ms"],
    "partition_topologies": ["majorities_ring", "majority", "one", "random_groups", "half"],
    "clog_per_sec": 3, "clog_for": ["5ms", "6ms"], "clog_modes": ["jam"], "clog_delay": ["7ms", "8ms"],
    "swizzle_per_sec": 4, "reset_per_sec": 5, "udp_loss": 0.1, "udp_dup": 0.2,
    "slow_per_sec": 6, "slow_for": ["9ms", "10ms"], "slow_factor": 1,
    "torn_writes": true, "reorder_writes": true, "fs_model": "dir_reorder", "sector_bytes": 4096,
    "crash_on_io": 0.3, "fsync_eio": 0.4, "disk_bytes": 1048576,
    "write_eio": 0.5, "write_enospc": 0.6, "read_eio": 0.7, "read_corrupt": 0.8,
    "lost_write": 0.9, "misdirected_write": 1, "corrupt_on_crash": true, "bitrot_per_sec": 7,
    "disk_latency": ["11ms", "12ms"], "mmap_early_writeback": 0.05, "strict_dirs": true,
    "clock_skew": "13ms", "pause_per_sec": 8, "pause_for": ["14ms", "15ms"],
    "clock_jump_per_sec": 9, "clock_jump_max": "16ms",
    "buggify": true, "include_workload": true, "swarm": true
  },
  "profiles": { "ci": { "duration": "5m" } }
}`
	w := mustParse(t, src)
	no, yes := false, true
	wantNodes := []Program{
		{Name: "n1", Wasm: "/proj/bin/n1.wasm", Env: []string{"A=1", "B=2"}, Faults: &no, Disk: "/proj/seed",
			Files: []FileCopy{{"a", "/abs/a"}, {"z/b", "/proj/host/b"}}, UpgradeTo: "/proj/node2", MemoryLimit: 64 << 20,
			Role: RoleNode, Path: "nodes[0]", Line: 3},
		{Name: "n2", Pkg: "/proj/node", Args: []string{"-v"}, Env: []string{"Z=1", "A=x=y"}, Role: RoleNode, Path: "nodes[1]", Line: 5},
		{Name: "n3", Pkg: "/proj/node", Role: RoleNode, Path: "nodes[2]", Line: 6},
	}
	if !reflect.DeepEqual(w.Nodes, wantNodes) {
		t.Errorf("nodes:\n got %+v\nwant %+v", w.Nodes, wantNodes)
	}
	wantWorkloads := []Program{
		{Name: "writer", Pkg: "/proj/client", Role: RoleWorkload, Path: "workload", Line: 9},
		{Name: "reader", Pkg: "/proj/client", Faults: &yes, Role: RoleWorkload, Path: "workloads[0]", Line: 8},
	}
	if !reflect.DeepEqual(w.Workloads, wantWorkloads) {
		t.Errorf("workloads:\n got %+v\nwant %+v", w.Workloads, wantWorkloads)
	}
	wantFinally := &Program{Name: "check", Pkg: "/proj/check", Faults: &no, Role: RoleFinally, Path: "finally", Line: 10}
	if !reflect.DeepEqual(w.Finally, wantFinally) {
		t.Errorf("finally = %+v, want %+v", w.Finally, wantFinally)
	}
	wantLinks := []Link{{"n1", "n2", Range{20 * ms, 80 * ms}, 14}, {"", "n3", Range{ms, ms}, 14}}
	if !reflect.DeepEqual(w.Links, wantLinks) {
		t.Errorf("links = %+v, want %+v", w.Links, wantLinks)
	}
	wantFaults := Faults{
		Preset:      "high_availability",
		CrashPerSec: 1, RestartAfter: Range{1 * ms, 2 * ms},
		PartitionPerSec: 2, PartitionFor: Range{3 * ms, 4 * ms},
		PartitionTopologies: []Topology{"majorities_ring", "majority", "one", "random_groups", "half"},
		ClogPerSec:          3, ClogFor: Range{5 * ms, 6 * ms}, ClogModes: []ClogMode{"jam"}, ClogDelay: Range{7 * ms, 8 * ms},
		SwizzlePerSec: 4, ResetPerSec: 5, UDPLoss: 0.1, UDPDup: 0.2,
		SlowPerSec: 6, SlowFor: Range{9 * ms, 10 * ms}, SlowFactor: 1,
		TornWrites: true, ReorderWrites: true, FSModel: "dir_reorder", SectorBytes: 4096,
		CrashOnIO: 0.3, FsyncEIO: 0.4, DiskBytes: 1048576,
		WriteEIO: 0.5, WriteENOSPC: 0.6, ReadEIO: 0.7, ReadCorrupt: 0.8,
		LostWrite: 0.9, MisdirectedWrite: 1, CorruptOnCrash: true, BitrotPerSec: 7,
		DiskLatency: Range{11 * ms, 12 * ms}, MmapEarlyWriteback: 0.05, StrictDirs: true,
		ClockSkew: 13 * ms, PausePerSec: 8, PauseFor: Range{14 * ms, 15 * ms},
		ClockJumpPerSec: 9, ClockJumpMax: 16 * ms,
		Buggify: true, IncludeWorkload: true, Swarm: true,
	}
	if !reflect.DeepEqual(w.Faults, wantFaults) {
		t.Errorf("faults:\n got %+v\nwant %+v", w.Faults, wantFaults)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"liveness", w.Liveness, Liveness{5 * time.Second}},
		{"duration", w.Duration, time.Minute},
		{"latency", w.Latency, Range{2 * ms, 3 * ms}},
		{"faults_after_setup", w.FaultsAfterSetup, true},
		{"supervise", w.Supervise, true},
		{"net_overlay", w.NetOverlay, true},
		{"compat_overlay", w.CompatOverlay, true},
		{"coverage", w.Coverage, true},
		{"coverage_packages", w.CoveragePackages, []string{"example.com/app/...", "go.etcd.io/raft/v3"}},
		{"watchdog", w.Watchdog, time.Second},
		{"memory_limit", w.MemoryLimit, int64(2 << 30)},
		{"consistency", w.Consistency, []string{"snapshot-isolation", "strong-session-serializable"}},
		{"preempt", w.Preempt, Preempt{Strategy: "pct", Depth: 4, Steps: 1000, Calls: 4194304, Loops: true}},
		{"cpu", w.CPU, CPU{NsPerCall: 2.5, Jitter: 0.5}},
		{"profile names", len(w.Profiles), 1},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p := w.Profiles[0]; p.Name != "ci" || p.File != "seedfall.json" || p.Line != strings.Count(src[:strings.Index(src, `"profiles"`)], "\n")+1 {
		t.Errorf("profile = %+v", p)
	}

	// Every field above is set to a non-default value, so every path of
	// Fields must be reported by Unsupported with an empty implemented set,
	// and none may be missing from Fields.
	fields := Fields()
	seen := map[string]bool{}
	for _, s := range w.set {
		if !slices.Contains(fields, s.generic) {
			t.Errorf("recorded path %q is not in Fields()", s.generic)
		}
		seen[s.generic] = true
	}
	for _, f := range fields {
		// The other roles share the program fields that nodes[] covers;
		// this file sets only some of them. Interleave conflicts with
		// "strategy": "pct", so TestUnsupportedInterleave covers it.
		_, field, _ := strings.Cut(f, ".")
		switch {
		case seen[f]:
		case (strings.HasPrefix(f, "workload") || strings.HasPrefix(f, "finally.")) && seen["nodes[]."+field]:
		case f == "preempt.interleave":
		case f == "extends": // needs a real file: TestExtends
		default:
			t.Errorf("field %q was set to a non-default value but not recorded", f)
		}
	}
}

func TestFieldsUnique(t *testing.T) {
	fields := Fields()
	sorted := slices.Clone(fields)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(fields) {
		t.Errorf("Fields() has duplicates: %q", fields)
	}
	for _, want := range []string{"nodes[].disk", "faults.torn_writes", "preempt.strategy", "liveness.within",
		"faults_after_setup", "compat_overlay", "faults.preset", "extends", "profiles", "links[].latency", "finally.name"} {
		if !slices.Contains(fields, want) {
			t.Errorf("Fields() lacks %q", want)
		}
	}
}

func TestErrors(t *testing.T) {
	txnModels := strings.Join(elle.TransactionalModels(), ", ")
	tests := []struct {
		name string
		src  string
		want string
	}{
		// Syntax and shape.
		{"empty file", "", "seedfall.json:1: empty file; want a JSON object such as {\"workload\": {\"name\": \"client\", \"pkg\": \"./client\"}}"},
		{"not an object", "[1]", "seedfall.json:1: want a JSON object at the top of the file, got a list"},
		{"syntax", "{\n\"duration\": \"1s\"\n\"supervise\": true}", "seedfall.json:3: syntax error: invalid character '\"' after object key:value pair"},
		{"trailing comma", "{\n\"duration\": \"1s\",\n}", "seedfall.json:3: syntax error: trailing comma before '}'; JSON allows none"},
		{"ends early", "{\n\"duration\": \"1s\",\n", "seedfall.json:2: syntax error: the file ends early; is a closing '}' or ']' missing?"},
		{"extra data", "{}\n{}", "seedfall.json:2: syntax error: invalid character '{' after top-level value"},
		{"set twice", withWorkload(`"duration": "1s",` + "\n" + `"duration": "2s"`), "seedfall.json:3: duration: set twice; it is already set on line 2"},
		{"no workload", `{"nodes": []}`, `seedfall.json:1: no workload; add "workload": {"name": "client", "pkg": "./client"}, the program that checks the system`},
		{"empty workloads", `{"workloads": []}`, `seedfall.json:1: no workload; add "workload": {"name": "client", "pkg": "./client"}, the program that checks the system`},

		// Types.
		{"want number", withWorkload(`"faults": {"crash_per_sec": "fast"}`), `seedfall.json:2: faults.crash_per_sec: want a number, got "fast"`},
		{"want bool", withWorkload(`"supervise": "yes"`), `seedfall.json:2: supervise: want true or false, got "yes"`},
		{"want string", `{"workload": {"name": 1, "pkg": "./c"}}`, `seedfall.json:1: workload.name: want a string, got 1`},
		{"want object", withWorkload(`"faults": 3`), `seedfall.json:2: faults: want an object of fault settings, or a preset name such as "resilient", got 3`},
		{"want list", withWorkload(`"nodes": {"name": "n1"}`), `seedfall.json:2: nodes: want a list of programs, got an object`},
		{"null", withWorkload(`"duration": null`), `seedfall.json:2: duration: want a duration such as "250ms", got null`},
		{"number out of range", withWorkload(`"faults": {"crash_per_sec": 1e999}`), `seedfall.json:2: faults.crash_per_sec: number 1e999 is out of range`},

		// Durations and ranges.
		{"bad duration", withWorkload(`"duration": "5 seconds"`), `seedfall.json:2: duration: want a duration such as "250ms" or "2s", got "5 seconds"`},
		{"duration number", withWorkload(`"duration": 5`), `seedfall.json:2: duration: want a duration such as "250ms", got 5`},
		{"duration zero", withWorkload(`"duration": "0s"`), `seedfall.json:2: duration: want a duration above 0, got "0s"`},
		{"negative duration", withWorkload(`"faults": {"clock_skew": "-1s"}`), `seedfall.json:2: faults.clock_skew: want a duration of 0 or more, got "-1s"`},
		{"watchdog zero", withWorkload(`"watchdog": "0s"`), `seedfall.json:2: watchdog: want a duration above 0, got "0s"`},

		// Consistency models.
		{"consistency typo", withWorkload(`"consistency": "serialisable"`), `seedfall.json:2: consistency: unknown consistency model "serialisable" (did you mean "serializable"?); the models are ` + txnModels},
		{"consistency unknown", withWorkload(`"consistency": ["serializable", "acid"]`), `seedfall.json:2: consistency[1]: unknown consistency model "acid"; the models are ` + txnModels},
		{"consistency single-object", withWorkload(`"consistency": "linearizable"`), `seedfall.json:2: consistency: "linearizable" forbids no anomaly that a check of transactions finds, so a check for it alone always passes; the models are ` + txnModels},
		{"consistency empty", withWorkload(`"consistency": []`), `seedfall.json:2: consistency: empty list; name at least one model, such as "strict-serializable" or "serializable"`},
		{"consistency twice", withWorkload(`"consistency": ["serializable", "serializable"]`), `seedfall.json:2: consistency[1]: "serializable" is listed twice`},
		{"consistency number", withWorkload(`"consistency": 3`), `seedfall.json:2: consistency: want a consistency model such as "serializable", or a list of them, got 3`},
		{"range not list", withWorkload(`"latency": "5ms"`), `seedfall.json:2: latency: want a range such as ["1ms", "10ms"], got "5ms"`},
		{"range length", withWorkload(`"latency": ["1ms"]`), `seedfall.json:2: latency: want a range of two durations such as ["1ms", "10ms"], got 1 values`},
		{"range element", withWorkload(`"latency": ["1ms", 2]`), `seedfall.json:2: latency[1]: want a duration such as "250ms", got 2`},
		{"range order", withWorkload(`"faults": {"partition_for": ["2s", "1s"]}`), `seedfall.json:2: faults.partition_for: the minimum 2s is above the maximum 1s; write [min, max]`},

		// Rates and probabilities.
		{"probability above 1", withWorkload(`"faults": {"udp_loss": 1.5}`), `seedfall.json:2: faults.udp_loss: want a probability between 0 and 1, got 1.5`},
		{"probability negative", withWorkload(`"faults": {"crash_on_io": -0.1}`), `seedfall.json:2: faults.crash_on_io: want a probability between 0 and 1, got -0.1`},
		{"negative rate", withWorkload(`"faults": {"crash_per_sec": -1}`), `seedfall.json:2: faults.crash_per_sec: want a rate per second of 0 or more, got -1`},
		{"slow factor", withWorkload(`"faults": {"slow_factor": 0.5}`), `seedfall.json:2: faults.slow_factor: want a factor of 1 or more, got 0.5`},
		{"disk bytes fraction", withWorkload(`"faults": {"disk_bytes": 1.5}`), `seedfall.json:2: faults.disk_bytes: want a whole number, got 1.5`},
		{"disk bytes negative", withWorkload(`"faults": {"disk_bytes": -1}`), `seedfall.json:2: faults.disk_bytes: want a size in bytes of 0 (unlimited) or more, got -1`},
		{"sector bytes not a power of two", withWorkload(`"faults": {"sector_bytes": 1000}`), `seedfall.json:2: faults.sector_bytes: want 1 (tear at any byte) or a power of two from 512 to 4096, got 1000`},
		{"sector bytes too small", withWorkload(`"faults": {"sector_bytes": 256}`), `seedfall.json:2: faults.sector_bytes: want 1 (tear at any byte) or a power of two from 512 to 4096, got 256`},
		{"sector bytes too large", withWorkload(`"faults": {"sector_bytes": 8192}`), `seedfall.json:2: faults.sector_bytes: want 1 (tear at any byte) or a power of two from 512 to 4096, got 8192`},
		{"sector bytes zero", withWorkload(`"faults": {"sector_bytes": 0}`), `seedfall.json:2: faults.sector_bytes: want 1 (tear at any byte) or a power of two from 512 to 4096, got 0`},
		{"sector bytes fraction", withWorkload(`"faults": {"sector_bytes": 512.5}`), `seedfall.json:2: faults.sector_bytes: want a whole number, got 512.5`},
		{"sector bytes string", withWorkload(`"faults": {"sector_bytes": "4k"}`), `seedfall.json:2: faults.sector_bytes: want a number, got "4k"`},

		// Enumerations.
		{"preset", withWorkload(`"faults": {"preset": "resilent"}`), `seedfall.json:2: faults.preset: unknown preset "resilent" (did you mean "resilient"?)`},
		{"preset shorthand", withWorkload(`"faults": "chaos"`), `seedfall.json:2: faults: unknown preset "chaos"; want "none", "durability", "resilient", "high_availability" or "everything"`},
		{"topology", withWorkload(`"faults": {"partition_topologies": ["half", "ring"]}`), `seedfall.json:2: faults.partition_topologies[1]: unknown topology "ring"; want "half", "one", "majority", "majorities_ring" or "random_groups"`},
		{"topology twice", withWorkload(`"faults": {"partition_topologies": ["half", "half"]}`), `seedfall.json:2: faults.partition_topologies[1]: "half" is listed twice`},
		{"no topology", withWorkload(`"faults": {"partition_topologies": []}`), `seedfall.json:2: faults.partition_topologies: empty list; name at least one topology, from "half", "one", "majority", "majorities_ring" or "random_groups"`},
		{"clog mode", withWorkload(`"faults": {"clog_modes": ["stop", "drop"]}`), `seedfall.json:2: faults.clog_modes[1]: unknown clog mode "drop"; want "stop", "slow" or "jam"`},
		{"fs model", withWorkload(`"faults": {"reorder_writes": true, "fs_model": "ext4"}`), `seedfall.json:2: faults.fs_model: unknown file system model "ext4" (did you mean "ext4_ordered"?)`},
		{"fs model far", withWorkload(`"faults": {"reorder_writes": true, "fs_model": "zfs"}`), `seedfall.json:2: faults.fs_model: unknown file system model "zfs"; want "ext4_ordered", "page_independent" or "dir_reorder"`},
		{"strategy", withWorkload(`"preempt": {"strategy": "randm"}`), `seedfall.json:2: preempt.strategy: unknown strategy "randm" (did you mean "random"?)`},
		{"strategy far", withWorkload(`"preempt": {"strategy": "rnd"}`), `seedfall.json:2: preempt.strategy: unknown strategy "rnd"; want "none", "random", "pct" or "calls"`},

		// Cross-field rules.
		{"fs_model without reorder_writes", withWorkload(`"faults": {"fs_model": "ext4_ordered"}`), `seedfall.json:2: faults.fs_model: has no effect without "reorder_writes": true; set that too, or remove fs_model`},
		{"dir_reorder without strict_dirs", withWorkload(`"faults": {"reorder_writes": true,` + "\n" + `"fs_model": "dir_reorder"}`), `seedfall.json:3: faults.fs_model: "dir_reorder" needs "strict_dirs": true, since it reorders directory operations that only strict_dirs makes pending`},
		{"majority with 2", withWorkload(`"nodes": [{"name": "n1", "pkg": "./n"}],` + "\n" + `"faults": {"partition_topologies": ["majority"]}`), `seedfall.json:3: faults.partition_topologies: majority needs at least 3 nodes, workload included; this world has 2`},
		{"ring with 3", withWorkload(`"nodes": [{"name": "n1", "pkg": "./n"}, {"name": "n2", "pkg": "./n"}],` + "\n" + `"faults": {"partition_topologies": ["majorities_ring"]}`), `seedfall.json:3: faults.partition_topologies: majorities_ring needs at least 4 nodes, workload included; this world has 3`},
		{"interleave with pct", withWorkload(`"preempt": {"interleave": true,` + "\n" + `"strategy": "pct"}`), `seedfall.json:3: preempt.strategy: "pct" conflicts with "interleave": true, which means "random"; set "interleave": false to use "pct"`},
		{"calls too many", withWorkload(`"preempt": {"calls": 4194305}`), `seedfall.json:2: preempt.calls: want a call count from 1 to 4194304, got 4194305`},
		{"calls zero", withWorkload(`"preempt": {"calls": 0}`), `seedfall.json:2: preempt.calls: want a call count from 1 to 4194304, got 0`},
		{"depth huge", withWorkload(`"preempt": {"depth": 1e300}`), `seedfall.json:2: preempt.depth: number 1e300 is too large`},
		{"depth fraction", withWorkload(`"preempt": {"depth": 2.5}`), `seedfall.json:2: preempt.depth: want a whole number, got 2.5`},
		{"cpu negative", withWorkload(`"cpu": {"ns_per_call": -1}`), `seedfall.json:2: cpu.ns_per_call: want nanoseconds per counted call from 0 (free CPU) to 1e+06, got -1`},
		{"cpu jitter", withWorkload(`"cpu": {"jitter": 1}`), `seedfall.json:2: cpu.jitter: want a jitter from 0 to 0.9, got 1`},
		{"link to unknown", withWorkload(`"nodes": [{"name": "n1", "pkg": "./n"}],` + "\n" + `"links": [{"to": "n2", "latency": ["1ms", "2ms"]}]`), `seedfall.json:3: links[0].to: no program is named "n2" (did you mean "n1"?)`},
		{"link from unknown", withWorkload(`"links": [{"from": "server", "latency": ["1ms", "2ms"]}]`), `seedfall.json:2: links[0].from: no program is named "server"; the programs are client`},
		{"link without latency", withWorkload(`"links": [{"to": "client"}]`), `seedfall.json:2: links[0]: needs "latency", such as ["20ms", "80ms"]`},

		// Programs.
		{"duplicate name", withWorkload(`"nodes": [{"name": "n1", "pkg": "./n"},` + "\n" + `{"name": "n1", "pkg": "./n"}]`), `seedfall.json:3: nodes[1].name: "n1" is already the name of nodes[0] on line 2; names must be unique across nodes, workloads and finally`},
		{"name shared with workload", withWorkload(`"finally": {"name": "client", "pkg": "./c"}`), `seedfall.json:2: finally.name: "client" is already the name of workload on line 1; names must be unique across nodes, workloads and finally`},
		{"name uppercase", `{"workload": {"name": "Client", "pkg": "./c"}}`, `seedfall.json:1: workload.name: name "Client" is not a valid DNS label; use only lowercase letters, digits and '-'`},
		{"name underscore", `{"workload": {"name": "my_client", "pkg": "./c"}}`, `seedfall.json:1: workload.name: name "my_client" is not a valid DNS label; use only lowercase letters, digits and '-'`},
		{"name dash", `{"workload": {"name": "-c", "pkg": "./c"}}`, `seedfall.json:1: workload.name: name "-c" starts or ends with '-'; a name is a DNS label`},
		{"name empty", `{"workload": {"name": "", "pkg": "./c"}}`, `seedfall.json:1: workload.name: empty name; use lowercase letters, digits and '-', such as "n1"`},
		{"name long", `{"workload": {"name": "` + strings.Repeat("a", 64) + `", "pkg": "./c"}}`, `seedfall.json:1: workload.name: name "` + strings.Repeat("a", 64) + `" is longer than 63 characters, the limit of a DNS label`},
		{"no name", `{"workload": {"pkg": "./c"}}`, `seedfall.json:1: workload: needs a "name"`},
		{"no pkg", `{"workload": {"name": "c"}}`, `seedfall.json:1: workload: needs "pkg" (a directory with a Go main package) or "wasm" (a prebuilt module)`},
		{"pkg and wasm", "{\"workload\": {\"name\": \"c\", \"pkg\": \"./c\",\n\"wasm\": \"c.wasm\"}}", `seedfall.json:2: workload.wasm: set "pkg" or "wasm", not both`},
		{"empty pkg", `{"workload": {"name": "c", "pkg": ""}}`, `seedfall.json:1: workload.pkg: empty path; give a path relative to seedfall.json`},
		{"args not strings", `{"workload": {"name": "c", "pkg": "./c", "args": ["-n", 3]}}`, `seedfall.json:1: workload.args[1]: want a string, got 3`},
		{"finally with faults", withWorkload(`"finally": {"name": "f", "pkg": "./f", "faults": true}`), `seedfall.json:2: finally.faults: the finally check never takes faults; remove this field`},
		{"program not object", withWorkload(`"nodes": ["n1"]`), `seedfall.json:2: nodes[0]: want a program such as {"name": "n1", "pkg": "./node"}, got "n1"`},

		// Env.
		{"env key with =", `{"workload": {"name": "c", "pkg": "./c", "env": {"A=B": "1"}}}`, `seedfall.json:1: workload.env["A=B"]: variable name "A=B" contains '='`},
		{"env empty key", `{"workload": {"name": "c", "pkg": "./c", "env": {"": "1"}}}`, `seedfall.json:1: workload.env[""]: empty variable name`},
		{"env list empty key", `{"workload": {"name": "c", "pkg": "./c", "env": ["=1"]}}`, `seedfall.json:1: workload.env[0]: empty variable name`},
		{"env list no =", `{"workload": {"name": "c", "pkg": "./c", "env": ["DEBUG"]}}`, `seedfall.json:1: workload.env[0]: want "NAME=value", got "DEBUG"`},
		{"env list twice", `{"workload": {"name": "c", "pkg": "./c", "env": ["A=1", "A=2"]}}`, `seedfall.json:1: workload.env[1]: A is set twice`},
		{"env reserved", `{"workload": {"name": "c", "pkg": "./c", "env": {"SEEDFALL_NODE": "x"}}}`, `seedfall.json:1: workload.env.SEEDFALL_NODE: SEEDFALL_NODE is set by seedfall for every node; remove it`},
		{"env value not string", `{"workload": {"name": "c", "pkg": "./c", "env": {"A": 1}}}`, `seedfall.json:1: workload.env.A: want a string, got 1`},
		{"env wrong type", `{"workload": {"name": "c", "pkg": "./c", "env": "A=1"}}`, `seedfall.json:1: workload.env: want {"NAME": "value"} or ["NAME=value"], got "A=1"`},

		// Files.
		{"files absolute", `{"workload": {"name": "c", "pkg": "./c", "files": {"/etc/x": "x"}}}`, `seedfall.json:1: workload.files["/etc/x"]: disk path is absolute; write it relative to the node's disk, such as "data/seed.db"`},
		{"files escape", `{"workload": {"name": "c", "pkg": "./c", "files": {"a/../../x": "x"}}}`, `seedfall.json:1: workload.files["a/../../x"]: disk path does not name a file on the node's disk`},
		{"files twice", `{"workload": {"name": "c", "pkg": "./c", "files": {"a/b": "x", "a//b": "y"}}}`, `seedfall.json:1: workload.files["a//b"]: "a/b" is copied twice`},
		{"files host not string", `{"workload": {"name": "c", "pkg": "./c", "files": {"a": 1}}}`, `seedfall.json:1: workload.files.a: want a string, got 1`},

		// Extends and profiles.
		{"extends empty", withWorkload(`"extends": ""`), `seedfall.json:2: extends: empty path; name the world file this one extends, or remove the field`},
		{"profile not object", withWorkload(`"profiles": {"ci": "fast"}`), `seedfall.json:2: profiles.ci: want an object with the fields this profile changes, got "fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Errorf("error is %T, want *Error", err)
			}
		})
	}
}

func TestUnknownFields(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"top", withWorkload(`"duraton": "1s"`), `seedfall.json:2: duraton: unknown field (did you mean "duration"?)`},
		{"top plural", `{"worklaods": []}`, `seedfall.json:1: worklaods: unknown field (did you mean "workloads"?)`},
		{"top case", withWorkload(`"Supervise": true`), `seedfall.json:2: Supervise: unknown field (did you mean "supervise"?)`},
		{"nodes[2]", withWorkload(`"nodes": [
  {"name": "n1", "pkg": "./n"},
  {"name": "n2", "pkg": "./n"},
  {"name": "n3", "pkg": "./n",
   "agrs": ["-x"]}
]`), `seedfall.json:6: nodes[2].agrs: unknown field (did you mean "args"?)`},
		{"nodes no suggestion", withWorkload(`"nodes": [{"name": "n1", "pkg": "./n", "cpu": 2}]`), `seedfall.json:2: nodes[0].cpu: unknown field; valid fields are name, pkg, wasm, args, env, faults, disk, files, upgrade_to, memory_limit`},
		{"faults", withWorkload(`"faults": {
  "crash_per_second": 1
}`), `seedfall.json:3: faults.crash_per_second: unknown field (did you mean "crash_per_sec"?)`},
		{"faults ambiguous prefix", withWorkload(`"faults": {"crash": 1}`), `seedfall.json:2: faults.crash: unknown field`},
		{"faults no suggestion", withWorkload(`"faults": {"meteor_strike": 1}`), `seedfall.json:2: faults.meteor_strike: unknown field`},
		{"preempt", withWorkload(`"preempt": {"stratgy": "pct"}`), `seedfall.json:2: preempt.stratgy: unknown field (did you mean "strategy"?)`},
		{"links[0]", withWorkload(`"links": [
  {"to": "client", "latncy": ["1ms", "2ms"]}
]`), `seedfall.json:3: links[0].latncy: unknown field (did you mean "latency"?)`},
		{"finally upgrade", withWorkload(`"finally": {"name": "f", "pkg": "./f", "upgrade_to": "./g"}`), `seedfall.json:2: finally.upgrade_to: the finally check never restarts, so it would never run its upgrade; remove this field`},
		{"liveness", withWorkload(`"liveness": {"whithin": "1s"}`), `seedfall.json:2: liveness.whithin: unknown field (did you mean "within"?)`},
		{"finally", withWorkload(`"finally": {"name": "f", "pkg": "./f", "upgrade": "./g"}`), `seedfall.json:2: finally.upgrade: unknown field (did you mean "upgrade_to"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			if err == nil || err.Error() != tt.want {
				t.Errorf("error:\n got %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestLines(t *testing.T) {
	// Each error sits on a different line of one file; the file is valid
	// once the marked line is replaced by a harmless one.
	base := []string{
		`{`,                                   // 1
		`  "nodes": [`,                        // 2
		`    {"name": "n1", "pkg": "./n"},`,   // 3
		`    {`,                               // 4
		`      "name": "n2",`,                 // 5
		`      "pkg": "./n"`,                  // 6
		`    }`,                               // 7
		`  ],`,                                // 8
		``,                                    // 9
		`  "workload": {`,                     // 10
		`    "name": "client",`,               // 11
		`    "pkg": "./client"`,               // 12
		`  },`,                                // 13
		`  "faults": {`,                       // 14
		`    "crash_per_sec": 0.5,`,           // 15
		`    "restart_after": ["1ms", "2ms"]`, // 16
		`  }`,                                 // 17
		`}`,                                   // 18
	}
	if _, err := parse(t, strings.Join(base, "\n")); err != nil {
		t.Fatalf("base file: %v", err)
	}
	tests := []struct {
		line    int
		replace string
		want    string
	}{
		{5, `      "name": "N2",`, `seedfall.json:5: nodes[1].name: name "N2" is not a valid DNS label; use only lowercase letters, digits and '-'`},
		{6, `      "pkg": 7`, `seedfall.json:6: nodes[1].pkg: want a string, got 7`},
		{11, `    "name": "n1",`, `seedfall.json:11: workload.name: "n1" is already the name of nodes[0] on line 3; names must be unique across nodes, workloads and finally`},
		{15, `    "crash_per_sec": "fast",`, `seedfall.json:15: faults.crash_per_sec: want a number, got "fast"`},
		{16, `    "restart_after": ["1ms", "2ms"],`, `seedfall.json:17: syntax error: trailing comma before '}'; JSON allows none`},
		{16, `    "restart_after": ["1ms",` + "\n" + `"x"]`, `seedfall.json:17: faults.restart_after[1]: want a duration such as "250ms" or "2s", got "x"`},
		{9, `  "net_overlay": tru,`, `seedfall.json:9: syntax error: invalid character ',' in literal true (expecting 'e')`},
	}
	for _, tt := range tests {
		lines := slices.Clone(base)
		lines[tt.line-1] = tt.replace
		_, err := parse(t, strings.Join(lines, "\n"))
		if err == nil || err.Error() != tt.want {
			t.Errorf("line %d:\n got %v\nwant %s", tt.line, err, tt.want)
		}
	}
}

func TestByteOrderMark(t *testing.T) {
	w, err := parse(t, "\uFEFF"+withWorkload(`"duration": "1s"`))
	if err != nil || w.Duration != time.Second || w.Line("duration") != 2 {
		t.Errorf("file with a byte order mark: %v", err)
	}
}

func TestEnv(t *testing.T) {
	tests := []struct {
		env  string
		want []string
	}{
		{`{"B": "2", "A": "1", "C": ""}`, []string{"A=1", "B=2", "C="}},
		{`["B=2", "A=1", "C="]`, []string{"B=2", "A=1", "C="}},
		{`["URL=http://x/?a=b"]`, []string{"URL=http://x/?a=b"}},
		{`{}`, nil},
		{`[]`, nil},
	}
	for _, tt := range tests {
		w := mustParse(t, `{"workload": {"name": "c", "pkg": "./c", "env": `+tt.env+`}}`)
		if got := w.Workloads[0].Env; !slices.Equal(got, tt.want) {
			t.Errorf("env %s = %q, want %q", tt.env, got, tt.want)
		}
	}
}

func TestPaths(t *testing.T) {
	src := `{"workload": {"name": "c", "pkg": "./client", "disk": "../data/", "upgrade_to": "cmd/v2",
	"files": {"./etc//conf": "conf.json", "b": "/abs/./b"}},
	"finally": {"name": "f", "wasm": "/opt/f.wasm"}}`
	tests := []struct {
		dir  string
		want Program
	}{
		{"/proj", Program{Pkg: "/proj/client", Disk: "/data", UpgradeTo: "/proj/cmd/v2",
			Files: []FileCopy{{"b", "/abs/b"}, {"etc/conf", "/proj/conf.json"}}}},
		{"/a/b/", Program{Pkg: "/a/b/client", Disk: "/a/data", UpgradeTo: "/a/b/cmd/v2",
			Files: []FileCopy{{"b", "/abs/b"}, {"etc/conf", "/a/b/conf.json"}}}},
	}
	for _, tt := range tests {
		w, err := Parse([]byte(src), "seedfall.json", tt.dir)
		if err != nil {
			t.Fatal(err)
		}
		c := w.Workloads[0]
		got := Program{Pkg: c.Pkg, Disk: c.Disk, UpgradeTo: c.UpgradeTo, Files: c.Files}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("dir %s:\n got %+v\nwant %+v", tt.dir, got, tt.want)
		}
		if w.Finally.Wasm != "/opt/f.wasm" {
			t.Errorf("absolute wasm path became %q", w.Finally.Wasm)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "cfg")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, "seedfall.json")
	if err := os.WriteFile(file, []byte(`{"workload": {"name": "c", "pkg": "./client"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	w, err := Load(filepath.Join("cfg", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	if w.File != filepath.Join("cfg", "seedfall.json") || w.Dir != sub || w.Workloads[0].Pkg != filepath.Join(sub, "client") {
		t.Errorf("File %q Dir %q Pkg %q", w.File, w.Dir, w.Workloads[0].Pkg)
	}
	_, err = Load("missing.json")
	if err == nil || err.Error() != "missing.json: cannot read the world file: no such file or directory" {
		t.Errorf("missing file: %v", err)
	}
}

func TestUnsupported(t *testing.T) {
	src := `{
  "nodes": [
    {"name": "n1", "pkg": "./n", "faults": true},
    {"name": "n2", "pkg": "./n", "disk": "./seed"}
  ],
  "workload": {"name": "c", "pkg": "./c", "faults": false},
  "duration": "30s",
  "preempt": {"strategy": "none", "calls": 100},
  "faults": {"crash_per_sec": 0.5, "torn_writes": false,
    "torn_writes_x": 0}
}`
	if _, err := parse(t, src); err == nil {
		t.Fatal("unknown field accepted")
	}
	src = strings.Replace(src, ",\n    \"torn_writes_x\": 0", "", 1)
	w := mustParse(t, src)
	base := map[string]bool{"nodes[].name": true, "nodes[].pkg": true, "workload.name": true, "workload.pkg": true}
	with := func(paths ...string) map[string]bool {
		m := map[string]bool{}
		for k := range base {
			m[k] = true
		}
		for _, p := range paths {
			m[p] = true
		}
		return m
	}
	tests := []struct {
		name        string
		implemented map[string]bool
		want        string
	}{
		// Defaults written out ("faults": true on a node, false on a
		// workload, "duration": "30s", "strategy": "none",
		// "torn_writes": false) are not uses of a feature.
		{"disk first", with(), "seedfall.json:4: nodes[1].disk: not supported yet"},
		{"then preempt", with("nodes[].disk"), "seedfall.json:8: preempt.calls: not supported yet"},
		{"then faults", with("nodes[].disk", "preempt.calls"), "seedfall.json:9: faults.crash_per_sec: not supported yet"},
		{"all", with("nodes[].disk", "preempt.calls", "faults.crash_per_sec"), ""},
		{"nothing", map[string]bool{}, "seedfall.json:3: nodes[0].name: not supported yet"},
		{"parents", map[string]bool{"nodes": true, "workload": true, "preempt": true}, "seedfall.json:9: faults.crash_per_sec: not supported yet"},
		{"parent of list elements", map[string]bool{"nodes[]": true, "workload": true, "preempt": true, "faults": true}, ""},
		{"prefix is not a parent", map[string]bool{"nodes[].dis": true, "nodes[].name": true, "nodes[].pkg": true, "workload": true}, "seedfall.json:4: nodes[1].disk: not supported yet"},
	}
	for _, tt := range tests {
		err := w.Unsupported(tt.implemented)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestUnsupportedPresetShorthand(t *testing.T) {
	w := mustParse(t, withWorkload(`"duration": "1s",`+"\n"+`"faults": "none"`))
	impl := map[string]bool{"workload.name": true, "workload.pkg": true, "duration": true}
	if err := w.Unsupported(impl); err == nil || err.Error() != "seedfall.json:3: faults.preset: not supported yet" {
		t.Errorf("got %v", err)
	}
	if w.Faults.Preset != PresetNone {
		t.Errorf("preset = %q", w.Faults.Preset)
	}
}

func TestPreemptInterleave(t *testing.T) {
	tests := []struct {
		preempt string
		want    Strategy
	}{
		{`{"interleave": true}`, StrategyRandom},
		{`{"interleave": true, "strategy": "none"}`, StrategyRandom},
		{`{"interleave": true, "strategy": "random"}`, StrategyRandom},
		{`{"interleave": false, "strategy": "calls"}`, StrategyCalls},
		{`{"strategy": "pct"}`, StrategyPCT},
	}
	for _, tt := range tests {
		w := mustParse(t, withWorkload(`"preempt": `+tt.preempt))
		if w.Preempt.Strategy != tt.want {
			t.Errorf("%s: strategy %q, want %q", tt.preempt, w.Preempt.Strategy, tt.want)
		}
	}
}

func TestRoles(t *testing.T) {
	src := `{
  "nodes": [{"name": "n1", "pkg": "./n"}, {"name": "n2", "pkg": "./n", "faults": false}],
  "workloads": [{"name": "w1", "pkg": "./c"}, {"name": "w2", "pkg": "./c", "faults": true}, {"name": "w3", "pkg": "./c", "faults": false}],
  "finally": {"name": "f", "pkg": "./f"},
  "faults": {"include_workload": %s}
}`
	tests := []struct {
		include   string
		nodeFault string // per program in order n1 n2 w1 w2 w3 f: 1 takes node faults
		netFault  string
	}{
		{"false", "100100", "101100"},
		{"true", "101100", "101100"},
	}
	for _, tt := range tests {
		w := mustParse(t, strings.Replace(src, "%s", tt.include, 1))
		var node, net []byte
		for _, p := range w.Programs() {
			node = append(node, map[bool]byte{false: '0', true: '1'}[w.NodeFaults(p)])
			net = append(net, map[bool]byte{false: '0', true: '1'}[w.NetFaults(p)])
		}
		if string(node) != tt.nodeFault || string(net) != tt.netFault {
			t.Errorf("include_workload %s: node faults %s, net faults %s; want %s, %s", tt.include, node, net, tt.nodeFault, tt.netFault)
		}
	}
}

func TestMajorityCountsWorkloads(t *testing.T) {
	// Two nodes and one workload make the three that majority needs;
	// finally does not count, since it runs after the faults stop.
	w := mustParse(t, `{"nodes": [{"name": "a", "pkg": "./n"}, {"name": "b", "pkg": "./n"}],
	"workload": {"name": "c", "pkg": "./c"}, "faults": {"partition_topologies": ["majority"]}}`)
	if !slices.Equal(w.Faults.PartitionTopologies, []Topology{TopologyMajority}) {
		t.Errorf("topologies %v", w.Faults.PartitionTopologies)
	}
	_, err := parse(t, `{"nodes": [{"name": "a", "pkg": "./n"}], "workload": {"name": "c", "pkg": "./c"},
	"finally": {"name": "f", "pkg": "./f"}, "faults": {"partition_topologies": ["majority"]}}`)
	if err == nil || !strings.Contains(err.Error(), "this world has 2") {
		t.Errorf("finally counted towards majority: %v", err)
	}
}

func TestLineAndErrorf(t *testing.T) {
	w := mustParse(t, specExample)
	if got := w.Line("nodes[1].pkg"); got != 4 {
		t.Errorf("Line(nodes[1].pkg) = %d, want 4", got)
	}
	if got := w.Line("faults.clock_skew"); got != 19 {
		t.Errorf("Line(faults.clock_skew) = %d, want 19", got)
	}
	err := w.Errorf("nodes[1].pkg", "no Go files in %s", w.Nodes[1].Pkg)
	if err.Error() != "seedfall.json:4: nodes[1].pkg: no Go files in /proj/node" {
		t.Errorf("Errorf: %v", err)
	}
}

// TestTruncations feeds every prefix of a valid file, and randomly damaged
// copies of it, to Parse: none may panic, and every failure is an *Error
// with a line inside the input.
func TestTruncations(t *testing.T) {
	full := specExample
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := make([]string, 0, 2*len(full))
	for n := range len(full) {
		inputs = append(inputs, full[:n])
	}
	junk := []byte(`{}[],:"0 -1.5e9truefalsenull\`)
	for range len(full) {
		b := []byte(full)
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] = junk[rng.IntN(len(junk))]
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		w, err := parse(t, in)
		if err == nil {
			if w == nil {
				t.Fatalf("nil world and nil error for %q", in)
			}
			continue
		}
		var we *Error
		if !errors.As(err, &we) {
			t.Fatalf("error %T %v for %q", err, err, in)
		}
		if lines := strings.Count(in, "\n") + 1; we.Line < 1 || we.Line > lines {
			t.Fatalf("line %d outside 1..%d: %v for %q", we.Line, lines, err, in)
		}
	}
}

func TestUnsupportedInterleave(t *testing.T) {
	w := mustParse(t, withWorkload(`"preempt": {"interleave": true}`))
	err := w.Unsupported(map[string]bool{"workload.name": true, "workload.pkg": true})
	if err == nil || err.Error() != "seedfall.json:2: preempt.interleave: not supported yet" {
		t.Errorf("got %v", err)
	}
}

// TestSectorBytes: every allowed sector size parses, -set reaches it, and
// the resolved world (seedfall config) carries it and loads again, in JSON
// and in TOML.
func TestSectorBytes(t *testing.T) {
	for _, n := range []int64{1, 512, 1024, 2048, 4096} {
		w := mustParse(t, withWorkload(fmt.Sprintf(`"faults": {"torn_writes": true, "sector_bytes": %d}`, n)))
		if w.Faults.SectorBytes != n {
			t.Errorf("sector_bytes %d decoded as %d", n, w.Faults.SectorBytes)
		}
		out, err := w.Resolved(false)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`"sector_bytes": %d`, n); !strings.Contains(string(out), want) {
			t.Errorf("resolved world lacks %s:\n%s", want, out)
		}
		w2, err := Parse(out, "resolved.json", "/proj")
		if err != nil || w2.Faults.SectorBytes != n {
			t.Errorf("resolved world with sector_bytes %d reads back as %v, %v", n, w2, err)
		}
		toml, err := JSONToTOML(out, "resolved.json")
		if err != nil || !strings.Contains(string(toml), fmt.Sprintf("sector_bytes = %d", n)) {
			t.Errorf("TOML form (%v):\n%s", err, toml)
		}
	}
	w, err := ParseWith([]byte(withWorkload("")), "seedfall.json", "/proj", Options{Set: []string{"faults.sector_bytes=512"}})
	if err != nil || w.Faults.SectorBytes != 512 {
		t.Errorf("-set faults.sector_bytes=512: %v, %v", w, err)
	}
	_, err = ParseWith([]byte(withWorkload("")), "seedfall.json", "/proj", Options{Set: []string{"faults.sector_bytes=100"}})
	if err == nil || !strings.Contains(err.Error(), "faults.sector_bytes: want 1 (tear at any byte) or a power of two from 512 to 4096, got 100") {
		t.Errorf("-set faults.sector_bytes=100: %v", err)
	}
}

// preempt.steps is "auto" (StepsAuto) unless a count is given; "auto"
// undoes a count, and anything else is refused with what it wants.
func TestPreemptSteps(t *testing.T) {
	for _, tt := range []struct {
		steps string
		want  int
	}{
		{``, StepsAuto},
		{`, "steps": "auto"`, StepsAuto},
		{`, "steps": 200000`, 200000},
		{`, "steps": 1`, 1},
	} {
		w := mustParse(t, withWorkload(`"preempt": {"strategy": "pct"`+tt.steps+`}`))
		if w.Preempt.Steps != tt.want {
			t.Errorf("%q: steps %d, want %d", tt.steps, w.Preempt.Steps, tt.want)
		}
	}
	for _, bad := range []string{`0`, `"often"`, `1.5`, `true`} {
		_, err := parse(t, withWorkload(`"preempt": {"strategy": "pct", "steps": `+bad+`}`))
		if err == nil || !strings.Contains(err.Error(), `preempt.steps: want a step count of 1 or more, or "auto"`) &&
			!strings.Contains(err.Error(), "preempt.steps: want a whole number") {
			t.Errorf("steps %s: err = %v", bad, err)
		}
	}
}

// "consistency" takes a model or a list of them, in JSON and in TOML, and
// the resolved world keeps it.
func TestConsistency(t *testing.T) {
	for _, tc := range []struct {
		file, src string
		want      []string
	}{
		{"seedfall.json", withWorkload(""), nil},
		{"seedfall.json", withWorkload(`"consistency": "snapshot-isolation"`), []string{"snapshot-isolation"}},
		{"seedfall.json", withWorkload(`"consistency": ["serializable", "strong-session-snapshot-isolation"]`), []string{"serializable", "strong-session-snapshot-isolation"}},
		{"world.toml", "consistency = \"read-committed\"\nworkload = {name = \"c\", pkg = \"./c\"}\n", []string{"read-committed"}},
		{"world.toml", "consistency = [\"serializable\"]\nworkload = {name = \"c\", pkg = \"./c\"}\n", []string{"serializable"}},
	} {
		w, err := Parse([]byte(tc.src), tc.file, "/proj")
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if !slices.Equal(w.Consistency, tc.want) {
			t.Errorf("%s: Consistency = %q, want %q", tc.src, w.Consistency, tc.want)
		}
		j, err := w.JSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(j, "world.json", "/proj")
		if err != nil {
			t.Fatalf("the resolved world does not load: %v\n%s", err, j)
		}
		if !slices.Equal(again.Consistency, tc.want) {
			t.Errorf("%s: resolved, Consistency = %q, want %q", tc.src, again.Consistency, tc.want)
		}
	}
	_, err := Parse([]byte("workload = {name = \"c\", pkg = \"./c\"}\nconsistency = [\"serializable\", \"snapshot\"]\n"), "world.toml", "/proj")
	if err == nil || !strings.HasPrefix(err.Error(), `world.toml:2: consistency[1]: unknown consistency model "snapshot"`) {
		t.Errorf("TOML: %v", err)
	}
}
