package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

const ms = int64(time.Millisecond)

// failing is a hand-made failing run of a three-program world.
func failing() Run {
	return Run{
		Seed: 7, Class: "workload", Reason: "client#1 exited with status 1", Node: "client", SimNs: 2000 * ms,
		Nodes:  []string{"n1", "n2", "client"},
		Replay: "seedfall replay -c seedfall.json -seed 7",
		Schedule: &faults.Schedule{Seed: 7, Duration: 20 * time.Second, Faults: []faults.Fault{
			{At: 100 * time.Millisecond, Kind: "crash", Node: "n1", Until: 300 * time.Millisecond},
			{At: 400 * time.Millisecond, Kind: "partition", Groups: [][]string{{"n1", "n2"}, {"n2", "client"}}, Until: 600 * time.Millisecond},
			{At: 500 * time.Millisecond, Kind: "clog", From: "n2", To: "client", Mode: "stop", Until: 700 * time.Millisecond},
			{At: 800 * time.Millisecond, Kind: "fsync_eio", Node: "n2", Op: 12, Path: "data/log"},
			{At: 900 * time.Millisecond, Kind: "clock_jump", Node: "n1", Delay: -3 * time.Second},
			{At: 1500 * time.Millisecond, Kind: "pause", Node: "n2", Until: 5 * time.Second},
		}},
		Lines: []trace.Line{
			{At: 0, Node: "n1", Inc: 1, Kind: trace.Event, Text: "start"},
			{At: 1000 * ms, Node: "client", Inc: 1, Kind: trace.Stdout, Text: "put k1"},
			{At: 1000*ms + 1, Node: "client", Inc: 1, Kind: trace.Stdout, Text: "put k2"},
			{At: 1100 * ms, Node: "net", Kind: trace.Event, Text: "heal"},
			{At: 1990 * ms, Node: "client", Inc: 1, Kind: trace.Stderr, Text: "<script>alert(1)</script> lost k1"},
		},
	}
}

func lane(t *testing.T, tl Timeline, node string) Lane {
	t.Helper()
	for _, l := range tl.Lanes {
		if l.Node == node {
			return l
		}
	}
	t.Fatalf("no lane %q (lanes: %v)", node, laneNames(tl))
	return Lane{}
}

func laneNames(tl Timeline) []string {
	var out []string
	for _, l := range tl.Lanes {
		out = append(out, l.Node)
	}
	return out
}

func TestLanes(t *testing.T) {
	tl := BuildTimeline(failing())
	// The world's programs in world order, then the world's own events.
	if got, want := strings.Join(laneNames(tl), " "), "n1 n2 client world"; got != want {
		t.Fatalf("lanes %q, want %q", got, want)
	}
	// A program the world list misses still gets a lane, in the order the
	// schedule and then the trace first name it.
	r := failing()
	r.Nodes = []string{"n1"}
	if got, want := strings.Join(laneNames(BuildTimeline(r)), " "), "n1 client n2 world"; got != want {
		t.Fatalf("lanes without the full world list %q, want %q", got, want)
	}
}

func TestBars(t *testing.T) {
	tl := BuildTimeline(failing())
	span := tl.Span
	for _, c := range []struct {
		node      string
		class     string
		at, until int64
		open      bool
		fault     int
	}{
		{"n1", "crash", 100 * ms, 300 * ms, false, 1},
		// A ring partition cuts n1 from client, and client from n1; n2
		// shares a group with each.
		{"n1", "partition", 400 * ms, 600 * ms, false, 2},
		{"client", "partition", 400 * ms, 600 * ms, false, 2},
		// A link clog is drawn on both ends.
		{"n2", "clog", 500 * ms, 700 * ms, false, 3},
		{"client", "clog", 500 * ms, 700 * ms, false, 3},
		// A pause past the end of the run stops at the end, marked open.
		{"n2", "pause", 1500 * ms, 2000 * ms, true, 6},
	} {
		var found *Bar
		for _, b := range lane(t, tl, c.node).Bars {
			if b.Class == c.class {
				found = &b
			}
		}
		if found == nil {
			t.Errorf("%s: no %s bar", c.node, c.class)
			continue
		}
		if found.At != c.at || found.Until != c.until || found.Open != c.open || found.Fault != c.fault {
			t.Errorf("%s %s bar: at %d until %d open %v fault %d, want %d..%d open %v fault %d",
				c.node, c.class, found.At, found.Until, found.Open, found.Fault, c.at, c.until, c.open, c.fault)
		}
		if want := pctOf(c.at, span); found.X != want {
			t.Errorf("%s %s bar starts at %s, want %s", c.node, c.class, found.X, want)
		}
		if want := pctOf(c.until-c.at, span); found.W != want {
			t.Errorf("%s %s bar is %s wide, want %s", c.node, c.class, found.W, want)
		}
	}
	for node, want := range map[string]int{"n1": 2, "n2": 2, "client": 2, "world": 0} {
		if got := len(lane(t, tl, node).Bars); got != want {
			t.Errorf("%s has %d bars, want %d", node, got, want)
		}
	}
	if b := lane(t, tl, "n2").Bars; !strings.Contains(b[len(b)-1].Title, "the run ended first") {
		t.Errorf("open bar's title %q does not say the run ended first", b[len(b)-1].Title)
	}
}

