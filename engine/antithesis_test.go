package engine

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
)

// The guest of these tests, testdata/guests/antithesis/sdk, is written
// against the Antithesis Go SDK (v0.9.0), not sim; the SDK shim of
// engine/guest/compat makes its calls seedfall's.
const sdkSite = "sdkguests/sdk/main.go:"

// Every assertion of the SDK is the sim property of the same meaning,
// counted at every evaluation, at the user's call site; the ones the
// source declares and no evaluation reached are listed too.
func TestAntithesisAssertionsCountLikeSim(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./antithesis/sdk", "args": ["-n", "5"]}}`)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("run failed: %s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	want := []struct {
		kind, msg           string
		hits, true_, false_ uint64
		holds               bool
	}{
		{PropAlways, "sdk balance never negative", 5, 5, 0, true},
		{PropSometimes, "sdk an even step", 5, 2, 3, true},
		{PropAlwaysOrUnreachable, "sdk steps stay in range", 5, 5, 0, true},
		{PropAlways, "sdk balance at least zero", 5, 5, 0, true}, // AlwaysGreaterThanOrEqualTo
		{PropAlways, "sdk step below the end", 5, 5, 0, true},    // AlwaysLessThan
		{PropSometimes, "sdk a late step", 5, 2, 3, true},        // SometimesGreaterThan(i, 3)
		{PropSometimes, "sdk even and late", 5, 1, 4, true},      // SometimesAll
		{PropAlways, "sdk odd or even", 5, 5, 0, true},           // AlwaysSome
		{PropReachable, "sdk the end", 1, 1, 0, true},
		// Declared, never reached: found in the source.
		{PropUnreachable, "sdk the forbidden branch", 0, 0, 0, true},
		{PropReachable, "sdk a negative count", 0, 0, 0, false},
		{PropSometimes, "sdk never evaluated", 0, 0, 0, false},
		{PropReachable, `sdk a "quoted" message`, 0, 0, 0, false},
	}
	if len(r.Properties) != len(want) {
		t.Fatalf("got %d properties, want %d: %+v", len(r.Properties), len(want), r.Properties)
	}
	for i, w := range want {
		g := r.Properties[i]
		if g.Kind != w.kind || g.Message != w.msg || g.Hits != w.hits || g.True != w.true_ || g.False != w.false_ || g.Failed {
			t.Errorf("property %d = %+v, want %s %q hits %d true %d false %d", i, g, w.kind, w.msg, w.hits, w.true_, w.false_)
		}
		if g.Holds() != w.holds {
			t.Errorf("%s %q: Holds() = %v, want %v", g.Kind, g.Message, g.Holds(), w.holds)
		}
		if !strings.HasPrefix(g.Site, sdkSite) {
			t.Errorf("%s %q: site %q, want the user's call site in %s", g.Kind, g.Message, g.Site, sdkSite)
		}
	}
	// Numeric guidance: SometimesGreaterThan(i, 3) false at steps 1, 2 and
	// 3 comes within 2, 1 and 0 of true, each closer, at later moments.
	var late []Guidance
	for _, g := range r.Guidance {
		if g.Message == "sdk a late step" {
			late = append(late, g)
		}
	}
	if len(late) != 3 || late[0].Bucket != 2 || late[1].Bucket != 1 || late[2].Bucket != 0 || !(late[0].At <= late[1].At && late[1].At <= late[2].At) {
		t.Errorf("guidance of \"sdk a late step\": %+v; want buckets 2, 1, 0 in order", late)
	}
	out := output(r, "")
	for _, s := range []string{
		`property always "sdk balance never negative" first reached at ` + sdkSite,
		`{"balance":10,"step":1}`,
		`property sometimes "sdk an even step" first true at ` + sdkSite,
		// A rich assertion's details carry its operands.
		`property sometimes "sdk a late step" first true at ` + sdkSite,
		`{"left":4,"right":3}`,
		// Its operands and the user's details, keys sorted as sim's.
		`property always "sdk balance at least zero" first reached at ` + sdkSite + `48: {"left":10,"right":0,"step":1}`,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("trace lacks %q:\n%s", s, out)
		}
	}
	// Each site is the line of the call in main.go.
	src, err := os.ReadFile("testdata/guests/antithesis/sdk/main.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for _, g := range r.Properties {
		var line int
		if _, err := fmt.Sscan(strings.TrimPrefix(g.Site, sdkSite), &line); err != nil || line < 1 || line > len(lines) {
			t.Errorf("%q: site %q", g.Message, g.Site)
			continue
		}
		if !strings.Contains(lines[line-1], strconv.Quote(g.Message)) {
			t.Errorf("%q: site %s is %q", g.Message, g.Site, lines[line-1])
		}
	}
}

