package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
)

// Triage compares a sweep's failures with earlier results (-baseline). A
// finding is a failure signature: the failure's class, the program it is
// about, and the shape of its reason (reasonShape: the reason with its
// numbers, hex, addresses and durations replaced), so that seeds that fail
// the same way are one finding. Against the baseline each finding is
//
//	new        failing now, not in the baseline
//	ongoing    failing in both
//	resolved   in the baseline (failing, or recorded there as resolved), not failing now
//	regressed  recorded as resolved in the baseline's triage, and failing again
//
// A results directory written with -baseline keeps its triage
// (triage.json), resolved findings included, so the next sweep that takes
// it as its baseline can tell a regression from a new finding.

// Triage states.
const (
	stateNew       = "new"
	stateOngoing   = "ongoing"
	stateResolved  = "resolved"
	stateRegressed = "regressed"
)

// finding is one failure signature and the seeds that show it.
type finding struct {
	State   string `json:"state,omitempty"`
	Class   string `json:"class"`
	Program string `json:"program"` // the program the failures are about; "" when none
	Shape   string `json:"shape"`   // the reason's shape (reasonShape)
	// Seeds is how many seeds of the sweep fail with it now, and Pinned
	// how many pinned regressions; First is the first seed of either, in
	// the order they ran, and Reason its reason as it was.
	Seeds  int    `json:"seeds"`
	Pinned int    `json:"pinned,omitempty"`
	First  uint64 `json:"first_seed,omitempty"`
	Reason string `json:"reason,omitempty"`
	// BaselineSeeds and BaselinePinned are how many seeds and pinned
	// regressions of the baseline failed with it.
	BaselineSeeds  int `json:"baseline_seeds"`
	BaselinePinned int `json:"baseline_pinned,omitempty"`
}

// inBaseline says how the baseline failed with the finding: "3 in the
// baseline", or "" when it did not.
func (f *finding) inBaseline() string {
	switch {
	case f.BaselineSeeds > 0:
		return fmt.Sprintf("%d in the baseline", f.BaselineSeeds)
	case f.BaselinePinned > 0:
		return "a pinned regression in the baseline"
	}
	return ""
}

func (f *finding) key() string { return f.Class + "\x00" + f.Program + "\x00" + f.Shape }

// findingSet is the findings of a sweep, in the order the sweep met them.
// A nil *findingSet ignores everything.
type findingSet struct {
	list  []*finding
	index map[string]*finding
}

// add counts one failing seed, or pinned regression.
func (fs *findingSet) add(class, program, reason string, seed uint64, pinned bool) {
	if fs == nil {
		return
	}
	f := &finding{Class: class, Program: program, Shape: reasonShape(reason)}
	if old := fs.index[f.key()]; old != nil {
		f = old
	} else {
		f.First, f.Reason = seed, reason
		fs.index[f.key()] = f
		fs.list = append(fs.list, f)
	}
	if pinned {
		f.Pinned++
	} else {
		f.Seeds++
	}
}

func newFindingSet() *findingSet { return &findingSet{index: map[string]*finding{}} }

