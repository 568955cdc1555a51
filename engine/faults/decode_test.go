package faults

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sched lays a schedule out as seedfall writes one: a line per field and
// per fault, so that the tests can point at lines.
func sched(head string, faults ...string) string {
	s := "{\n  \"seed\": 1,\n"
	if head != "" {
		s += "  " + head + ",\n"
	}
	s += "  \"faults\": ["
	for i, f := range faults {
		if i > 0 {
			s += ","
		}
		s += "\n    " + f
	}
	return s + "\n  ]\n}\n"
}

// Every error of a schedule names the file, the line and the field path,
// and says what to write; none names a Go type.
func TestScheduleErrors(t *testing.T) {
	crash := `{"at": "1s", "kind": "crash", "node": "a", "until": "2s"}`
	world := CheckConfig{Programs: []string{"a", "b"}, Duration: 10 * time.Second}
	for _, tc := range []struct{ name, src, want string }{
		// Syntax and shape.
		{"empty", "", `s.json:1: empty file; want a schedule such as {"seed": 1, "duration": "10s", "faults": []}`},
		{"syntax", "{\n\"seed\": 1\n\"faults\": []}", `s.json:3: syntax error: invalid character '"' after object key:value pair`},
		{"trailing comma", sched(`"duration": "5s"`, crash+","), `s.json:6: syntax error: trailing comma before ']'; JSON allows none`},
		{"ends early", "{\n\"seed\": 1,\n", `s.json:2: syntax error: the file ends early; is a closing '}' or ']' missing?`},
		{"not an object", "[]", `s.json:1: want a schedule such as {"seed": 1, "duration": "10s", "faults": []}, got a list`},
		{"unknown field", sched(`"duraton": "5s"`), `s.json:3: duraton: unknown field (did you mean "duration"?)`},
		{"set twice", "{\n\"seed\": 1,\n\"seed\": 2}", `s.json:3: seed: set twice; it is already set on line 2`},

		// Types, in the words: no "Go struct field".
		{"at a number", sched("", crash, crash, crash, `{"at": 12, "kind": "crash", "node": "a", "until": "2s"}`),
			`s.json:7: faults[3].at: want a duration such as "250ms", got 12`},
		{"at not a duration", sched("", `{"at": "soon", "kind": "crash", "node": "a", "until": "2s"}`),
			`s.json:4: faults[0].at: want a duration such as "250ms" or "2s", got "soon"`},
		{"seed a string", `{"seed": "7", "faults": []}`, `s.json:1: seed: want a seed, a whole number from 0 to 18446744073709551615, got "7"`},
		{"seed negative", `{"seed": -1, "faults": []}`, `s.json:1: seed: want a seed, a whole number from 0 to 18446744073709551615, got -1`},
		{"faults an object", `{"seed": 1, "faults": {}}`, `s.json:1: faults: want a list of faults such as [{"at": "1s", "kind": "crash", "node": "n1", "until": "2s"}], got an object`},
		{"fault a string", sched("", `"crash"`), `s.json:4: faults[0]: want a fault such as {"at": "1s", "kind": "crash", "node": "n1", "until": "2s"}, got "crash"`},
		{"fault field unknown", sched("", `{"at": "1s", "kind": "crash", "node": "a", "untl": "2s"}`), `s.json:4: faults[0].untl: unknown field (did you mean "until"?)`},
		{"kind a number", sched("", `{"at": "1s", "kind": 3, "node": "a", "until": "2s"}`), `s.json:4: faults[0].kind: want a string, got 3`},
		{"side not a list", sched("", `{"at": "1s", "kind": "partition", "side": "a", "until": "2s"}`), `s.json:4: faults[0].side: want a list of node names such as ["n1", "n2"], got "a"`},
		{"group of numbers", sched("", `{"at": "1s", "kind": "partition", "groups": [["a"], [1]], "until": "2s"}`), `s.json:4: faults[0].groups[1][0]: want a string, got 1`},
		{"op fraction", sched("", `{"at": "1s", "kind": "crash", "node": "a", "op": 1.5, "until": "2s"}`), `s.json:4: faults[0].op: want an operation number, a whole number from 1, got 1.5`},
		{"factor a string", sched("", `{"at": "1s", "kind": "crash", "node": "a", "factor": "2", "until": "2s"}`), `s.json:4: faults[0].factor: want a factor such as 2.5, got "2"`},
		{"offset too big", sched("", `{"at": "1s", "kind": "crash", "node": "a", "offset": 1e30, "until": "2s"}`), `s.json:4: faults[0].offset: want a byte offset, a whole number, got 1e30`},
		{"shrunk_from negative", sched(`"shrunk_from": -3`), `s.json:3: shrunk_from: want a count of 0 or more, got -3`},
		{"branch stream", sched(`"branches": [{"at": "1s", "key": 1, "stream": "nope"}]`), `s.json:3: branches[0].stream: "nope" is not a stream (one of sched, net, disk, io, udp, disklatency, mutant, random, cpu, poll, or leave it out for all)`},
		{"branch back in time", sched(`"branches": [{"at": "2s", "key": 1}, {"at": "1s", "key": 2}]`), `s.json:3: branches[1].at: 1s is before the branch above it (2s): branches must not go back in time`},

		// Duration and the end of the run.
		{"duration negative", sched(`"duration": "-5s"`), `s.json:3: duration: want a duration above 0 such as "10s" (or "0s", or no duration, for the world's), got "-5s"`},
		{"at past duration", sched(`"duration": "5s"`, crash, `{"at": "6s", "kind": "crash", "node": "a", "until": "7s"}`),
			`s.json:6: faults[1]: at 6s is after the end of the run at 5s (fault 2, crash)`},
		{"at past the world's duration", sched("", `{"at": "11s", "kind": "crash", "node": "b", "until": "12s"}`),
			`s.json:4: faults[0]: at 11s is after the end of the run at 10s (fault 1, crash)`},

		// The rules `seedfall faults` checks.
		{"unknown node", sched("", `{"at": "1s", "kind": "crash", "node": "zz", "until": "2s"}`),
			`s.json:4: faults[0]: node "zz" is not in the world (it has a, b) (fault 1, crash)`},
		{"negative at", sched("", `{"at": "-1s", "kind": "crash", "node": "a", "until": "2s"}`),
			`s.json:4: faults[0]: at -1s is negative (fault 1, crash)`},
		{"until before at", sched("", `{"at": "3s", "kind": "crash", "node": "a", "until": "2s"}`),
			`s.json:4: faults[0]: until 2s is before at 3s (fault 1, crash)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.json")
			if err := os.WriteFile(path, []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path, world)
			if err == nil {
				t.Fatalf("no error, want %s", tc.want)
			}
			got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if got != tc.want {
				t.Errorf("error:\n got %s\nwant %s", got, tc.want)
			}
			if strings.Contains(got, "Go ") || strings.Contains(got, "scheduleJSON") || strings.Contains(got, "faultJSON") {
				t.Errorf("error names a Go type: %s", got)
			}
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("error is %T, want *Error", err)
			}
		})
	}
}

// A schedule inside other JSON (a -add flag, a Starlark value) has no file,
// and lines that would mislead: its errors name the field path alone. "0s"
// there is the world's duration, as Starlark writes it.
func TestScheduleUnmarshalErrors(t *testing.T) {
	var s Schedule
	err := json.Unmarshal([]byte("{\"seed\": 1,\n\"faults\": [{\"at\": 12}]}"), &s)
	if err == nil || err.Error() != `faults[0].at: want a duration such as "250ms", got 12` {
		t.Errorf("error %v", err)
	}
	var f Fault
	err = json.Unmarshal([]byte(`{"at": "1s", "kind": "crash", "nod": "a"}`), &f)
	if err == nil || err.Error() != `nod: unknown field (did you mean "node"?)` {
		t.Errorf("error %v", err)
	}
	if err := json.Unmarshal([]byte(`{"seed": 1, "duration": "0s", "faults": []}`), &s); err != nil || s.Duration != 0 {
		t.Errorf("duration 0s without a file: %v, %v", s.Duration, err)
	}
	err = json.Unmarshal([]byte(`{"seed": 1, "duration": "-1s", "faults": []}`), &s)
	if err == nil || err.Error() != `duration: want a duration above 0 such as "10s" (or "0s", or no duration, for the world's), got "-1s"` {
		t.Errorf("error %v", err)
	}
}

// A schedule with no duration is the world's; one seedfall writes with
// none leaves it out, and reads back the same.
func TestScheduleWithoutDuration(t *testing.T) {
	s := &Schedule{Seed: 3, Faults: []Fault{{At: time.Second, Kind: Crash, Node: "a", Until: 2 * time.Second}}}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "duration") {
		t.Errorf("a schedule without a duration writes one:\n%s", b)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, CheckConfig{Programs: []string{"a"}, Duration: 5 * time.Second})
	if err != nil || got.Duration != 0 || len(got.Faults) != 1 || got.Faults[0].String() != s.Faults[0].String() {
		t.Errorf("Load = %+v, %v", got, err)
	}
}

// A schedule of many faults, or an object of many repeated keys, costs
// time linear in its size.
func TestScheduleDecodeIsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"seed": 1, "faults": [{"at": "1s", "kind": "crash", "node": "a", "until": "2s"`)
	for i := 0; i < 200000; i++ {
		b.WriteString(`, "site": ""`)
	}
	b.WriteString("}]}")
	start := time.Now()
	_, err := Parse("s.json", []byte(b.String()))
	if err == nil || err.Error() != `s.json:1: faults[0].site: set twice; it is already set on line 1` {
		t.Errorf("error %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("200,000 keys took %v", d)
	}
}

// A schedule file is a regular file of at most 16 MiB, as a world file is:
// /dev/zero is refused before anything is read.
func TestLoadBoundedFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 16<<20+1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: cannot read the schedule: it is a character device, not a regular file"},
		{dir, dir + ": cannot read the schedule: it is a directory, not a regular file"},
		{big, big + ": cannot read the schedule: it has 16777217 bytes, over the limit of 16 MiB"},
	} {
		_, err := Load(tc.path, CheckConfig{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Load(%s): %v, want %s", tc.path, err, tc.want)
		}
	}
}
