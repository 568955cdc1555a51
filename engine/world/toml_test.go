package world

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// specTOML is specExample written as TOML.
const specTOML = `# the spec's example world
duration = "60s"
latency = ["1ms", "5ms"]
supervise = true

[[nodes]]
name = "n1"
pkg = "./node"
args = ["-id", "n1"]

[[nodes]]
name = "n2"
pkg = "./node"
args = ["-id", "n2"]

[workload]
name = "client"
pkg = "./client"

[faults]
crash_per_sec = 0.5
restart_after = ["10ms", "500ms"]
partition_per_sec = 0.2
partition_for = ["50ms", "1s"]
torn_writes = true
crash_on_io = 0.005
fsync_eio = 0.01
strict_dirs = true
clock_skew = "200ms"
pause_per_sec = 0.2
clock_jump_per_sec = 0.05
buggify = true
swarm = true
`

func TestTOMLSameAsJSON(t *testing.T) {
	wj := mustParse(t, specExample)
	wt, err := Parse([]byte(specTOML), "world.toml", "/proj")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(comparable(wj), comparable(wt)) {
		a, _ := wj.JSON()
		b, _ := wt.JSON()
		t.Errorf("the TOML twin differs from the JSON world:\n%s\n---\n%s", a, b)
	}
	if wt.File != "world.toml" {
		t.Errorf("File = %q", wt.File)
	}
	for path, want := range map[string]int{"duration": 2, "nodes[1].args": 14, "workload.pkg": 18, "faults.swarm": 33, "nodes[0]": 6} {
		if got := wt.Line(path); got != want {
			t.Errorf("Line(%s) = %d, want %d", path, got, want)
		}
	}
}

