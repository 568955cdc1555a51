package results

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
// about, and the shape of its reason (ReasonShape: the reason with its
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
	StateNew       = "new"
	StateOngoing   = "ongoing"
	StateResolved  = "resolved"
	StateRegressed = "regressed"
)

// Finding is one failure signature and the seeds that show it.
type Finding struct {
	State   string `json:"state,omitempty"`
	Class   string `json:"class"`
	Program string `json:"program"` // the program the failures are about; "" when none
	Shape   string `json:"shape"`   // the reason's shape (ReasonShape)
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
func (f *Finding) inBaseline() string {
	switch {
	case f.BaselineSeeds > 0:
		return fmt.Sprintf("%d in the baseline", f.BaselineSeeds)
	case f.BaselinePinned > 0:
		return "a pinned regression in the baseline"
	}
	return ""
}

func (f *Finding) key() string { return f.Class + "\x00" + f.Program + "\x00" + f.Shape }

// Findings is the findings of a sweep, in the order the sweep met them.
// A nil *Findings ignores everything.
type Findings struct {
	list  []*Finding
	index map[string]*Finding
}

// Add counts one failing seed, or pinned regression.
func (fs *Findings) Add(class, program, reason string, seed uint64, pinned bool) {
	if fs == nil {
		return
	}
	f := &Finding{Class: class, Program: program, Shape: ReasonShape(reason)}
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

func NewFindings() *Findings { return &Findings{index: map[string]*Finding{}} }

// Patterns of ReasonShape, applied in this order.
var (
	shapeAddr = regexp.MustCompile(`0[xX][0-9a-fA-F]+|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b`)
	shapeHex  = regexp.MustCompile(`\b[0-9a-fA-F]{8,}\b`)
	shapeDur  = regexp.MustCompile(`\b(?:\d+(?:\.\d+)?h)?(?:\d+(?:\.\d+)?m)?\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	shapeNum  = regexp.MustCompile(`\d+(?:\.\d+)?(?:[eE][-+]?\d+)?`)
)

// ReasonShape is a failure's reason with what varies from seed to seed
// replaced: addresses (0x..., IPs) by <addr>, hex of 8 digits or more by
// <hex>, durations by <dur>, other numbers by <n> (with a minus sign
// that is not part of a word). "client#2 lost k17 after 1.5s at 0xc00012"
// is "client#<n> lost k<n> after <dur> at <addr>".
func ReasonShape(reason string) string {
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

// Baseline is the findings of earlier results.
type Baseline struct {
	path     string
	failing  map[string]*Finding // failing in the baseline's seeds
	resolved []*Finding          // recorded resolved in its triage.json, in its order
	order    []*Finding          // failing ones, in the baseline's order
}

// Findings is the set a sweep fills for this baseline: nil without one.
func (b *Baseline) Findings() *Findings {
	if b == nil {
		return nil
	}
	return NewFindings()
}

// LoadBaseline reads -baseline: a results directory or a parent of shard
// directories, and the triage.json of the directory given, if it has one.
// "" is no baseline. A baseline that is not complete is used as it is,
// with a note.
func LoadBaseline(path string, stderr io.Writer) (*Baseline, error) {
	if path == "" {
		return nil, nil
	}
	set, err := LoadSet([]string{path})
	if err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	b := &Baseline{path: path, failing: map[string]*Finding{}}
	fs := NewFindings()
	if err := set.Each(func(rec *Record) {
		if l := rec.Line; !l.Passed {
			fs.Add(l.Class, l.Node, l.Reason, l.Seed, false)
		}
	}); err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	for _, d := range set.Dirs {
		for _, p := range d.Pinned {
			var jr Line
			if json.Unmarshal(p.Result, &jr) == nil && !jr.Passed {
				fs.Add(jr.Class, jr.Node, jr.Reason, jr.Seed, true)
			}
		}
	}
	for _, msg := range set.Incomplete() {
		fmt.Fprintf(stderr, "note: the baseline is not whole: %s\n", msg)
	}
	for _, f := range fs.list {
		b.failing[f.key()] = f
		b.order = append(b.order, f)
	}
	data, err := os.ReadFile(filepath.Join(path, TriageFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	if err == nil {
		var t Triage
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, fmt.Errorf("-baseline: %s: %v", filepath.Join(path, TriageFile), err)
		}
		for _, f := range t.Findings {
			if f.State == StateResolved && b.failing[f.key()] == nil {
				b.resolved = append(b.resolved, f)
			}
		}
	}
	return b, nil
}

// Triage is the findings of a sweep against a baseline: triage.json, and
// the table run and merge print.
type Triage struct {
	Baseline  string     `json:"baseline"`
	New       int        `json:"new"`
	Ongoing   int        `json:"ongoing"`
	Resolved  int        `json:"resolved"`
	Regressed int        `json:"regressed"`
	Findings  []*Finding `json:"findings"`
}

// Failing reports whether the triage fails the sweep: a new or regressed
// finding.
func (t *Triage) Failing() bool { return t.New > 0 || t.Regressed > 0 }

// Triage marks each finding of now against the baseline: the sweep's in
// the order it met them, then the resolved ones in the baseline's order.
func (b *Baseline) Triage(now *Findings) *Triage {
	t := &Triage{Baseline: b.path, Findings: []*Finding{}}
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
			g.State, g.BaselineSeeds, g.BaselinePinned = StateOngoing, b.failing[f.key()].Seeds, b.failing[f.key()].Pinned
			t.Ongoing++
		case wasResolved[f.key()]:
			g.State = StateRegressed
			t.Regressed++
		default:
			g.State = StateNew
			t.New++
		}
		t.Findings = append(t.Findings, &g)
	}
	for _, f := range b.order {
		if !seen[f.key()] {
			t.Findings = append(t.Findings, &Finding{State: StateResolved, Class: f.Class, Program: f.Program, Shape: f.Shape,
				BaselineSeeds: f.Seeds, BaselinePinned: f.Pinned})
			t.Resolved++
		}
	}
	for _, f := range b.resolved {
		if !seen[f.key()] {
			t.Findings = append(t.Findings, &Finding{State: StateResolved, Class: f.Class, Program: f.Program, Shape: f.Shape})
			t.Resolved++
		}
	}
	// New and regressed first: they are what a reader is looking for.
	rank := map[string]int{StateNew: 0, StateRegressed: 1, StateOngoing: 2, StateResolved: 3}
	slices.SortStableFunc(t.Findings, func(a, b *Finding) int { return cmp.Compare(rank[a.State], rank[b.State]) })
	return t
}

// Write prints the triage: a table, or with asJSON one {"triage": ...}
// object.
func (t *Triage) Write(w io.Writer, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(struct {
			Triage *Triage `json:"triage"`
		}{t})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "triage against %s: %d new, %d ongoing, %d resolved, %d regressed\n", DisplayPath(t.Baseline), t.New, t.Ongoing, t.Resolved, t.Regressed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range t.Findings {
		program := f.Program
		if program == "" {
			program = "-"
		}
		var seeds string
		switch {
		case f.Seeds > 0 || f.Pinned > 0:
			seeds = fmt.Sprintf("%s, first seed %d", Plural(f.Seeds, "seed"), f.First)
			if f.Pinned > 0 {
				seeds = fmt.Sprintf("%s and %s, first seed %d", Plural(f.Seeds, "seed"), Plural(f.Pinned, "pinned regression"), f.First)
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
	if t.Failing() {
		fmt.Fprintln(w, "a new or regressed finding fails the sweep (exit status 1); ongoing ones do not")
	}
}
