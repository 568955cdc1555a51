package faults

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPlanCrashesIsSeededAndPerNode(t *testing.T) {
	p := CrashPlan{Nodes: []string{"n1", "n2"}, PerSec: 2, RestartAfter: [2]time.Duration{10 * time.Millisecond, time.Second}, Horizon: 30 * time.Second}
	a, b := PlanCrashes(5, p), PlanCrashes(5, p)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different plans")
	}
	if reflect.DeepEqual(a, PlanCrashes(6, p)) {
		t.Fatal("different seeds, same plan")
	}
	// about rate * horizon / (1 + mean downtime * rate) crashes per node
	if n := len(a); n < 40 || n > 110 {
		t.Fatalf("%d crashes for 2 nodes at 2/s over 30s", n)
	}
	last := map[string]time.Duration{}
	for i, f := range a {
		if i > 0 && f.At < a[i-1].At {
			t.Fatal("plan not sorted by time")
		}
		if f.Until-f.At < 10*time.Millisecond || f.Until-f.At > time.Second {
			t.Fatalf("downtime %v outside restart_after", f.Until-f.At)
		}
		if f.At < last[f.Node] {
			t.Fatalf("%s crashes at %v while down until %v", f.Node, f.At, last[f.Node])
		}
		last[f.Node] = f.Until
	}
	// Adding a node must not move the others' crashes.
	p3 := p
	p3.Nodes = []string{"n0", "n1", "n2"}
	var n1a, n1b []Fault
	for _, f := range a {
		if f.Node == "n1" {
			n1a = append(n1a, f)
		}
	}
	for _, f := range PlanCrashes(5, p3) {
		if f.Node == "n1" {
			n1b = append(n1b, f)
		}
	}
	if !reflect.DeepEqual(n1a, n1b) {
		t.Fatal("adding node n0 changed n1's crashes")
	}
	if PlanCrashes(5, CrashPlan{Nodes: []string{"n1"}, Horizon: time.Hour}) != nil {
		t.Fatal("rate 0 planned crashes")
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	s := &Schedule{Seed: 7, Config: "seedfall.json", Duration: 30 * time.Second, Faults: []Fault{
		{At: 427268000, Kind: Crash, Node: "server", Until: 791388000},
	}}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `{"at":"427.268ms","kind":"crash","node":"server","until":"791.388ms"}`) {
		t.Fatalf("not the spec's form:\n%s", b)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, CheckConfig{Programs: []string{"server", "client"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: got %+v want %+v", got, s)
	}
	if s.Faults[0].String() != "427.268ms  crash server, restart at 791.388ms" {
		t.Fatalf("String() = %q", s.Faults[0].String())
	}
}

func TestLoadRejectsBadFaults(t *testing.T) {
	for name, tc := range map[string]struct{ json, want string }{
		"kind":  {`{"seed":1,"duration":"1s","faults":[{"at":"1s","kind":"melt","node":"a","until":"1s"}]}`, `unknown fault kind "melt"`},
		"node":  {`{"seed":1,"duration":"1s","faults":[{"at":"1s","kind":"crash","node":"zz","until":"2s"}]}`, `node "zz" is not in the world`},
		"until": {`{"seed":1,"duration":"3s","faults":[{"at":"2s","kind":"crash","node":"a","until":"1s"}]}`, `until 1s is before at 2s`},
		"dur":   {`{"seed":1,"duration":"1s","faults":[{"at":"soon","kind":"crash","node":"a","until":"1s"}]}`, `faults[0].at: want a duration such as "250ms" or "2s", got "soon"`},
		"field": {`{"seed":1,"duration":"1s","faults":[{"at":"1s","kind":"crash","node":"a","until":"1s","x":1}]}`, `faults[0].x: unknown field`},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.json")
			os.WriteFile(path, []byte(tc.json), 0o644)
			_, err := Load(path, CheckConfig{Programs: []string{"a"}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	var s Schedule
	if err := json.Unmarshal([]byte(`{"seed":1,"duration":"1s","faults":[]}`), &s); err != nil || len(s.Faults) != 0 {
		t.Fatalf("empty schedule: %v %+v", err, s)
	}
}

// Every fault form the spec shows reads and writes back byte for byte.
func TestSpecFaultFormsRoundTrip(t *testing.T) {
	for _, js := range []string{
		`{"at":"1.2s","kind":"partition","groups":[["n1","n2"],["n2","n3"],["n3","client"],["client","n1"]],"until":"2s"}`,
		`{"at":"1.5s","kind":"clog","from":"n1","to":"n2","mode":"stop","until":"3s"}`,
		`{"at":"1.6s","kind":"clog","node":"n3","dir":"out","mode":"slow","delay":"80ms","until":"2.4s"}`,
		`{"at":"2.1s","kind":"net_reset","node":"n2","until":"2.1s"}`,
		`{"at":"2.5s","kind":"slow","node":"n1","factor":4.5,"until":"6s"}`,
		`{"at":"2.1s","kind":"udp_drop","node":"n1","to":"n2","op":17,"until":"0s"}`,
		`{"at":"1.942589003s","kind":"read_corrupt","node":"server","op":3,"path":"data/kv.log","offset":70,"until":"0s"}`,
		`{"at":"5.259168s","kind":"misdirected_write","node":"server","op":558,"path":"data/kv.log","offset":4096,"until":"0s"}`,
		`{"at":"657.015787ms","kind":"bitrot","node":"server","path":"data/kv.log","offset":22,"until":"657.015787ms"}`,
	} {
		var f Fault
		if err := json.Unmarshal([]byte(js), &f); err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != js {
			t.Errorf("round trip:\n got %s\nwant %s", b, js)
		}
		if f.String() == "" {
			t.Errorf("%s: empty listing", js)
		}
	}
}

func TestRegisteredKindsAreChecked(t *testing.T) {
	Register(KindInfo{Name: "test_op", AtOp: true})
	defer delete(kinds, "test_op")
	Register(KindInfo{Name: "test_slow", Lasts: true, Factor: true})
	defer delete(kinds, "test_slow")
	programs := []string{"a", "b"}
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Kind: "test_op", Node: "a"}, "op must be at least 1"},
		{Fault{Kind: "test_op", Op: 3}, "needs a node"},
		{Fault{Kind: "test_op", Node: "a", Op: 3, To: "zz"}, `node "zz" is not in the world`},
		{Fault{Kind: "test_op", Node: "a", Op: 3}, ""},
		{Fault{Kind: "test_slow", Node: "a", Factor: 0.5}, "factor 0.5 is below 1"},
		{Fault{Kind: "test_slow", Node: "a", Factor: 2}, ""},
	} {
		err := errors.Join(tc.f.rules(programs, checkRun{})...)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.f, err, tc.want)
		}
	}
	if !strings.Contains(strings.Join(Known(), ","), "test_op") {
		t.Fatalf("Known() = %v", Known())
	}
}

