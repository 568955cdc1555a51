// Package report writes a sweep's results as one self-contained HTML page:
// a summary, and per failing seed a timeline with a lane per program, the
// schedule, the last output lines and the replay command. The page is
// derived from the runs alone, so the same runs give the same bytes.
package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
)

// Report is one sweep.
type Report struct {
	Title  string // the page's heading
	Config string // the world, as flags: -c seedfall.json -profile ci
	// Version is the seedfall that ran the sweep (seedfall version), as
	// the page's footnote; "" leaves it out.
	Version string
	Runs    []Run // every seed, in the order they were asked for; with a Summary, the failures listed
	// Summary, when not nil, counts the sweep: a long sweep keeps its
	// failures in Runs (the first MaxListed) and only counts the seeds
	// that passed, so that the page costs memory per failure, not per
	// seed.
	Summary *Summary
	// Note, when not "", is shown under the summary: that the sweep was
	// interrupted, say.
	Note string
	// Properties are the sim properties (sim.Always, sim.Sometimes, ...)
	// over every seed: seedfall run's coverage table.
	Properties []Property
}

// Property is one sim property over the sweep.
type Property struct {
	Kind    string // always, sometimes, reachable, ...
	Message string
	Site    string // file:line
	Status  string // ok, unmet or failed
	Why     string // the status in words: "true in 3 of 20 seeds"
	Hits    uint64 // evaluations over the sweep
}

// Summary is a sweep's counts, for a Report that does not list every seed.
type Summary struct {
	Seeds   string         // the seeds that ran, as ranges: "1-20, 31"
	Total   int            // seeds that ran
	Passed  int            // of them, those that passed
	Classes map[string]int // failing seeds by class
}

// MaxListed is how many failing seeds a page lists, one a line, after the
// detailed ones; the rest are counted.
const MaxListed = 10_000

// Run is one seed's outcome. A passing run needs only Seed and Passed.
type Run struct {
	Seed   uint64
	Passed bool
	Class  string // the failure's class: workload, liveness, ...
	Reason string
	Node   string // the program the verdict is about, if any
	SimNs  int64  // virtual time at the end of the run
	Lines  []trace.Line
	// Heals are the moments every fault in force ended at once
	// (engine.Result.Heals): a lasting fault is drawn up to the first
	// after it began.
	Heals    []int64
	Schedule *faults.Schedule // the faults that happened
	Replay   string           // the command that replays this run
	Nodes    []string         // the world's programs, in world order
	// Excerpt, if set, is the output to show instead of the last lines of
	// Lines: for a program that ran out of memory, its lines from the grow
	// refused on (engine.Result.CauseLine).
	Excerpt []trace.Line
}

// MaxDetailed is how many failing seeds get a timeline; the rest are listed
// one a line, so a sweep where every seed fails still makes a page a browser
// opens. Callers may drop Lines and Schedule of later failures.
const MaxDetailed = 50

// tailCount is how many of the last output lines a failing seed shows.
const tailCount = 40

// scheduleCount is how many faults a failing seed lists at most.
const scheduleCount = 1000

//go:embed report.css
var css string

//go:embed report.js
var js string

//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"dur": func(ns int64) string { return time.Duration(ns).String() },
}).Parse(pageText))

// view is what the template draws.
type view struct {
	Report
	CSS      template.CSS
	JS       template.JS
	Seeds    string // "1-20" or "2-3, 9"
	Total    int    // seeds
	Passed   int
	Failed   int
	Classes  []classCount
	Detailed []detail
	Rest     []Run // failures past MaxDetailed
	Unlisted int   // failures past MaxListed: counted, not listed
	Unmet    int   // properties that never held
}

type classCount struct {
	Class string
	Count int
	Seeds []uint64 // the first listed
}

type detail struct {
	Run
	Timeline Timeline
	Faults   []listedFault
	More     int // faults not listed
	Tail     []tailLine
	// OutputTitle heads Tail: "Last output", or for an Excerpt "Output
	// from the cause".
	OutputTitle string
	Shrunk      string
}

type listedFault struct {
	N    int
	Text string
}

type tailLine struct {
	Class, Text string
}

// Write renders the page.
func Write(w io.Writer, r Report) error {
	v := view{Report: r, CSS: template.CSS(css), JS: template.JS(js)}
	byClass := map[string][]uint64{}
	var failed []Run
	for _, run := range r.Runs {
		if run.Passed {
			v.Passed++
			continue
		}
		failed = append(failed, run)
		c := cmp.Or(run.Class, "unknown")
		byClass[c] = append(byClass[c], run.Seed)
	}
	counts := map[string]int{}
	if sum := r.Summary; sum != nil {
		v.Seeds, v.Total, v.Passed = sum.Seeds, sum.Total, sum.Passed
		v.Failed = sum.Total - sum.Passed
		v.Unlisted = v.Failed - len(failed)
		for c, n := range sum.Classes {
			counts[cmp.Or(c, "unknown")] += n
		}
	} else {
		v.Seeds, v.Total, v.Failed = seedRanges(r.Runs), len(r.Runs), len(failed)
		for c, seeds := range byClass {
			counts[c] = len(seeds)
		}
	}
	for c, n := range counts {
		v.Classes = append(v.Classes, classCount{c, n, byClass[c]})
	}
	slices.SortFunc(v.Classes, func(a, b classCount) int { return strings.Compare(a.Class, b.Class) })
	for _, p := range r.Properties {
		if p.Status == "unmet" {
			v.Unmet++
		}
	}
	for i, run := range failed {
		if i >= MaxDetailed {
			v.Rest = failed[i:]
			break
		}
		v.Detailed = append(v.Detailed, detailOf(run))
	}
	return page.Execute(w, v)
}

func detailOf(r Run) detail {
	d := detail{Run: r, Timeline: BuildTimeline(r)}
	if s := r.Schedule; s != nil {
		for i, f := range s.Faults {
			if i == scheduleCount {
				d.More = len(s.Faults) - i
				break
			}
			d.Faults = append(d.Faults, listedFault{i + 1, f.String()})
		}
		if s.ShrunkFrom > 0 {
			d.Shrunk = fmt.Sprintf("shrunk from %d faults in %d runs", s.ShrunkFrom, s.ShrinkRuns)
		}
	}
	shown := r.Lines[max(len(r.Lines)-tailCount, 0):]
	d.OutputTitle = "Last output"
	if r.Excerpt != nil {
		shown, d.OutputTitle = r.Excerpt, "Output from the cause"
	}
	for _, l := range shown {
		class := map[trace.Kind]string{trace.Stdout: "out", trace.Stderr: "err"}[l.Kind]
		d.Tail = append(d.Tail, tailLine{cmp.Or(class, "event"), l.String()})
	}
	return d
}

// seedRanges writes the seeds as ranges: "1-20", "2-3, 9".
func seedRanges(runs []Run) string {
	var parts []string
	for i := 0; i < len(runs); {
		j := i
		for j+1 < len(runs) && runs[j+1].Seed == runs[j].Seed+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", runs[i].Seed, runs[j].Seed))
		} else {
			parts = append(parts, fmt.Sprint(runs[i].Seed))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