// A heal (the recovery phase, the finally check, a quiet period) ends
// every fault in force: its bar stops there and says so.
func TestBarsEndAtAHeal(t *testing.T) {
	r := failing()
	r.Heals = []int64{200 * ms, 1700 * ms} // a quiet period, then the recovery phase
	tl := BuildTimeline(r)
	for _, c := range []struct {
		node, class string
		until       int64
		healed      bool
	}{
		{"n1", "crash", 200 * ms, true},      // healed by the quiet period
		{"n2", "pause", 1700 * ms, true},     // by the recovery phase
		{"n2", "clog", 700 * ms, false},      // ended on its own
		{"n1", "partition", 600 * ms, false}, // began after the quiet period
	} {
		var found *Bar
		for _, b := range lane(t, tl, c.node).Bars {
			if b.Class == c.class {
				found = &b
			}
		}
		if found == nil {
			t.Fatalf("%s: no %s bar", c.node, c.class)
		}
		if found.Until != c.until || strings.Contains(found.Title, "healed at") != c.healed || found.Open {
			t.Errorf("%s %s bar: until %d, open %v, title %q; want until %d, healed %v", c.node, c.class, found.Until, found.Open, found.Title, c.until, c.healed)
		}
	}
}

func TestPartitionSide(t *testing.T) {
	// A side splits the world in two: everyone is cut from someone.
	f := faults.Fault{Kind: "partition", Side: []string{"n2"}}
	if got := strings.Join(faultNodes(f, []string{"n1", "n2", "client"}), " "); got != "n2 n1 client" {
		t.Fatalf("side partition drawn on %q", got)
	}
	// A program in no group is cut from everyone.
	f = faults.Fault{Kind: "partition", Groups: [][]string{{"n1", "n2"}}}
	if got := strings.Join(faultNodes(f, []string{"n1", "n2", "client"}), " "); got != "n1 n2 client" {
		t.Fatalf("groups partition drawn on %q", got)
	}
	f = faults.Fault{Kind: "partition", Groups: [][]string{{"n1", "n2", "client"}}}
	if got := faultNodes(f, []string{"n1", "n2", "client"}); len(got) != 0 {
		t.Fatalf("a partition that cuts nothing is drawn on %q", got)
	}
}

func TestMarks(t *testing.T) {
	tl := BuildTimeline(failing())
	has := func(node, class string, at int64, count, fault int, text string) {
		t.Helper()
		for _, m := range lane(t, tl, node).Marks {
			if m.Class == class && m.At == at {
				if m.Count != count || m.Fault != fault || !strings.Contains(m.Title, text) {
					t.Errorf("%s %s mark at %d: count %d fault %d title %q, want count %d fault %d and %q",
						node, class, at, m.Count, m.Fault, m.Title, count, fault, text)
				}
				if m.X != pctOf(at, tl.Span) {
					t.Errorf("%s %s mark at %s, want %s", node, class, m.X, pctOf(at, tl.Span))
				}
				return
			}
		}
		t.Errorf("%s: no %s mark at %d; marks: %+v", node, class, at, lane(t, tl, node).Marks)
	}
	has("n2", "disk", 800*ms, 1, 4, "fsync_eio n2 path data/log op #12")
	has("n1", "clock", 900*ms, 1, 5, "clock_jump n1 delay -3s")
	has("n1", "event", 0, 1, 0, "n1#1 - start")
	// Two lines a nanosecond apart share a mark that quotes both.
	has("client", "out", 1000*ms, 2, 0, "put k1\n")
	has("client", "err", 1990*ms, 1, 0, "lost k1")
	has("world", "event", 1100*ms, 1, 0, "heal")
	has("client", "fail", 2000*ms, 1, 0, "failure at 2s: workload: client#1 exited with status 1")
	for _, node := range []string{"n1", "n2", "world"} {
		for _, m := range lane(t, tl, node).Marks {
			if m.Class == "fail" {
				t.Errorf("the failure is marked on %s, not only on client", node)
			}
		}
	}

	// A verdict that names no program marks every lane.
	r := failing()
	r.Node = ""
	for _, l := range BuildTimeline(r).Lanes {
		n := 0
		for _, m := range l.Marks {
			if m.Class == "fail" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("lane %s has %d failure marks, want 1", l.Node, n)
		}
	}
}

