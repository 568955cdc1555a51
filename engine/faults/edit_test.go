package faults

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// registerEngineKinds registers the kinds the engine registers from its init
// functions, which this package's tests cannot import.
func registerEngineKinds(t *testing.T) {
	t.Helper()
	for _, k := range []KindInfo{
		{Name: "crash_io", AtOp: true, Lasts: true},
		{Name: "write_eio", AtOp: true},
		{Name: "read_corrupt", AtOp: true},
		{Name: "buggify", AtOp: true},
		{Name: "preempt", AtOp: true},
		{Name: "udp_drop", AtOp: true},
		{Name: "bitrot"},
		{Name: "partition", Lasts: true, NoNode: true},
		{Name: "clog", Lasts: true, NoNode: true},
		{Name: "net_reset"},
		{Name: "pause", Lasts: true},
		{Name: "slow", Lasts: true, Factor: true},
		{Name: "clock_jump"},
	} {
		if _, ok := kinds[k.Name]; !ok {
			Register(k)
			t.Cleanup(func() { delete(kinds, k.Name) })
		}
	}
}

const ms = time.Millisecond

func TestParseShift(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shift
		err  string
	}{
		{in: "2=-50ms", want: Shift{Pos: 2, Dur: -50 * ms, Text: "2=-50ms"}},
		{in: "1=+2", want: Shift{Pos: 1, Ops: 2, Count: true, Text: "1=+2"}},
		{in: "3=-1", want: Shift{Pos: 3, Ops: -1, Count: true, Text: "3=-1"}},
		{in: "1=1.5s", want: Shift{Pos: 1, Dur: 1500 * ms, Text: "1=1.5s"}},
		{in: "2", err: "write it as N=AMOUNT"},
		{in: "x=1s", err: "write it as N=AMOUNT"},
		{in: "0=1s", err: "positions count from 1"},
		{in: "1=soon", err: `"soon" is neither a signed duration`},
	} {
		got, err := ParseShift(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseShift(%q) err = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseShift(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func testSchedule() *Schedule {
	return &Schedule{Seed: 1, Config: "seedfall.json", Duration: 991 * ms, ShrunkFrom: 9, ShrinkRuns: 40,
		Branches: []Branch{{At: 900 * ms, Key: 5}},
		Faults: []Fault{
			{At: 427 * ms, Kind: "crash_io", Node: "server", Op: 56, Path: "data/kv.log", Until: 791 * ms},
			{At: 500 * ms, Kind: "pause", Node: "server", Until: 600 * ms},
			{At: 802 * ms, Kind: Crash, Node: "server", Until: 802 * ms},
		}}
}

func TestEdit(t *testing.T) {
	registerEngineKinds(t)
	crashIO, pause, crash := testSchedule().Faults[0], testSchedule().Faults[1], testSchedule().Faults[2]
	added := Fault{At: 100 * ms, Kind: "pause", Node: "client", Until: 200 * ms}
	for _, tc := range []struct {
		name string
		e    Edits
		want []Fault
		err  string
	}{
		{name: "nothing", want: []Fault{crashIO, pause, crash}},
		{name: "remove", e: Edits{Remove: []int{1, 3}}, want: []Fault{pause}},
		{name: "shift timed moves at and until, and resorts",
			e:    Edits{Shift: []Shift{{Pos: 2, Dur: -100 * ms}}},
			want: []Fault{{At: 400 * ms, Kind: "pause", Node: "server", Until: 500 * ms}, crashIO, crash}},
		{name: "shift op moves op only",
			e:    Edits{Shift: []Shift{{Pos: 1, Ops: -1, Count: true}}},
			want: []Fault{{At: 427 * ms, Kind: "crash_io", Node: "server", Op: 55, Path: "data/kv.log", Until: 791 * ms}, pause, crash}},
		{name: "positions are before the edit",
			e:    Edits{Remove: []int{1}, Shift: []Shift{{Pos: 3, Dur: 10 * ms}}},
			want: []Fault{pause, {At: 812 * ms, Kind: Crash, Node: "server", Until: 812 * ms}}},
		{name: "add sorts by at, stably", e: Edits{Add: []Fault{added, {At: 802 * ms, Kind: "pause", Node: "client", Until: 900 * ms}}},
			want: []Fault{added, crashIO, pause, crash, {At: 802 * ms, Kind: "pause", Node: "client", Until: 900 * ms}}},
		{name: "remove out of range", e: Edits{Remove: []int{4}}, err: "-remove 4: there is no fault 4; the schedule has 3 faults"},
		{name: "remove twice", e: Edits{Remove: []int{2, 2}}, err: "-remove 2 is given twice"},
		{name: "shift out of range", e: Edits{Shift: []Shift{{Pos: 5, Dur: ms, Text: "5=1ms"}}}, err: "-shift 5=1ms: there is no fault 5"},
		{name: "shift a removed fault", e: Edits{Remove: []int{2}, Shift: []Shift{{Pos: 2, Dur: ms, Text: "2=1ms"}}}, err: "fault 2 is also removed"},
		{name: "shift twice", e: Edits{Shift: []Shift{{Pos: 2, Dur: ms}, {Pos: 2, Dur: ms}}}, err: "fault 2 is already shifted"},
		{name: "duration on an op fault", e: Edits{Shift: []Shift{{Pos: 1, Dur: -50 * ms, Text: "1=-50ms"}}},
			err: "-shift 1=-50ms: fault 1 (crash_io) fires at disk op #56, not at a time: shift it by a signed count, like 1=-1"},
		{name: "count on a timed fault", e: Edits{Shift: []Shift{{Pos: 2, Ops: 2, Count: true, Text: "2=+2"}}},
			err: "-shift 2=+2: fault 2 (pause) is timed: shift it by a signed duration, like 2=-50ms"},
		{name: "op below 1", e: Edits{Shift: []Shift{{Pos: 1, Ops: -56, Count: true, Text: "1=-56"}}},
			err: "fault 1 (crash_io) would fire at disk op #0; they count from #1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := testSchedule()
			got, err := Edit(in, tc.e)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Faults, tc.want) {
				t.Fatalf("faults:\n got %v\nwant %v", got.Faults, tc.want)
			}
			if got.ShrunkFrom != 0 || got.ShrinkRuns != 0 {
				t.Fatal("an edit kept shrunk_from and shrink_runs")
			}
			if got.Seed != 1 || got.Config != "seedfall.json" || got.Duration != 991*ms || !reflect.DeepEqual(got.Branches, in.Branches) {
				t.Fatalf("edit lost the schedule's header: %+v", got)
			}
			if !reflect.DeepEqual(in, testSchedule()) {
				t.Fatal("Edit changed its input")
			}
		})
	}
}

// One case per row of the spec's table of checks, with the error it gives.
func TestCheckTable(t *testing.T) {
	registerEngineKinds(t)
	cfg := CheckConfig{Programs: []string{"server", "client", "n3"}, Duration: 20 * time.Second}
	for _, tc := range []struct {
		row  string
		f    Fault
		cfg  *CheckConfig
		want string // "" means the fault passes
	}{
		{row: "kind is known", f: Fault{At: ms, Kind: "pauze", Node: "server"},
			want: `fault 2 (pauze): unknown fault kind "pauze" (did you mean "pause"?)`},
		{row: "nodes of the config: node", f: Fault{At: ms, Kind: "pause", Node: "srv", Until: 2 * ms},
			want: `fault 2 (pause): node "srv" is not in the world (it has server, client, n3)`},
		{row: "nodes of the config: from/to", f: Fault{At: ms, Kind: "clog", From: "server", To: "nobody", Mode: "stop", Until: 2 * ms},
			want: `fault 2 (clog): node "nobody" is not in the world`},
		{row: "nodes of the config: side", f: Fault{At: ms, Kind: "partition", Side: []string{"x"}, Until: 2 * ms},
			want: `fault 2 (partition): node "x" is not in the world`},
		{row: "nodes of the config: groups", f: Fault{At: ms, Kind: "partition", Groups: [][]string{{"server"}, {"y"}}, Until: 2 * ms},
			want: `fault 2 (partition): node "y" is not in the world`},
		{row: "at is not negative", f: Fault{At: -5 * ms, Kind: "bitrot", Node: "server", Until: -5 * ms},
			want: "fault 1 (bitrot): at -5ms is negative"},
		{row: "at is not after the schedule's duration", f: Fault{At: 2 * time.Second, Kind: "net_reset", Node: "server", Until: 2 * time.Second},
			want: "fault 2 (net_reset): at 2s is after the end of the run at 991ms"},
		{row: "at is not after the config's duration when the schedule has none", f: Fault{At: 21 * time.Second, Kind: "clock_jump", Node: "server"},
			cfg: &CheckConfig{Programs: cfg.Programs, Duration: 20 * time.Second}, want: "at 21s is after the end of the run at 20s"},
		{row: "at of an op fault only records when it happened", f: Fault{At: 5 * time.Second, Kind: "write_eio", Node: "server", Op: 3}},
		{row: "until is not before at", f: Fault{At: 900 * ms, Kind: "pause", Node: "server", Until: 800 * ms},
			want: "fault 2 (pause): until 800ms is before at 900ms"},
		{row: "until is not before at (crash_io)", f: Fault{At: 900 * ms, Kind: "crash_io", Node: "server", Op: 4, Until: 1 * ms},
			want: "fault 2 (crash_io): until 1ms is before at 900ms"},
		{row: "side or groups, not both", f: Fault{At: ms, Kind: "partition", Side: []string{"server"}, Groups: [][]string{{"server"}, {"client"}}, Until: 2 * ms},
			want: "fault 2 (partition): a partition takes side or groups, not both"},
		{row: "clog mode", f: Fault{At: ms, Kind: "clog", Node: "server", Dir: "in", Mode: "drop", Until: 2 * ms},
			want: `fault 2 (clog): mode "drop" is not stop, slow or jam`},
		{row: "clog dir with a node", f: Fault{At: ms, Kind: "clog", Node: "server", Dir: "up", Mode: "jam", Until: 2 * ms},
			want: `fault 2 (clog): dir "up" is not in, out or both, which a clog of node server needs`},
		{row: "clog dir without a node", f: Fault{At: ms, Kind: "clog", From: "server", To: "client", Dir: "in", Mode: "stop", Until: 2 * ms},
			want: `fault 2 (clog): dir "in" needs a node`},
		{row: "clog link of two different nodes", f: Fault{At: ms, Kind: "clog", From: "server", To: "server", Mode: "stop", Until: 2 * ms},
			want: `fault 2 (clog): from and to are both "server"`},
		{row: "clog names something", f: Fault{At: ms, Kind: "clog", Mode: "stop", Until: 2 * ms},
			want: "fault 2 (clog): a clog needs a node and dir, or two nodes in from and to"},
		{row: "clog of a link is fine", f: Fault{At: ms, Kind: "clog", From: "server", To: "client", Mode: "slow", Delay: ms, Until: 2 * ms}},
		{row: "node is set", f: Fault{At: ms, Kind: "pause", Until: 2 * ms},
			want: "fault 2 (pause): a pause fault needs a node"},
		{row: "factor is at least 1", f: Fault{At: ms, Kind: "slow", Node: "server", Factor: 0.5, Until: 2 * ms},
			want: "fault 2 (slow): factor 0.5 is below 1"},
		{row: "op is at least 1", f: Fault{At: ms, Kind: "read_corrupt", Node: "server"},
			want: "fault 2 (read_corrupt): op must be at least 1: a read_corrupt fault fires at the disk read with that number"},
		{row: "buggify names its site", f: Fault{At: ms, Kind: "buggify", Node: "server", Op: 2},
			want: "fault 2 (buggify): a buggify fault names its site"},
		{row: "preempt needs pct", f: Fault{At: ms, Kind: "preempt", Node: "server", Op: 2},
			want: `fault 2 (preempt): a preempt fault needs "preempt": {"strategy": "pct"} in the config`},
		{row: "preempt under pct is fine", f: Fault{At: ms, Kind: "preempt", Node: "server", Op: 2},
			cfg: &CheckConfig{Programs: cfg.Programs, PreemptPCT: true}},
	} {
		t.Run(tc.row, func(t *testing.T) {
			// A valid fault first, so positions are checked too; the
			// case's fault lands at position 1 or 2 by its at.
			s := &Schedule{Seed: 1, Duration: 991 * ms, Faults: []Fault{{At: 0, Kind: Crash, Node: "client", Until: 5 * ms}, tc.f}}
			c := cfg
			if tc.cfg != nil {
				c = *tc.cfg
				s.Duration = 0
			}
			if tc.f.At < 0 {
				s.Faults[0], s.Faults[1] = s.Faults[1], s.Faults[0]
			}
			err := Check(s, c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want no error, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
			if strings.Count(err.Error(), "\n") != 0 {
				t.Fatalf("one broken rule gave several errors:\n%v", err)
			}
		})
	}
}

func TestCheckListsEveryBrokenRule(t *testing.T) {
	registerEngineKinds(t)
	s := &Schedule{Seed: 1, Duration: time.Second, Faults: []Fault{
		{At: 2 * time.Second, Kind: "pause", Node: "ghost", Until: time.Second},
		{At: ms, Kind: "nope"},
	}}
	err := Check(s, CheckConfig{Programs: []string{"server"}})
	want := []string{
		`fault 1 (pause): node "ghost" is not in the world`,
		"fault 1 (pause): at 2s is after the end of the run at 1s",
		"fault 1 (pause): until 1s is before at 2s",
		`fault 2 (nope): unknown fault kind "nope"`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q, want %q", i+1, lines[i], w)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		js   string
		want string
	}{
		{`{"at":"802ms","kind":"crash","node":"server","until":"802ms"}`, "802ms  crash server, restart at 802ms"},
		{`{"at":"427.268ms","kind":"crash_io","node":"server","op":56,"path":"data/kv.log","until":"791.388ms"}`,
			"427.268ms  crash server during disk op #56, restart at 791.388ms"},
		{`{"at":"1s","kind":"pause","node":"server","until":"1.5s"}`, "1s  pause server until 1.5s"},
		{`{"at":"2.5s","kind":"slow","node":"n1","factor":4.5,"until":"6s"}`, "2.5s  slow n1 4.5x until 6s"},
		{`{"at":"1.5s","kind":"clog","from":"n1","to":"n2","mode":"stop","until":"3s"}`, "1.5s  clog n1 -> n2 (stop) until 3s"},
		{`{"at":"1.6s","kind":"clog","node":"n3","dir":"out","mode":"slow","delay":"80ms","until":"2.4s"}`,
			"1.6s  clog out of n3 (slow, +80ms) until 2.4s"},
		{`{"at":"1.2s","kind":"partition","side":["n1"],"until":"2s"}`, "1.2s  partition n1 from the rest until 2s"},
		{`{"at":"1.2s","kind":"partition","groups":[["n1","n2"],["n2","n3"]],"until":"2s"}`, "1.2s  partition into {n1 n2} {n2 n3} until 2s"},
		{`{"at":"0s","kind":"clock_skew","node":"n1","delay":"-40ms","until":"0s"}`, "0s  n1's clock is off by -40ms"},
		{`{"at":"3s","kind":"clock_jump","node":"n1","delay":"2s","until":"0s"}`, "3s  n1's clock jumps +2s"},
		{`{"at":"40ms","kind":"buggify","node":"server","op":3,"site":"slow-path","until":"0s"}`, "40ms  buggify slow-path on server, hit #3"},
		{`{"at":"912.496ms","kind":"write_eio","node":"server","op":67,"path":"data/kv.log","until":"0s"}`,
			"912.496ms  write fails with EIO on server at disk op #67 of data/kv.log"},
		{`{"at":"1.942589003s","kind":"read_corrupt","node":"server","op":3,"path":"data/kv.log","offset":70,"until":"0s"}`,
			"1.942589003s  read returns a flipped bit on server at disk read #3 of data/kv.log at offset 70"},
		{`{"at":"657.015787ms","kind":"bitrot","node":"server","path":"data/kv.log","offset":22,"until":"657.015787ms"}`,
			"657.015787ms  bit rot on server of data/kv.log at offset 22"},
		{`{"at":"2.1s","kind":"udp_drop","node":"n1","to":"n2","op":17,"until":"0s"}`, "2.1s  drop udp datagram #17 from n1 to n2"},
		{`{"at":"2.1s","kind":"net_reset","node":"n2","until":"2.1s"}`, "2.1s  reset n2's connections"},
	} {
		var f Fault
		if err := f.UnmarshalJSON([]byte(tc.js)); err != nil {
			t.Fatalf("%s: %v", tc.js, err)
		}
		if got := Describe(f); got != tc.want {
			t.Errorf("Describe(%s)\n got %q\nwant %q", tc.js, got, tc.want)
		}
	}
}

// A changed schedule is no longer what shrink found, and changing it
// leaves the original as it was.
func TestChanged(t *testing.T) {
	s := &Schedule{Seed: 3, Faults: []Fault{{At: 5, Kind: Crash, Node: "n"}}, Branches: []Branch{{At: 7, Key: 1}}, ShrunkFrom: 4, ShrinkRuns: 20}
	c := s.Changed()
	if c.ShrunkFrom != 0 || c.ShrinkRuns != 0 || c.Seed != 3 || len(c.Faults) != 1 || len(c.Branches) != 1 {
		t.Fatalf("changed: %+v", c)
	}
	c.Faults[0].Node, c.Branches[0].Key = "m", 2
	if s.Faults[0].Node != "n" || s.Branches[0].Key != 1 || s.ShrunkFrom != 4 {
		t.Errorf("changing the copy changed the original: %+v", s)
	}
}
