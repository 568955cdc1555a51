// Package guide is what a guided search is made of (issue 28): the new
// things a run reached (Features), the set of everything reached so far
// (Seen), and the mutations of a run's schedule near the moment it reached
// something new (Mutate). The search itself is a strategy written in
// Starlark (stdlib/strategies.star: guided) over these, so an author can
// write another.
package guide

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/trace"
)

// The kinds of feature.
const (
	Block    = "block"    // a block of the user's code ran (coverage)
	Count    = "count"    // a block ran at least 2, 3, 4, 8, 16, 32 or 128 times in the run
	Property = "property" // a sim or Antithesis property was reached or held, or its operands came closer
	Log      = "log"      // a program printed a line of a new shape (numbers masked)
	Faults   = "faults"   // a fault followed another of a kind it had not followed
)

// Unknown is the At of a feature whose moment the run does not tell.
const Unknown = time.Duration(-1)

// Feature is one thing a run reached, and when it first did.
type Feature struct {
	Kind string
	At   time.Duration // Unknown when the run does not say
	// Weight is how rare the feature is within its run: 1 over the times
	// the block ran, or the lines of the shape were printed; 1 for the
	// rest. Code that runs once or twice in a run (a checkpoint, a
	// recovery, a fallback) is where a fault is worth trying.
	Weight float64
	key    key
	cm     *cover.Map
	who    string // the node that printed a line or reached a property
}

// key is what a Seen tells features apart by.
type key struct {
	kind, prog, what string
	unit             int
	n                uint32
}

// What says what the feature is, for people: "server kvlog/server/store.go:85",
// "server kvsnap/server/checkpoint.go:40 ran 2+ times", "client: lost write k#".
func (f Feature) What() string {
	switch f.Kind {
	case Block:
		return f.key.prog + " " + f.cm.Where(f.key.unit)
	case Count:
		return fmt.Sprintf("%s %s ran %d+ times", f.key.prog, f.cm.Where(f.key.unit), f.key.n)
	}
	return f.key.what
}

// node is the node that reached f, "" when none did (a pair of faults).
func (f Feature) node() string {
	switch f.Kind {
	case Block, Count:
		return strings.TrimSuffix(f.key.prog, " (upgrade)")
	}
	return f.who
}

func (f Feature) String() string {
	if f.At == Unknown {
		return fmt.Sprintf("%s %s", f.Kind, f.What())
	}
	return fmt.Sprintf("%v %s %s", f.At, f.Kind, f.What())
}

// Seen is everything the runs added to it reached, and how many of them
// reached each feature. Its zero value is not ready: use NewSeen.
type Seen struct {
	blocks *cover.Set
	maps   map[string]*cover.Map
	ids    map[key]int32
	runs   []int32 // by id: how many runs reached the feature
}

// NewSeen returns an empty set.
func NewSeen() *Seen {
	return &Seen{blocks: cover.NewSet(), maps: map[string]*cover.Map{}, ids: map[key]int32{}}
}

// Len is the number of features seen.
func (s *Seen) Len() int { return len(s.ids) }

// Blocks is the number of blocks of user code seen.
func (s *Seen) Blocks() int { return s.blocks.Len() }

// Coverage is the blocks seen, with each program's layout.
func (s *Seen) Coverage() *cover.Run {
	return &cover.Run{Maps: maps.Clone(s.maps), Hit: s.blocks.Clone()}
}

// Add adds what res reached and returns what was new to s, in the order
// of the run's moments (features without a moment last).
func (s *Seen) Add(res *engine.Result) []Feature {
	var out []Feature
	for _, f := range Features(res) {
		id, ok := s.ids[f.key]
		if !ok {
			id = int32(len(s.runs))
			s.ids[f.key] = id
			s.runs = append(s.runs, 0)
			out = append(out, f)
			if f.Kind == Block {
				s.blocks.Add(f.key.prog, f.key.unit)
			}
		}
		s.runs[id]++
	}
	if res.Coverage != nil {
		for _, p := range slices.Sorted(maps.Keys(res.Coverage.Maps)) {
			s.maps[p] = res.Coverage.Maps[p]
		}
	}
	return out
}

