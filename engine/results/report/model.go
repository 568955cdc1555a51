package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// worldLane gathers the trace lines that belong to no program: the world's
// and the network's own events.
const worldLane = "world"

// bins is how many marks of one kind a lane holds at most: output lines
// closer together than 1/bins of the run share one mark, so a chatty run
// stays a page a browser can draw.
const bins = 1000

// titleLines is how many lines a shared mark quotes in its hover text.
const titleLines = 4

// Timeline is one run drawn as lanes over virtual time.
type Timeline struct {
	Span  int64 // virtual ns the axis covers: the run and a little air after it
	Lanes []Lane
	Ticks []Tick
	Keys  []Key // the legend: the classes this timeline uses, in a fixed order
}

// Key is one entry of the legend.
type Key struct {
	Class, Label string
	Bar          bool // drawn as a bar (b-Class), else as a mark (m-Class)
}

// keys are every legend entry, in the order the legend lists them.
var keys = []Key{
	{"crash", "crash", true}, {"pause", "pause", true}, {"slow", "slowdown", true},
	{"partition", "partition", true}, {"clog", "clog", true}, {"other", "other fault", true},
	{"crash-zero", "crash, no downtime", false}, {"pause-zero", "pause, zero length", false},
	{"slow-zero", "slowdown, zero length", false}, {"partition-zero", "partition, zero length", false},
	{"clog-zero", "clog, zero length", false}, {"other-zero", "other fault, zero length", false},
	{"fail", "failure", false}, {"disk", "disk fault", false}, {"buggify", "buggify", false},
	{"clock", "clock", false}, {"net", "network fault", false}, {"fault", "other fault", false},
	{"err", "stderr", false}, {"out", "stdout", false}, {"event", "event", false},
}

// Lane is one program's row.
type Lane struct {
	Node  string
	Bars  []Bar
	Marks []Mark
}

// Bar is a fault that lasts: a crash, pause, slowdown, partition or clog.
type Bar struct {
	Class     string // crash, pause, slow, partition, clog, other
	At, Until int64  // virtual ns, Until clipped to the end of the run
	Open      bool   // the run ended before the fault did
	Fault     int    // position in the schedule, from 1
	Title     string
	X, W      string // left edge and width, as SVG percentages
}

// Mark is a moment: output lines, a disk fault, a buggify firing, a clock
// jump, a fault that lasts no time, the failure.
type Mark struct {
	Class string // out, err, event, disk, buggify, clock, net, fault, fail, or a bar's class with -zero
	At    int64
	Fault int // position in the schedule of its (first) fault, from 1; 0 for lines
	Count int // lines or faults that share the mark
	Title string
	X     string
}

// Tick is a labelled moment on the time axis.
type Tick struct {
	X, Label string
	Anchor   string // text-anchor, so the first and last labels stay inside
}

// barClass and markClass say how each fault kind is drawn. Kinds not listed
// are drawn as a bar when they last and a mark otherwise.
var barClass = map[string]string{
	"crash": "crash", "crash_io": "crash", "pause": "pause", "slow": "slow",
	"partition": "partition", "clog": "clog",
}

var markClass = map[string]string{
	"fsync_eio": "disk", "write_eio": "disk", "write_enospc": "disk", "read_eio": "disk", "read_corrupt": "disk",
	"lost_write": "disk", "misdirected_write": "disk", "bitrot": "disk", "mmap_early_writeback": "disk",
	"buggify": "buggify", "clock_jump": "clock", "clock_skew": "clock",
	"net_reset": "net", "udp_drop": "net", "udp_dup": "net",
}

