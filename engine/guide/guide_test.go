package guide

import (
	"fmt"
	"github.com/seedfall/seedfall/engine/cover"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

const ms = time.Millisecond

func parent() *faults.Schedule {
	return &faults.Schedule{Seed: 7, Duration: 10 * time.Second, Faults: []faults.Fault{
		{At: 100 * ms, Kind: faults.Crash, Node: "server", Until: 150 * ms},
		{At: 900 * ms, Kind: faults.Crash, Node: "server", Until: 990 * ms},
		{At: 2 * time.Second, Kind: faults.Crash, Node: "server", Until: 2100 * ms},
	}}
}

// Every mutation keeps the parent's past before its moment, so its run can
// fork from a checkpoint of the parent's, re-keys at the moment, and does
// what it says to the future.
func TestMutate(t *testing.T) {
	at := 500 * ms
	donor := faults.Fault{At: 7 * time.Second, Kind: faults.Crash, Node: "client", Until: 7100 * ms}
	for _, op := range Ops {
		s, err := Mutate(parent(), op, at, 3, []faults.Fault{donor})
		if err != nil {
			t.Fatal(err)
		}
		if !s.Keeps(parent(), at) {
			t.Errorf("%s: the schedule does not keep the parent's past before %v", op, at)
		}
		if b := s.Branches[len(s.Branches)-1]; b.At != at || b.Key != 3 {
			t.Errorf("%s: last branch %+v, want a re-key at %v with key 3", op, b, at)
		}
		again, _ := Mutate(parent(), op, at, 3, []faults.Fault{donor})
		if !reflect.DeepEqual(s, again) {
			t.Errorf("%s: the same key gave two schedules", op)
		}
		switch op {
		case Rekey:
			if !reflect.DeepEqual(s.Faults, parent().Faults) {
				t.Errorf("rekey changed the faults: %v", s.Faults)
			}
		case Add:
			if len(s.Faults) != 4 || s.Faults[1].Node != "client" || s.Faults[1].At < at+MinStep || s.Faults[1].At > at+Window {
				t.Errorf("add: %v; want the donor's crash of client within %v after %v", s.Faults, Window, at)
			} else if d := s.Faults[1].Until - s.Faults[1].At; d != 100*ms {
				t.Errorf("add: the added crash restarts %v after it, want the donor's 100ms", d)
			}
		case Shift:
			f := s.Faults[1]
			if len(s.Faults) != 3 || f.At == 900*ms || f.At < at || f.At > 900*ms+Window || f.Until-f.At != 90*ms {
				t.Errorf("shift: %v; want the crash at 900ms moved by at most %v, not before %v, its restart with it", s.Faults, Window, at)
			}
		case Remove:
			if len(s.Faults) != 2 || s.Faults[1].At != 2*time.Second {
				t.Errorf("remove: %v; want the crash at 900ms gone", s.Faults)
			}
		}
	}
	if _, err := Mutate(parent(), "swap", at, 1, nil); err == nil {
		t.Error("an unknown mutation was accepted")
	}
	if _, err := Mutate(parent(), Rekey, 11*time.Second, 1, nil); err == nil {
		t.Error("a moment after the run's end was accepted")
	}
}

// A run's features, each once, in the order of their moments; a set
// returns only what is new to it.
func TestFeatures(t *testing.T) {
	res := &engine.Result{
		Schedule: parent(),
		Lines: []trace.Line{
			{At: int64(5 * ms), Node: "client", Kind: trace.Stderr, Text: "lost write k12 at op 12"},
			{At: int64(6 * ms), Node: "client", Kind: trace.Stderr, Text: "lost write k13 at op 13"},
			{At: int64(7 * ms), Node: "server", Kind: trace.Event, Text: "crash"},
			{At: int64(8 * ms), Node: "server", Kind: trace.Event, Text: `property sometimes "compacted" first reached at main.go:12`},
		},
		Properties: []engine.Property{{Kind: engine.PropSometimes, Message: "compacted", Hits: 3, True: 1}},
	}
	var got []string
	for _, f := range Features(res) {
		got = append(got, f.String())
	}
	want := []string{
		"5ms log client: lost write k# at op #",
		"8ms property sometimes compacted reached",
		"100ms faults crash",
		"900ms faults crash then crash",
		"property sometimes compacted held",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("features:\n got %q\nwant %q", got, want)
	}
	s := NewSeen()
	if n := len(s.Add(res)); n != len(want) {
		t.Errorf("a new set took %d new features, want %d", n, len(want))
	}
	if n := len(s.Add(res)); n != 0 {
		t.Errorf("the same run again brought %d new features", n)
	}
	if s.Len() != len(want) {
		t.Errorf("Len %d, want %d", s.Len(), len(want))
	}
}

// coveredRun is a run of a server that started (store.go:5, once), took a
// checkpoint at 700ms and again at 1.4s (store.go:13, twice), put 60 keys
// (store.go:7, from 10ms on, its 2nd at 20ms, ... its 32nd at 320ms), and
// printed a line at each checkpoint.
func coveredRun() *engine.Result {
	m := &cover.Map{
		Pkgs:  []cover.Pkg{{Path: "example.com/m/store", Name: "store", Module: "example.com/m"}},
		Funcs: []cover.Func{{Pkg: 0, Name: "Open", File: "example.com/m/store/store.go"}, {Pkg: 0, Name: "Checkpoint", File: "example.com/m/store/store.go"}},
		Units: []cover.Unit{{Func: 0, StLine: 5}, {Func: 0, StLine: 7}, {Func: 1, StLine: 13}},
	}
	hit := cover.NewSet()
	for u := range 3 {
		hit.Add("server", u)
	}
	rises := []cover.Event{{At: 20 * ms, Program: "server", Unit: 1, N: 2}, {At: 30 * ms, Program: "server", Unit: 1, N: 3},
		{At: 40 * ms, Program: "server", Unit: 1, N: 4}, {At: 80 * ms, Program: "server", Unit: 1, N: 8}, {At: 160 * ms, Program: "server", Unit: 1, N: 16},
		{At: 320 * ms, Program: "server", Unit: 1, N: 32}, {At: 1400 * ms, Program: "server", Unit: 2, N: 2}}
	return &engine.Result{
		Schedule: &faults.Schedule{Seed: 1, Duration: 10 * time.Second},
		SimNs:    int64(3 * time.Second),
		Lines: []trace.Line{{At: int64(700 * ms), Node: "server", Kind: trace.Stderr, Text: "checkpoint: 21 keys"},
			{At: int64(1400 * ms), Node: "server", Kind: trace.Stderr, Text: "checkpoint: 42 keys"}},
		Coverage: &cover.Run{
			Maps:   map[string]*cover.Map{"server": m},
			Hit:    hit,
			First:  []cover.Event{{At: 1 * ms, Program: "server", Unit: 0, N: 1}, {At: 10 * ms, Program: "server", Unit: 1, N: 1}, {At: 700 * ms, Program: "server", Unit: 2, N: 1}},
			Rises:  rises,
			Counts: map[string][]uint32{"server": {1, 60, 2}},
		},
	}
}

// A block's count features come with the moments it reached them; the
// moments of a run come where it ran its rarest code first; a moment's
// score falls as more runs reach what it holds.
func TestMoments(t *testing.T) {
	res := coveredRun()
	var counts []string
	for _, f := range Features(res) {
		if f.Kind == Count {
			counts = append(counts, f.String())
		}
	}
	want := []string{
		"20ms count server store/store.go:7 ran 2+ times", "30ms count server store/store.go:7 ran 3+ times",
		"40ms count server store/store.go:7 ran 4+ times", "80ms count server store/store.go:7 ran 8+ times",
		"160ms count server store/store.go:7 ran 16+ times", "320ms count server store/store.go:7 ran 32+ times",
		"1.4s count server store/store.go:13 ran 2+ times",
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("count features:\n got %q\nwant %q", counts, want)
	}
	s := NewSeen()
	s.Add(res)
	ms := s.Moments(res, 3)
	var got []string
	for _, m := range ms {
		got = append(got, fmt.Sprintf("%v %s %s %.2f", m.At, m.Node, m.What, m.Weight))
	}
	// Open ran once (weight 1); the checkpoint twice (1/2), at 700ms with
	// its line and at 1.4s; the puts sixty times, and the three moments
	// asked for by weight come first, then the rest by score (all are
	// new, so the rarest in the run again).
	if len(got) < 3 || !reflect.DeepEqual(got[:3], []string{"1ms server server store/store.go:5 1.00", "700ms server server store/store.go:13 0.50", "1.4s server server store/store.go:13 ran 2+ times 0.50"}) {
		t.Errorf("moments:\n%s", strings.Join(got, "\n"))
	}
	first := s.Score(ms[1])
	if first != 0.5 {
		t.Errorf("the checkpoint's score after one run is %v, want 1/2 (its weight) over 1 run", first)
	}
	s.Add(res)
	if got := s.Score(ms[1]); got != first/2 {
		t.Errorf("after a second run that reached the same, the score is %v, want %v", got, first/2)
	}
	if n := s.Runs(Features(res)[0]); n != 2 {
		t.Errorf("Runs: %d, want 2", n)
	}
}