// Runs is how many of the runs added to s reached f.
func (s *Seen) Runs(f Feature) int {
	if id, ok := s.ids[f.key]; ok {
		return int(s.runs[id])
	}
	return 0
}

// A Moment is a moment of a run at which it reached things: where a
// mutation forks and puts a fault. Its Weight is how rare in its run the
// rarest of them is; its score (Seen.Score) adds how few runs reached it.
type Moment struct {
	At   time.Duration
	What string // the thing reached rarest in the run, for people
	Node string // the node that reached it ("" when no node did)
	// Weight is 1 over the times the run ran that block (or printed a
	// line of that shape).
	Weight float64
	ids    []int32
	w      []float64
}

// momentFeatures is how many of a moment's features its score looks at:
// the rarest in the run, and the rarest among the runs seen.
const momentFeatures = 8

// Moments are the moments at which res reached the blocks, line shapes
// and properties it did (not only new ones), after its start and before
// its end: the most with the highest Weight and the most with the highest
// score, in the order of Weight (then the soonest). Add res to s first.
func (s *Seen) Moments(res *engine.Result, most int) []Moment {
	byAt := map[time.Duration][]Feature{}
	for _, f := range Features(res) {
		if f.At <= 0 || f.At >= time.Duration(res.SimNs) || f.Kind == Faults {
			continue
		}
		byAt[f.At] = append(byAt[f.At], f)
	}
	var all []Moment
	for _, at := range slices.Sorted(maps.Keys(byAt)) {
		fs := byAt[at]
		slices.SortStableFunc(fs, func(a, b Feature) int { return cmp.Compare(b.Weight, a.Weight) })
		m := Moment{At: at, What: fs[0].What(), Node: fs[0].node(), Weight: fs[0].Weight}
		add := func(f Feature) {
			if id, ok := s.ids[f.key]; ok && !slices.Contains(m.ids, id) {
				m.ids, m.w = append(m.ids, id), append(m.w, f.Weight)
			}
		}
		for _, f := range fs[:min(len(fs), momentFeatures)] {
			add(f)
		}
		slices.SortStableFunc(fs, func(a, b Feature) int { return cmp.Compare(b.Weight/float64(s.Runs(b)), a.Weight/float64(s.Runs(a))) })
		for _, f := range fs[:min(len(fs), momentFeatures)] {
			add(f)
		}
		all = append(all, m)
	}
	keep := make([]bool, len(all))
	order := make([]int, len(all))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(s.Score(all[b]), s.Score(all[a])) })
	for _, i := range order[:min(len(order), most)] {
		keep[i] = true
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(all[b].Weight, all[a].Weight) })
	var out []Moment
	for n, i := range order {
		if n < most || keep[i] {
			out = append(out, all[i])
		}
	}
	return out
}

// Score is how rare the rarest thing reached at m is now: its weight in
// its run (1 over the times its block ran there) over the number of runs
// seen that reached it. It falls as more runs reach the same.
func (s *Seen) Score(m Moment) float64 {
	best := 0.0
	for i, id := range m.ids {
		best = max(best, m.w[i]/float64(s.runs[id]))
	}
	return best
}