// BuildTimeline lays out one run: a lane per program in r.Nodes (then any
// other program the trace or schedule names, then the world's own events),
// faults as bars or marks on the lanes they touch, output lines as marks,
// and the failure as a mark on the failing program's lane (every lane when
// the verdict names none).
func BuildTimeline(r Run) Timeline {
	end := max(r.SimNs, 1)
	t := Timeline{Span: end + end/40}
	index := map[string]int{}
	lane := func(name string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(t.Lanes)
		t.Lanes = append(t.Lanes, Lane{Node: name})
		return len(t.Lanes) - 1
	}
	for _, n := range r.Nodes {
		lane(n)
	}
	var fs []faults.Fault
	if r.Schedule != nil {
		fs = r.Schedule.Faults
	}
	for _, f := range fs {
		for _, n := range faultNodes(f, nil) {
			lane(n)
		}
	}
	for _, l := range r.Lines {
		if l.Node != "world" && l.Node != "net" {
			lane(l.Node)
		}
	}
	programs := make([]string, len(t.Lanes))
	for i, l := range t.Lanes {
		programs[i] = l.Node
	}
	for _, l := range r.Lines {
		if l.Node == "world" || l.Node == "net" {
			lane(worldLane)
			break
		}
	}

	// Marks of one class in one bin of one lane share a mark; mi finds it.
	type binKey struct {
		lane  int
		class string
		bin   int64
	}
	mi := map[binKey]int{}
	quoted := map[binKey][]string{}
	addMark := func(li int, class string, at int64, fault int, text string) {
		k := binKey{li, class, at * bins / t.Span}
		if i, ok := mi[k]; ok {
			m := &t.Lanes[li].Marks[i]
			m.Count++
			if len(quoted[k]) < titleLines {
				quoted[k] = append(quoted[k], text)
			}
			m.Title = strings.Join(quoted[k], "\n")
			if m.Count > len(quoted[k]) {
				m.Title += fmt.Sprintf("\n… and %d more", m.Count-len(quoted[k]))
			}
			return
		}
		mi[k] = len(t.Lanes[li].Marks)
		quoted[k] = []string{text}
		t.Lanes[li].Marks = append(t.Lanes[li].Marks, Mark{Class: class, At: at, Fault: fault, Count: 1, Title: text, X: t.pct(at)})
	}

	heals := r.Heals
	for i, f := range fs {
		at, until := int64(f.At), int64(f.Until)
		if at > end {
			continue // listed in the schedule, but it never came
		}
		healed := false
		for _, h := range heals {
			if h > at && h < until {
				until, healed = h, true // the recovery phase or a quiet period ended it early
				break
			}
		}
		title := fmt.Sprintf("fault %d: %s", i+1, f)
		class, isBar := barClass[f.Kind]
		if !isBar {
			if k, ok := faults.Lookup(f.Kind); ok && k.Lasts {
				class, isBar = "other", true
			}
		}
		if isBar && until > at {
			b := Bar{Class: class, At: at, Until: min(until, end), Open: until > end, Fault: i + 1, Title: title}
			if b.Open {
				b.Title += " (the run ended first)"
			}
			if healed {
				b.Title += fmt.Sprintf(" (healed at %v)", time.Duration(until))
			}
			b.X = t.pct(b.At)
			b.W = pctOf(max(b.Until-b.At, t.Span/500), t.Span)
			for _, n := range faultNodes(f, programs) {
				li := lane(n)
				t.Lanes[li].Bars = append(t.Lanes[li].Bars, b)
			}
			continue
		}
		mc := cmp.Or(markClass[f.Kind], "fault")
		if isBar {
			// A fault that lasts no time (a crash with no downtime, as
			// shrink leaves them) is a mark of its own class: a bar of zero
			// width would not show.
			mc = class + "-zero"
			title += map[bool]string{true: " (no downtime)", false: " (zero length)"}[class == "crash"]
		}
		for _, n := range faultNodes(f, programs) {
			addMark(lane(n), mc, at, i+1, title)
		}
	}
	for _, l := range r.Lines {
		class := map[trace.Kind]string{trace.Stdout: "out", trace.Stderr: "err"}[l.Kind]
		if class == "" {
			class = "event"
		}
		name := l.Node
		if name == "world" || name == "net" {
			name = worldLane
		}
		addMark(lane(name), class, l.At, 0, strings.TrimSpace(l.String()))
	}
	if !r.Passed {
		title := fmt.Sprintf("failure at %v: %s: %s", time.Duration(r.SimNs), r.Class, r.Reason)
		if i, ok := index[r.Node]; ok && r.Node != "" {
			t.Lanes[i].Marks = append(t.Lanes[i].Marks, Mark{Class: "fail", At: r.SimNs, Count: 1, Title: title, X: t.pct(r.SimNs)})
		} else {
			for i := range t.Lanes {
				t.Lanes[i].Marks = append(t.Lanes[i].Marks, Mark{Class: "fail", At: r.SimNs, Count: 1, Title: title, X: t.pct(r.SimNs)})
			}
		}
	}
	t.Ticks = ticks(t.Span, end)
	used := map[string]bool{}
	for _, l := range t.Lanes {
		for _, b := range l.Bars {
			used["b-"+b.Class] = true
		}
		for _, m := range l.Marks {
			used["m-"+m.Class] = true
		}
	}
	for _, k := range keys {
		if (k.Bar && used["b-"+k.Class]) || (!k.Bar && used["m-"+k.Class]) {
			t.Keys = append(t.Keys, k)
		}
	}
	return t
}

// faultNodes names the lanes a fault is drawn on. A partition is drawn on
// every program it cuts off from some other program (programs is the list
// of lanes a side's complement is taken from); a link clog on both ends.
func faultNodes(f faults.Fault, programs []string) []string {
	switch {
	case f.Kind == "partition":
		groups := f.Groups
		if len(f.Side) > 0 {
			var rest []string
			for _, p := range programs {
				if !slices.Contains(f.Side, p) {
					rest = append(rest, p)
				}
			}
			groups = [][]string{f.Side, rest}
		}
		var members []string
		for _, g := range groups {
			for _, n := range g {
				if !slices.Contains(members, n) {
					members = append(members, n)
				}
			}
		}
		for _, p := range programs {
			if !slices.Contains(members, p) {
				members = append(members, p) // in no group: cut off from everyone
			}
		}
		var cut []string
		for _, a := range members {
			for _, b := range members {
				if a != b && !together(groups, a, b) {
					cut = append(cut, a)
					break
				}
			}
		}
		return cut
	case f.Node != "":
		return []string{f.Node}
	}
	var out []string
	for _, n := range []string{f.From, f.To} {
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func together(groups [][]string, a, b string) bool {
	for _, g := range groups {
		if slices.Contains(g, a) && slices.Contains(g, b) {
			return true
		}
	}
	return false
}

func (t Timeline) pct(ns int64) string { return pctOf(ns, t.Span) }

// pctOf formats ns as a percentage of span with three decimals: enough for
// a 4k screen zoomed eight times, and the same bytes on every machine.
func pctOf(ns, span int64) string {
	return strconv.FormatFloat(float64(ns)*100/float64(span), 'f', 3, 64) + "%"
}

// ticks labels the axis every 1, 2 or 5 times a power of ten, five to ten
// times across the run.
func ticks(span, end int64) []Tick {
	step := int64(1)
next:
	for p := int64(1); p <= end; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if step = m * p; end/step <= 10 {
				break next
			}
		}
	}
	var out []Tick
	for at := int64(0); at <= end; at += step {
		anchor := "middle"
		switch {
		case at == 0:
			anchor = "start"
		case at*100 > span*92:
			anchor = "end"
		}
		out = append(out, Tick{X: pctOf(at, span), Label: time.Duration(at).String(), Anchor: anchor})
	}
	return out
}