// A schedule keeps another's run until a moment when it keeps its
// faults before then, and adds or changes no fault at an operation (which
// may fire at any moment).
func TestKeeps(t *testing.T) {
	Register(KindInfo{Name: "test_at_op", AtOp: true})
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	crash := func(at int) Fault { return Fault{At: ms(at), Kind: Crash, Node: "n", Until: ms(at + 10)} }
	op := func(at int, n uint64) Fault { return Fault{At: ms(at), Kind: "test_at_op", Node: "n", Op: n} }
	parent := &Schedule{Seed: 1, Duration: time.Second, Faults: []Fault{crash(100), op(300, 7), crash(600)}}
	for _, tc := range []struct {
		fs   []Fault
		at   time.Duration
		want bool
	}{
		{[]Fault{crash(100), op(300, 7), crash(600)}, ms(900), true},
		{[]Fault{crash(100), op(300, 7)}, ms(600), true},                          // a later crash removed
		{[]Fault{crash(100), op(300, 7)}, ms(601), false},                         // ... but it was before then
		{[]Fault{crash(100), crash(600)}, ms(300), true},                          // the fault at an op removed, it fired at 300ms
		{[]Fault{crash(100), crash(600)}, ms(301), false},                         // ... before then
		{[]Fault{crash(100), op(300, 3), crash(600)}, ms(200), false},             // its op moved: it may fire earlier
		{[]Fault{crash(100), op(300, 7), op(900, 9), crash(600)}, ms(200), false}, // one added
	} {
		s := &Schedule{Seed: 2, Duration: time.Second, Faults: tc.fs}
		if got := s.Keeps(parent, tc.at); got != tc.want {
			t.Errorf("%v at %v: %v, want %v", tc.fs, tc.at, got, tc.want)
		}
	}
	if (&Schedule{Duration: 2 * time.Second, Faults: parent.Faults}).Keeps(parent, ms(1)) {
		t.Error("another duration kept the run")
	}
}