func TestMarksShareBins(t *testing.T) {
	// A chatty program: 100,000 lines become at most one mark per bin.
	r := Run{Seed: 1, Passed: true, SimNs: 1000 * ms, Nodes: []string{"n1"}}
	for i := range 100_000 {
		r.Lines = append(r.Lines, trace.Line{At: int64(i) * 10_000, Node: "n1", Inc: 1, Kind: trace.Stdout, Text: "tick"})
	}
	tl := BuildTimeline(r)
	marks := lane(t, tl, "n1").Marks
	if len(marks) > bins {
		t.Fatalf("%d marks for one lane, want at most %d", len(marks), bins)
	}
	total := 0
	for _, m := range marks {
		total += m.Count
	}
	if total != len(r.Lines) {
		t.Fatalf("marks count %d lines, want %d", total, len(r.Lines))
	}
	if !strings.Contains(marks[0].Title, "… and ") {
		t.Fatalf("a shared mark's title %q does not say how many more lines it holds", marks[0].Title)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		end  int64
		want string
	}{
		{2462 * ms, "0s 500ms 1s 1.5s 2s"},
		{20_000 * ms, "0s 2s 4s 6s 8s 10s 12s 14s 16s 18s 20s"},
		{7, "0s 1ns 2ns 3ns 4ns 5ns 6ns 7ns"},
		{95 * ms, "0s 10ms 20ms 30ms 40ms 50ms 60ms 70ms 80ms 90ms"},
	} {
		var got []string
		for _, tk := range ticks(c.end+c.end/40, c.end) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("ticks for %v: %q, want %q", time.Duration(c.end), strings.Join(got, " "), c.want)
		}
	}
}

func TestWrite(t *testing.T) {
	rep := Report{Title: "seedfall report: seedfall.json", Config: "-c seedfall.json", Runs: []Run{
		{Seed: 5, Passed: true}, {Seed: 6, Passed: true}, failing(), {Seed: 8, Passed: true}, {Seed: 10, Passed: true},
	}}
	var a, b bytes.Buffer
	if err := Write(&a, rep); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same report written twice differs")
	}
	page := a.String()
	for _, want := range []string{
		"<title>seedfall report: seedfall.json</title>",
		"<td>5 (5-8, 10)</td>", // seeds
		`<td class="pass">4</td>`,
		`<td class="fail">1</td>`,
		`<tr class="cls"><th>workload</th><td>1: <a href="#seed-7">7</a></td></tr>`,
		`<section class="run" id="seed-7">`,
		`<svg class="lane" data-node="n1"`,
		`<svg class="lane" data-node="world"`,
		`<rect class="bar b-crash" data-fault="1"`,
		`<li data-n="4">800ms  fsync_eio n2 path data/log op #12</li>`,
		"<code>seedfall replay -c seedfall.json -seed 7</code>",
		"&lt;script&gt;alert(1)&lt;/script&gt; lost k1",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("program output reached the page unescaped")
	}
	for _, ext := range []string{"http://", "https://", "src=", "<link"} {
		if strings.Contains(page, ext) {
			t.Errorf("the page fetches something: it contains %q", ext)
		}
	}
}

func TestWriteManyFailures(t *testing.T) {
	var rep Report
	for i := range MaxDetailed + 3 {
		r := failing()
		r.Seed = uint64(i + 1)
		rep.Runs = append(rep.Runs, r)
	}
	var b bytes.Buffer
	if err := Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if got := strings.Count(page, `<section class="run"`); got != MaxDetailed {
		t.Errorf("%d timelines, want %d", got, MaxDetailed)
	}
	if !strings.Contains(page, "<h2>3 more failing seeds</h2>") || !strings.Contains(page, `<tr id="seed-53"><td>53</td>`) {
		t.Error("the failures past the detailed ones are not listed")
	}
}