// A false assert.Always fails the run as a false sim.Always does: at once,
// class property, and the failure replays.
func TestAntithesisFailingAssertionFailsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name, args, reason, event string
		last                      int // the last step printed
	}{
		{"always false", `"-bad", "3"`, `property "sdk balance never negative" failed in client#1: details {"balance":-5,"step":3}`,
			`property always "sdk balance never negative" failed at ` + sdkSite, 2},
		{"unreachable reached", `"-unreachable", "2"`, `property "sdk the forbidden branch" was reached in client#1: details {"step":2}`,
			`property unreachable "sdk the forbidden branch" was reached at ` + sdkSite, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./antithesis/sdk", "args": [`+tc.args+`]}}`)
			for seed := uint64(1); seed <= 3; seed++ {
				r := twice(t, p, seed, nil)
				if r.Passed || r.Class != ClassProperty || r.Reason != tc.reason || r.Node != "client" {
					t.Fatalf("seed %d: verdict %v %s %q node %q, want property %q\n%s", seed, r.Passed, r.Class, r.Reason, r.Node, tc.reason, output(r, ""))
				}
				out := output(r, "")
				if !strings.Contains(out, tc.event) {
					t.Errorf("trace lacks %q:\n%s", tc.event, out)
				}
				if !strings.Contains(out, "step "+strconv.Itoa(tc.last)+"\n") || strings.Contains(out, "step "+strconv.Itoa(tc.last+1)+"\n") {
					t.Errorf("the program should stop right at the failing assertion, after step %d:\n%s", tc.last, out)
				}
				if again := twice(t, p, seed, r.Schedule); again.Digest != r.Digest {
					t.Errorf("replaying the schedule changed the trace")
				}
			}
		})
	}
}

// lifecycle.SetupComplete opens faults_after_setup: a crash planned before
// it does not happen, one planned after it does.
func TestAntithesisSetupCompleteOpensFaults(t *testing.T) {
	const js = `{"duration": "2s", "faults_after_setup": true, "cpu": {"ns_per_call": 0},
		"nodes": [{"name": "n", "pkg": "./antithesis/sdk", "args": ["-n", "300", "-setup", "100ms"]}],
		"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "40"]}}`
	p := prepare(t, js)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 50_000_000, Kind: faults.Crash, Node: "n", Until: 60_000_000},
		{At: 150_000_000, Kind: faults.Crash, Node: "n", Until: 160_000_000},
	}}
	r := twice(t, p, 1, sch)
	if len(r.Schedule.Faults) != 1 || r.Schedule.Faults[0].At != 150_000_000 {
		t.Fatalf("faults that happened: %+v, want only the crash after setup\n%s", r.Schedule.Faults, output(r, "n"))
	}
	out := output(r, "n")
	if !strings.Contains(out, "0.100000000 n#1 - setup complete") || !strings.Contains(out, "faults start") {
		t.Fatalf("trace lacks the setup at 100ms:\n%s", out)
	}
	// Drawn faults wait for it too.
	p2 := prepare(t, `{"duration": "1s", "faults_after_setup": true, "faults": {"crash_per_sec": 5},
		"nodes": [{"name": "n", "pkg": "./antithesis/sdk", "args": ["-n", "800", "-setup", "300ms"]}],
		"workload": {"name": "w", "pkg": "./sleeper", "args": ["-n", "40"]}}`)
	later := 0
	for seed := uint64(1); seed <= 3; seed++ {
		r := run(t, p2, seed, nil)
		for _, f := range r.Schedule.Faults {
			if f.At < 300_000_000 {
				t.Fatalf("seed %d: fault %+v before setup completed", seed, f)
			}
			later++
		}
	}
	if later == 0 {
		t.Fatal("no fault at all after setup in seeds 1..3")
	}
}

// lifecycle.SendEvent is an event in the trace, with its details.
func TestAntithesisSendEventInTheTrace(t *testing.T) {
	p := prepare(t, `{"cpu": {"ns_per_call": 0}, "nodes": [], "workload": {"name": "client", "pkg": "./antithesis/sdk", "args": ["-n", "2", "-event"]}}`)
	r := twice(t, p, 4, nil)
	// Details as sim writes them: keys sorted at every level, strings
	// escaped as JSON.
	want := `0.002000000 client#1 - event "sdk steps done": {"balance":10,"nested":{"a":[1,2],"b":1},"note":"a \"quoted\", {braced} word","steps":2}`
	if !r.Passed || !strings.Contains(output(r, ""), want) {
		t.Fatalf("trace lacks %q:\n%s", want, output(r, ""))
	}
	// A message with escapes is the same property at run time as in the
	// source.
	for _, pr := range r.Properties {
		if pr.Message == `sdk a "quoted" message` && (pr.Kind != PropReachable || pr.Hits != 1) {
			t.Errorf("%+v, want reached once", pr)
		}
	}
}

