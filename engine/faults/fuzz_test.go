package faults

import (
	"strings"
	"testing"
)

// FuzzSchedule feeds schedule files of any shape to the decoder: it never
// panics, never names a Go type, and a schedule it accepts writes out and
// reads back the same.
func FuzzSchedule(f *testing.F) {
	for _, s := range []string{
		sched(`"duration": "5s"`, `{"at": "1s", "kind": "crash", "node": "a", "until": "2s"}`),
		sched("", `{"at": 12, "kind": "crash", "node": "a", "until": "2s"}`),
		sched(`"branches": [{"at": "1s", "key": 1, "stream": "net"}]`, `{"at": "1s", "kind": "partition", "groups": [["a"], ["b"]], "until": "2s"}`),
		sched(`"duration": "-2562047h"`),
		`{"seed": 1, "faults": [{"at": "1s", "kind": "clock_jump", "node": "a", "delay": "-2562047h", "op": 18446744073709551615, "offset": -9223372036854775808}]}`,
		`{"seed": 1e400}`, `[`, `{"faults": [[[[]]]]}`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("s.json", b)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "Go ") || strings.Contains(msg, "JSON struct") || !strings.HasPrefix(msg, "s.json") {
				t.Fatalf("error %q", msg)
			}
			return
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("out.json", out)
		if err != nil {
			t.Fatalf("a schedule read back fails: %v\n%s", err, out)
		}
		if out2, _ := again.MarshalJSON(); string(out2) != string(out) {
			t.Fatalf("round trip changed the schedule:\n%s\n---\n%s", out, out2)
		}
	})
}