// Features is everything a run reached, each once, in the order of the
// moments it first did (those without a moment last): the blocks of user
// code it ran and the moments it ran them 2, 3, 4, 8, ... times, the
// properties it reached or met, the shapes of the lines its programs
// printed, and the pairs of fault kinds that followed each other.
func Features(res *engine.Result) []Feature {
	var out []Feature
	if c := res.Coverage; c != nil {
		add := func(kind string, e cover.Event) {
			cm := c.Maps[e.Program]
			if cm == nil {
				return
			}
			w := 1.0
			if counts := c.Counts[e.Program]; e.Unit < len(counts) && counts[e.Unit] > 0 {
				w = 1 / float64(counts[e.Unit])
			}
			out = append(out, Feature{Kind: kind, At: e.At, Weight: w, key: key{kind: kind, prog: e.Program, unit: e.Unit, n: e.N}, cm: cm})
		}
		for _, e := range c.First {
			add(Block, e)
		}
		for _, e := range c.Rises {
			add(Count, e)
		}
	}
	shapes := map[string]int{}
	props := map[string]bool{}
	for _, l := range res.Lines {
		if l.Gap() {
			continue
		}
		if l.Kind == trace.Event {
			// The properties family writes when each property was first
			// reached, and when a Sometimes first held.
			if what, ok := propertyMoment(l.Text); ok && !props[what] {
				props[what] = true
				out = append(out, Feature{Kind: Property, At: time.Duration(l.At), Weight: 1, key: key{kind: Property, what: what}, who: l.Node})
			}
			continue
		}
		if l.Kind != trace.Stdout && l.Kind != trace.Stderr {
			continue
		}
		what := l.Node + ": " + Shape(l.Text)
		if shapes[what] == 0 {
			out = append(out, Feature{Kind: Log, At: time.Duration(l.At), key: key{kind: Log, what: what}, who: l.Node})
		}
		shapes[what]++
	}
	for i := range out {
		if out[i].Kind == Log {
			out[i].Weight = 1 / float64(shapes[out[i].key.what])
		}
	}
	for _, g := range res.Guidance {
		what := fmt.Sprintf("%s %s operands within %d", g.Kind, g.Message, uint64(1)<<g.Bucket-1)
		out = append(out, Feature{Kind: Property, At: g.At, Weight: 1, key: key{kind: Property, what: what}})
	}
	prev := ""
	pairs := map[string]bool{}
	for _, f := range res.Schedule.Faults {
		what := f.Kind
		if prev != "" {
			what = prev + " then " + f.Kind
		}
		if !pairs[what] {
			pairs[what] = true
			out = append(out, Feature{Kind: Faults, At: f.At, Weight: 1, key: key{kind: Faults, what: what}})
		}
		prev = f.Kind
	}
	slices.SortStableFunc(out, func(a, b Feature) int { return cmp.Compare(a.At, b.At) })
	// The properties the trace did not time (its lines were cut).
	for _, p := range res.Properties {
		if what := p.Kind + " " + p.Message + " reached"; p.Hits > 0 && !props[what] {
			out = append(out, Feature{Kind: Property, At: Unknown, Weight: 1, key: key{kind: Property, what: what}})
		}
		if what := p.Kind + " " + p.Message + " held"; p.Holds() && p.Hits > 0 && !props[what] {
			out = append(out, Feature{Kind: Property, At: Unknown, Weight: 1, key: key{kind: Property, what: what}})
		}
	}
	return out
}

// propertyMoment reads the properties family's trace line of a property
// reached or a Sometimes true for the first time (engine/properties.go):
// `property sometimes "compacted" first reached at main.go:12`.
func propertyMoment(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "property ")
	if !ok {
		return "", false
	}
	kind, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return "", false
	}
	msg, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return "", false
	}
	m, _ := strconv.Unquote(msg)
	rest = rest[len(msg):]
	switch {
	case strings.HasPrefix(rest, " first reached at "):
		return kind + " " + m + " reached", true
	case strings.HasPrefix(rest, " first true at "):
		return kind + " " + m + " held", true
	}
	return "", false
}

// RareMoments are the moments a run first ran the blocks it ran fewest
// times, after init: at most most of them, distinct, the rarest first
// (then the soonest). Code that runs once or twice in a run is where it
// changes state (a checkpoint, a compaction, a recovery, a full buffer, a
// leader stepping down), and a fault just after such a moment is what
// random faults rarely hit.
func RareMoments(res *engine.Result, most int) []time.Duration {
	c := res.Coverage
	if c == nil || c.Counts == nil {
		return nil
	}
	type cand struct {
		n  uint32
		at time.Duration
	}
	var cands []cand
	for _, e := range c.First {
		counts := c.Counts[e.Program]
		if e.At <= 0 || e.Unit >= len(counts) || counts[e.Unit] == 0 {
			continue
		}
		cands = append(cands, cand{counts[e.Unit], e.At})
	}
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.n != b.n {
			return int(a.n) - int(b.n)
		}
		return int(a.at - b.at)
	})
	var out []time.Duration
	for _, cd := range cands {
		if len(out) == most {
			break
		}
		if !slices.Contains(out, cd.at) {
			out = append(out, cd.at)
		}
	}
	return out
}

// Shape is a line with every run of digits replaced by '#', cut to 120
// bytes: lines that differ only in their numbers have one shape.
func Shape(line string) string { return trace.Shape(line, 120) }