// random.GetRandom and RandomChoice draw from the node's seeded stream:
// the same for a seed, different across seeds.
func TestAntithesisRandomIsSeeded(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./antithesis/sdk", "args": ["-n", "1", "-random", "4"]}}`)
	draws := func(seed uint64) string {
		r := twice(t, p, seed, nil) // the same seed twice: the same digest
		var got []string
		for _, l := range strings.Split(output(r, "client"), "\n") {
			if i := strings.Index(l, "| random "); i >= 0 {
				got = append(got, l[i+2:])
			} else if i := strings.Index(l, "| choice "); i >= 0 {
				got = append(got, l[i+2:])
			}
		}
		if len(got) != 5 {
			t.Fatalf("seed %d: %d draws printed, want 4 and a choice:\n%s", seed, len(got), output(r, ""))
		}
		return strings.Join(got, "\n")
	}
	a, b := draws(1), draws(2)
	if a == b {
		t.Errorf("seeds 1 and 2 drew the same:\n%s", a)
	}
	if again := draws(1); again != a {
		t.Errorf("seed 1 drew differently twice:\n%s\n---\n%s", a, again)
	}
}

// Outside seedfall the SDK is untouched: a native build writes its
// assertions to $ANTITHESIS_SDK_LOCAL_OUTPUT and a false Always does not
// stop the program.
func TestAntithesisNativeBuildUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds natively")
	}
	out := filepath.Join(t.TempDir(), "sdk.jsonl")
	cmd := exec.Command("go", "run", "./sdk", "-n", "3", "-bad", "2", "-sleep", "0")
	cmd.Dir = "testdata/guests/antithesis"
	cmd.Env = append(os.Environ(), "ANTITHESIS_SDK_LOCAL_OUTPUT="+out, "GOFLAGS=-mod=mod", "GOWORK=off", "SEEDFALL=")
	stdout, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, stdout)
	}
	if !strings.Contains(string(stdout), "step 3\ndone\n") {
		t.Errorf("the program did not run to the end:\n%s", stdout)
	}
	jsonl, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"antithesis_assert":\{[^\n]*"message":"sdk balance never negative"[^\n]*"condition":false`).Match(jsonl) {
		t.Errorf("the local output lacks the false Always:\n%s", jsonl)
	}
}

// The coverage scan finds the SDK's assertions like sim's, through an
// import name and type arguments, and only in files importing the SDK.
func TestAntithesisAssertionsInTheSource(t *testing.T) {
	const src = `package p

import (
	a "github.com/antithesishq/antithesis-sdk-go/assert"
	"github.com/seedfall/seedfall/sim"
)

func f(x int) {
	a.Always(x > 0, "positive", nil)
	a.AlwaysLessThan[int](x, 10, "below ten", nil)
	a.SometimesGreaterThanOrEqualTo(x, 5, "five or more", nil)
	a.SometimesAll(nil, "all of them", nil)
	a.AlwaysSome(nil, "one of them", nil)
	a.Unreachable("never here", nil)
	a.AlwaysOrUnreachable(true, "if here, fine", nil)
	a.AssertRaw(true, "raw", nil, "", "", "", 0, 0, true, true, "always", "Always", "raw")
	sim.Reachable("sim too", nil)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := fileProperties(fset, f, "m/p.go")
	want := []Property{
		{Kind: PropAlways, Message: "positive", Site: "m/p.go:9"},
		{Kind: PropAlways, Message: "below ten", Site: "m/p.go:10"},
		{Kind: PropSometimes, Message: "five or more", Site: "m/p.go:11"},
		{Kind: PropSometimes, Message: "all of them", Site: "m/p.go:12"},
		{Kind: PropAlways, Message: "one of them", Site: "m/p.go:13"},
		{Kind: PropUnreachable, Message: "never here", Site: "m/p.go:14"},
		{Kind: PropAlwaysOrUnreachable, Message: "if here, fine", Site: "m/p.go:15"},
		{Kind: PropReachable, Message: "sim too", Site: "m/p.go:17"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// Another package named assert is not the SDK's.
	f2, _ := parser.ParseFile(fset, "q.go", `package q
import "example.com/assert"
func g() { assert.Always(true, "not the SDK", nil) }
`, 0)
	if got := fileProperties(fset, f2, "m/q.go"); len(got) != 0 {
		t.Errorf("another assert package's calls were taken for properties: %+v", got)
	}
}