// A fault that lasts no time, as shrink leaves a crash with no downtime,
// is still drawn: a mark of its own class, with a legend entry.
func TestZeroLengthFaults(t *testing.T) {
	r := failing()
	r.Schedule.Faults = append(r.Schedule.Faults,
		faults.Fault{At: 1200 * time.Millisecond, Kind: "crash", Node: "n2", Until: 1200 * time.Millisecond},
		faults.Fault{At: 1300 * time.Millisecond, Kind: "pause", Node: "n1", Until: 1300 * time.Millisecond})
	tl := BuildTimeline(r)
	for _, c := range []struct {
		node, class string
		at          int64
		fault       int
		text        string
	}{
		{"n2", "crash-zero", 1200 * ms, 7, "fault 7: 1.2s  crash n2, restart at 1.2s (no downtime)"},
		{"n1", "pause-zero", 1300 * ms, 8, "(zero length)"},
	} {
		found := false
		for _, m := range lane(t, tl, c.node).Marks {
			if m.Class == c.class && m.At == c.at {
				found = true
				if m.Fault != c.fault || !strings.Contains(m.Title, c.text) {
					t.Errorf("%s mark: fault %d title %q, want fault %d and %q", c.class, m.Fault, m.Title, c.fault, c.text)
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s mark at %d; marks: %+v", c.node, c.class, c.at, lane(t, tl, c.node).Marks)
		}
		for _, b := range lane(t, tl, c.node).Bars {
			if b.Fault == c.fault {
				t.Errorf("fault %d is also a bar: %+v", c.fault, b)
			}
		}
	}
	labels := map[string]string{}
	for _, k := range tl.Keys {
		labels[k.Class] = k.Label
	}
	if labels["crash-zero"] != "crash, no downtime" || labels["pause-zero"] != "pause, zero length" {
		t.Errorf("legend %+v lacks the zero-length faults", tl.Keys)
	}
	var b bytes.Buffer
	if err := Write(&b, Report{Runs: []Run{r}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<span class="key" data-cat="crash-zero"><svg width="18" height="12"><line class="mark m-crash-zero"`,
		`<line class="mark m-crash-zero" data-fault="7"`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if css := css; !strings.Contains(css, ".m-crash-zero {") || !strings.Contains(css, ".hide-crash-zero .lane .m-crash-zero") {
		t.Error("the stylesheet does not draw or hide crash-zero marks")
	}
}

// The page lists the sweep's sim properties with their coverage, and says
// so when there are none.
func TestWriteProperties(t *testing.T) {
	rep := Report{Runs: []Run{{Seed: 1, Passed: true}, failing()}, Properties: []Property{
		{Kind: "always", Message: "acked writes survive", Site: "client/main.go:40", Status: "failed", Why: "false in 1 of 2 seeds", Hits: 120},
		{Kind: "sometimes", Message: "a retry succeeds", Site: "client/main.go:52", Status: "ok", Why: "true in 2 of 2 seeds", Hits: 9},
		{Kind: "reachable", Message: "compaction ran", Site: "server/store.go:88", Status: "unmet", Why: "never reached"},
	}}
	var b bytes.Buffer
	if err := Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<section class="props" id="properties">`,
		`<tr class="p-failed"><td class="st">failed</td><td>always</td><td>acked writes survive</td><td>false in 1 of 2 seeds</td><td>120</td><td><code>client/main.go:40</code></td></tr>`,
		`<tr class="p-ok"><td class="st">ok</td><td>sometimes</td><td>a retry succeeds</td><td>true in 2 of 2 seeds</td><td>9</td>`,
		`<tr class="p-unmet"><td class="st">unmet</td><td>reachable</td><td>compaction ran</td><td>never reached</td><td>0</td>`,
		`<p class="unmet">1 property never held across the sweep`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	b.Reset()
	if err := Write(&b, Report{Runs: []Run{{Seed: 1, Passed: true}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "No sim properties") {
		t.Error("a sweep without properties does not say so")
	}
}

// A long sweep's page counts what passed and lists the failures it kept,
// with a note such as that it was interrupted.
func TestWriteSummary(t *testing.T) {
	f := failing()
	rep := Report{Title: "t", Runs: []Run{f}, Note: "interrupted: 3000000 of 100000000 seeds ran",
		Summary: &Summary{Seeds: "1-3000000", Total: 3_000_000, Passed: 2_999_990, Classes: map[string]int{"workload": 10}}}
	var b bytes.Buffer
	if err := Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<td>3000000 (1-3000000)</td>",
		`<td class="pass">2999990</td>`,
		`<td class="fail">10</td>`,
		`<tr class="cls"><th>workload</th><td>10: <a href="#seed-7">7</a></td></tr>`,
		`<p class="note">interrupted: 3000000 of 100000000 seeds ran</p>`,
		`<section class="run" id="seed-7">`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	rep = Report{Summary: &Summary{Seeds: "1-5", Total: 5, Passed: 5}, Note: "interrupted: 5 of 9 seeds ran"}
	b.Reset()
	if err := Write(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Every seed that ran passed.") {
		t.Error("an interrupted sweep that passed says so")
	}
}
