package engine

import (
	"fmt"
	"strings"
	"testing"
)

const propsSite = "guests/props/main.go:"

func TestPropertiesOfAPassingRun(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./props", "args": ["-n", "5"]}}`)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("run failed: %s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	// Reached ones in order of first hit, then the declared ones no
	// evaluation reached, by site.
	want := []struct {
		kind, msg           string
		hits, true_, false_ uint64
		holds               bool
	}{
		{PropAlways, "balance never negative", 5, 5, 0, true},
		{PropSometimes, "an even step", 5, 2, 3, true},
		{PropAlwaysOrUnreachable, "steps stay in range", 5, 5, 0, true},
		{PropReachable, "the end", 1, 1, 0, true},
		{PropUnreachable, "the forbidden branch", 0, 0, 0, true},
		{PropReachable, "a negative count", 0, 0, 0, false},
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
		if !strings.HasPrefix(g.Site, propsSite) {
			t.Errorf("%s %q: site %q, want it in %s", g.Kind, g.Message, g.Site, propsSite)
		}
	}
	out := output(r, "")
	// Each property shows once, at its first hit; the run goes on.
	if n := strings.Count(out, `property always "balance never negative" first reached at `+propsSite); n != 1 {
		t.Errorf("the first hit of the Always shows %d times in the trace, want 1:\n%s", n, out)
	}
	if !strings.Contains(out, `{"balance":10,"step":1}`) {
		t.Errorf("the first hit does not carry its details (sorted JSON):\n%s", out)
	}
	// A Sometimes false at its first hit shows again when it first holds.
	if !strings.Contains(out, `property sometimes "an even step" first true at `+propsSite) || !strings.Contains(out, `{"step":2}`) {
		t.Errorf("trace lacks the first time the Sometimes holds:\n%s", out)
	}
	if strings.Count(out, "property ") != 5 {
		t.Errorf("want 5 property lines (one per property reached, one for the Sometimes holding):\n%s", out)
	}
}

// A property that breaks fails the run at once: the program never gets
// past the call.
func TestPropertyFailsTheRunAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, args, reason, event string
		last                      int // the last step printed
	}{
		{"always false", `"-bad", "3"`, `property "balance never negative" failed in client#1: details {"balance":-5,"step":3}`,
			`property always "balance never negative" failed at ` + propsSite, 2},
		{"unreachable reached", `"-unreachable", "2"`, `property "the forbidden branch" was reached in client#1: details {"step":2}`,
			`property unreachable "the forbidden branch" was reached at ` + propsSite, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./props", "args": [`+tc.args+`]}}`)
			r := twice(t, p, 7, nil)
			if r.Passed || r.Class != ClassProperty || r.Reason != tc.reason || r.Node != "client" {
				t.Fatalf("verdict %v %s %q node %q, want property %q\n%s", r.Passed, r.Class, r.Reason, r.Node, tc.reason, output(r, ""))
			}
			out := output(r, "")
			if !strings.Contains(out, tc.event) {
				t.Errorf("trace lacks %q:\n%s", tc.event, out)
			}
			if !strings.Contains(out, fmt.Sprintf("step %d\n", tc.last)) || strings.Contains(out, fmt.Sprintf("step %d\n", tc.last+1)) {
				t.Errorf("the program should stop right at the failing property, after step %d:\n%s", tc.last, out)
			}
			failed := 0
			for _, pr := range r.Properties {
				if pr.Failed {
					failed++
				}
			}
			if failed != 1 {
				t.Errorf("%d properties marked failed, want 1: %+v", failed, r.Properties)
			}
			// The failure replays from its schedule with the same trace.
			if again := twice(t, p, 7, r.Schedule); again.Digest != r.Digest {
				t.Errorf("replaying the schedule changed the trace")
			}
		})
	}
}

// The finally check's properties count like any other.
func TestPropertyInTheFinallyCheck(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]},
		"finally": {"name": "check", "pkg": "./props", "args": ["-bad", "1"]}}`)
	r := twice(t, p, 3, nil)
	want := `property "balance never negative" failed in check#1: details {"balance":-5,"step":1}`
	if r.Passed || r.Class != ClassProperty || r.Reason != want || r.Node != "check" {
		t.Fatalf("verdict %v %s %q node %q, want property %q\n%s", r.Passed, r.Class, r.Reason, r.Node, want, output(r, ""))
	}
}

// A Sometimes that never holds does not fail the run: it shows as not
// holding, for the sweep's coverage to report.
func TestSometimesNeverTrueDoesNotFail(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "client", "pkg": "./props", "args": ["-never"]}}`)
	r := twice(t, p, 2, nil)
	if !r.Passed {
		t.Fatalf("run failed: %s: %s", r.Class, r.Reason)
	}
	for _, pr := range r.Properties {
		if pr.Kind == PropSometimes && (pr.Holds() || pr.Hits != 5 || pr.False != 5) {
			t.Errorf("sometimes never true: %+v, Holds() = %v", pr, pr.Holds())
		}
	}
}

func TestPropertyHolds(t *testing.T) {
	for _, tc := range []struct {
		p    Property
		want bool
	}{
		{Property{Kind: PropAlways}, false},
		{Property{Kind: PropAlways, Hits: 2, True: 2}, true},
		{Property{Kind: PropAlways, Hits: 2, True: 1, False: 1}, false},
		{Property{Kind: PropAlwaysOrUnreachable}, true},
		{Property{Kind: PropAlwaysOrUnreachable, Hits: 1, False: 1}, false},
		{Property{Kind: PropSometimes, Hits: 3, False: 3}, false},
		{Property{Kind: PropSometimes, Hits: 3, True: 1, False: 2}, true},
		{Property{Kind: PropReachable}, false},
		{Property{Kind: PropReachable, Hits: 1, True: 1}, true},
		{Property{Kind: PropUnreachable}, true},
		{Property{Kind: PropUnreachable, Hits: 1, True: 1}, false},
	} {
		if got := tc.p.Holds(); got != tc.want {
			t.Errorf("%+v: Holds() = %v, want %v", tc.p, got, tc.want)
		}
	}
}