// Patterns of reasonShape, applied in this order.
var (
	shapeAddr = regexp.MustCompile(`0[xX][0-9a-fA-F]+|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b`)
	shapeHex  = regexp.MustCompile(`\b[0-9a-fA-F]{8,}\b`)
	shapeDur  = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m)?\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	shapeNum  = regexp.MustCompile(`\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)
)

// reasonShape is a failure's reason with what varies from seed to seed
// replaced: addresses (0x..., IPs) by <addr>, hex of 8 digits or more by
// <hex>, durations by <dur>, other numbers by <n> (with a minus sign
// that is not part of a word). "client#2 lost k17 after 1.5s at 0xc00012"
// is "client#<n> lost k<n> after <dur> at <addr>".
func reasonShape(reason string) string {
	s := shapeAddr.ReplaceAllString(reason, "<addr>")
	s = shapeHex.ReplaceAllStringFunc(s, func(h string) string {
		if strings.ContainsAny(h, "0123456789") && strings.ContainsAny(h, "abcdefABCDEF") {
			return "<hex>"
		}
		return h
	})
	s = shapeDur.ReplaceAllString(s, "<dur>")
	var b strings.Builder
	last := 0
	for _, m := range shapeNum.FindAllStringIndex(s, -1) {
		a := m[0]
		// A minus sign belongs to the number unless it joins two words
		// (seed-17).
		if a > 0 && s[a-1] == '-' && (a < 2 || !isWordByte(s[a-2])) {
			a--
		}
		b.WriteString(s[last:a])
		b.WriteString("<n>")
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// baseline is the findings of earlier results.
type baseline struct {
	path     string
	failing  map[string]*finding // failing in the baseline's seeds
	resolved []*finding          // recorded resolved in its triage.json, in its order
	order    []*finding          // failing ones, in the baseline's order
}

// findingSet is the set a sweep fills for this baseline: nil without one.
func (b *baseline) findingSet() *findingSet {
	if b == nil {
		return nil
	}
	return newFindingSet()
}

// loadBaseline reads -baseline: a results directory or a parent of shard
// directories, and the triage.json of the directory given, if it has one.
// "" is no baseline. A baseline that is not complete is used as it is,
// with a note.
func loadBaseline(path string, stderr io.Writer) (*baseline, error) {
	if path == "" {
		return nil, nil
	}
	set, err := loadResultSet([]string{path})
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	b := &baseline{path: path, failing: map[string]*finding{}}
	fs := newFindingSet()
	if err := set.each(func(oc *seedOutcome) {
		if !oc.res.Passed {
			fs.add(oc.res.Class, oc.res.Node, oc.res.Reason, oc.res.Seed, false)
		}
	}); err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	for _, d := range set.dirs {
		for _, p := range d.pinned {
			var jr jsonResult
			if json.Unmarshal(p.Result, &jr) == nil && !jr.Passed {
				fs.add(jr.Class, jr.Node, jr.Reason, jr.Seed, true)
			}
		}
	}
	for _, msg := range set.incomplete() {
		fmt.Fprintf(stderr, "note: the baseline is not whole: %s\n", msg)
	}
	for _, f := range fs.list {
		b.failing[f.key()] = f
		b.order = append(b.order, f)
	}
	data, err := os.ReadFile(filepath.Join(path, resultsTriageFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	if err == nil {
		var t triage
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, fmt.Errorf("-baseline: %s: %v", filepath.Join(path, resultsTriageFile), err)
		}
		for _, f := range t.Findings {
			if f.State == stateResolved && b.failing[f.key()] == nil {
				b.resolved = append(b.resolved, f)
			}
		}
	}
	return b, nil
}

// triage is the findings of a sweep against a baseline: triage.json, and
// the table run and merge print.
type triage struct {
	Baseline  string     `json:"baseline"`
	New       int        `json:"new"`
	Ongoing   int        `json:"ongoing"`
	Resolved  int        `json:"resolved"`
	Regressed int        `json:"regressed"`
	Findings  []*finding `json:"findings"`
}

// failing reports whether the triage fails the sweep: a new or regressed
// finding.
func (t *triage) failing() bool { return t.New > 0 || t.Regressed > 0 }

// triage marks each finding of now against the baseline: the sweep's in
// the order it met them, then the resolved ones in the baseline's order.
func (b *baseline) triage(now *findingSet) *triage {
	t := &triage{Baseline: b.path, Findings: []*finding{}}
	wasResolved := map[string]bool{}
	for _, f := range b.resolved {
		wasResolved[f.key()] = true
	}
	seen := map[string]bool{}
	for _, f := range now.list {
		seen[f.key()] = true
		g := *f
		switch {
		case b.failing[f.key()] != nil:
			g.State, g.BaselineSeeds, g.BaselinePinned = stateOngoing, b.failing[f.key()].Seeds, b.failing[f.key()].Pinned
			t.Ongoing++
		case wasResolved[f.key()]:
			g.State = stateRegressed
			t.Regressed++
		default:
			g.State = stateNew
			t.New++
		}
		t.Findings = append(t.Findings, &g)
	}
	for _, f := range b.order {
		if !seen[f.key()] {
			t.Findings = append(t.Findings, &finding{State: stateResolved, Class: f.Class, Program: f.Program, Shape: f.Shape,
				BaselineSeeds: f.Seeds, BaselinePinned: f.Pinned})
			t.Resolved++
		}
	}
	for _, f := range b.resolved {
		if !seen[f.key()] {
			t.Findings = append(t.Findings, &finding{State: stateResolved, Class: f.Class, Program: f.Program, Shape: f.Shape})
			t.Resolved++
		}
	}
	// New and regressed first: they are what a reader is looking for.
	rank := map[string]int{stateNew: 0, stateRegressed: 1, stateOngoing: 2, stateResolved: 3}
	slices.SortStableFunc(t.Findings, func(a, b *finding) int { return cmp.Compare(rank[a.State], rank[b.State]) })
	return t
}

// write prints the triage: a table, or with asJSON one {"triage": ...}
// object.
func (t *triage) write(w io.Writer, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(struct {
			Triage *triage `json:"triage"`
		}{t})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "triage against %s: %d new, %d ongoing, %d resolved, %d regressed\n", displayPath(t.Baseline), t.New, t.Ongoing, t.Resolved, t.Regressed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range t.Findings {
		program := f.Program
		if program == "" {
			program = "-"
		}
		var seeds string
		switch {
		case f.Seeds > 0 || f.Pinned > 0:
			seeds = fmt.Sprintf("%s, first seed %d", plural(f.Seeds, "seed"), f.First)
			if f.Pinned > 0 {
				seeds = fmt.Sprintf("%s and %s, first seed %d", plural(f.Seeds, "seed"), plural(f.Pinned, "pinned regression"), f.First)
			}
			if b := f.inBaseline(); b != "" {
				seeds += ", " + b
			}
		case f.inBaseline() != "":
			seeds = "none now, " + f.inBaseline()
		default:
			seeds = "none now, resolved before"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", strings.ToUpper(f.State), f.Class, program, f.Shape, seeds)
	}
	tw.Flush()
	if t.failing() {
		fmt.Fprintln(w, "a new or regressed finding fails the sweep (exit status 1); ongoing ones do not")
	}
}