// TestTOMLErrors checks that a mistake in a TOML world is reported with the
// line it is written on and the key path a JSON world would give.
func TestTOMLErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"top-level key", `
duration = "10 s"
[workload]
name = "c"
pkg = "./c"
`, `world.toml:2: duration: want a duration such as "250ms" or "2s", got "10 s"`},
		{"second node of an array of tables", `
[workload]
name = "c"
pkg = "./c"

[[nodes]]
name = "a"
pkg = "./n"

[[nodes]]
name = "b"
# a comment holding "quotes' and pkgg = 1
pkgg = "./n"
`, `world.toml:13: nodes[1].pkgg: unknown field (did you mean "pkg"?)`},
		{"dotted key", `
workload = {name = "c", pkg = "./c"}
faults.udp_loss = 1.5
`, `world.toml:3: faults.udp_loss: want a probability between 0 and 1, got 1.5`},
		{"sub-table of the latest node", `
workload = {name = "c", pkg = "./c"}
[[nodes]]
name = "a"
pkg = "./n"
[[nodes]]
name = "b"
pkg = "./n"
[nodes.files]
"data/x" = "./x"
"/abs" = "./y"
`, `world.toml:11: nodes[1].files["/abs"]: disk path is absolute; write it relative to the node's disk, such as "data/seed.db"`},
		{"inline tables across lines", `
workload = {name = "c", pkg = "./c"}
nodes = [{name = "a", pkg = "./n"}]
links = [
  {from = "a", to = "c", latency = ["1ms", "2ms"]},
  {from = "a", to = "c",
   latency = ["5ms", "1ms"]},
]
`, `world.toml:7: links[1].latency: the minimum 5ms is above the maximum 1ms; write [min, max]`},
		{"strings that look like keys", `
workload = {name = "c", pkg = "./c", args = ["latency = 1", '''
[[nodes]]
name = 2''']}
latency = ["1ms"]
`, `world.toml:5: latency: want a range of two durations such as ["1ms", "10ms"], got 1 values`},
		{"a wrong type", `
supervise = "yes"
workload = {name = "c", pkg = "./c"}
`, `world.toml:2: supervise: want true or false, got "yes"`},
		{"a date", `
workload = {name = "c", pkg = "./c"}
duration = 1979-05-27
`, `world.toml:3: duration: want a string, a number, true or false, got the TOML date 1979-05-27; quote it if it is meant as a string`},
		{"a list of mixed values", `
workload = {name = "c", pkg = "./c"}
nodes = [
  {name = "a", pkg = "./n"},
  "b",
]
`, `world.toml:5: nodes[1]: want a program such as {"name": "n1", "pkg": "./node"}, got "b"`},
		{"syntax: unquoted duration", `
[workload]
name = "c"
duration = 10s
`, `world.toml:4: syntax error: `},
		{"syntax: a key set twice", `
[workload]
name = "c"
name = "d"
`, `world.toml:4: syntax error: `},
		{"profile", `
workload = {name = "c", pkg = "./c"}
[profiles.ci]
duration = "1m"
[profiles.quick]
durration = "1s"
`, `world.toml:6: profiles.quick.durration: unknown field (did you mean "duration"?)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "world.toml", "/proj")
			var we *Error
			if !errors.As(err, &we) {
				t.Fatalf("err = %v, want a *world.Error", err)
			}
			if got := err.Error(); !strings.HasPrefix(got, c.want) || strings.HasSuffix(c.want, ": ") && len(got) == len(c.want) {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestTOMLExtends(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"base.json":  base,
		"child.toml": "extends = \"base.json\"\nduration = \"7s\"\n[faults]\nudp_loss = 0.25\n",
		"grand.json": `{"extends": "child.toml", "supervise": true}`,
		"bad.toml":   "workload = {name = \"c\", pkg = \"./c\"}\n\n[faults]\nclog_modes = [\"stop\", \"jamm\"]\n",
		"kid.json":   "{\n  \"extends\": \"bad.toml\"\n}",
	})
	w, err := loadIn(t, dir, "grand.json", Options{Profile: "ci"})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Supervise || w.Duration.String() != "5m0s" || w.Faults.UDPLoss != 0.25 || w.Faults.CrashPerSec != 0.5 || len(w.Nodes) != 1 {
		t.Errorf("composed world: supervise %v duration %v udp_loss %v crash %v nodes %d",
			w.Supervise, w.Duration, w.Faults.UDPLoss, w.Faults.CrashPerSec, len(w.Nodes))
	}
	if want := []string{"grand.json", "child.toml", "base.json"}; !reflect.DeepEqual(w.Files, want) {
		t.Errorf("Files = %q, want %q", w.Files, want)
	}
	_, err = loadIn(t, dir, "kid.json", Options{})
	if want := `bad.toml:4: faults.clog_modes[1]: `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error in an extended TOML file = %v, want it to start %q", err, want)
	}
}

// comparable returns the parts of a world that say what it simulates,
// leaving out where it was read from (file names, lines).
func comparable(w *World) World {
	c := *w
	c.File, c.Files, c.Extends, c.Profiles, c.Profile, c.Sets = "", nil, "", nil, "", nil
	c.set, c.line = nil, nil
	clean := func(p Program) Program {
		p.Line = 0
		if len(p.Args) == 0 {
			p.Args = nil
		}
		if len(p.Env) == 0 {
			p.Env = nil
		}
		return p
	}
	c.Nodes = nil
	for _, p := range w.Nodes {
		c.Nodes = append(c.Nodes, clean(p))
	}
	c.Workloads = nil
	for _, p := range w.Workloads {
		c.Workloads = append(c.Workloads, clean(p))
	}
	if w.Finally != nil {
		f := clean(*w.Finally)
		c.Finally = &f
	}
	c.Links = nil
	for _, l := range w.Links {
		l.Line = 0
		c.Links = append(c.Links, l)
	}
	return c
}

// TestTOMLPlaces checks the line found for each key path in a document
// that uses every way TOML has of writing a key, with strings and comments
// made to mislead a scan.
func TestTOMLPlaces(t *testing.T) {
	src := strings.Join([]string{
		`a = """`,                              // 1
		`b = 1 # inside the string`,            // 2
		`[[c]] \""" '''`,                       // 3
		`"""`,                                  // 4
		`'lit.key' = 'x # y'`,                  // 5
		`[[ c ]]  # first`,                     // 6
		`"q\"k" . inner = "v"`,                 // 7
		`[[c]]`,                                // 8
		`arr = [ # comment [`,                  // 9
		`  { k = 1 }, { k = 2,`,                // 10
		`  m = [1, 2] } ]`,                     // 11
		"[c . sub]\r",                          // 12
		"deep = { x = { y = '''\r\nz''' } }\r", // 13, 14
		`[[c.list]]`,                           // 15
		`n = 1`,                                // 16
	}, "\n")
	if _, err := Parse([]byte(src), "x.toml", "/proj"); err != nil {
		var we *Error
		if !errors.As(err, &we) || strings.Contains(we.Msg, "syntax") {
			t.Fatalf("the document does not parse as TOML: %v", err)
		}
	}
	places := tomlPlaces([]byte(src))
	lines := newSource("x.toml", []byte(src))
	want := map[string]int{
		"a": 1, `["lit.key"]`: 5, "c": 6, "c[0]": 6, `c[0]["q\"k"]`: 7, `c[0]["q\"k"].inner`: 7,
		"c[1]": 8, "c[1].arr": 9, "c[1].arr[0]": 10, "c[1].arr[0].k": 10, "c[1].arr[1].k": 10,
		"c[1].arr[1].m": 11, "c[1].arr[1].m[1]": 11, "c[1].sub": 12, "c[1].sub.deep": 13,
		"c[1].sub.deep.x.y": 13, "c[1].list": 15, "c[1].list[0].n": 16,
	}
	got := map[string]int{}
	for p, at := range places {
		got[jsonPath(p)] = lines.line(at.key)
	}
	for p, l := range want {
		if got[p] != l {
			t.Errorf("%s: line %d, want %d", p, got[p], l)
		}
	}
	for _, p := range []string{"b", "y", "c[2]"} {
		if _, ok := got[p]; ok {
			t.Errorf("found %s, which the document does not set", p)
		}
	}
}
