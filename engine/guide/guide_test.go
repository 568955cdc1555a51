package guide

import (
	"reflect"
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
