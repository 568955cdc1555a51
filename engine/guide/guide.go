// Package guide is what a guided search is made of (issue 28): the new
// things a run reached (Features), the set of everything reached so far
// (Seen), and the mutations of a run's schedule near the moment it reached
// something new (Mutate). The search itself is a strategy written in
// Starlark (stdlib/strategies.star: guided) over these, so an author can
// write another.
package guide

import (
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
	Count    = "count"    // a block ran a number of times in a new range: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+
	Property = "property" // a sim or Antithesis property was reached or held, or its operands came closer
	Log      = "log"      // a program printed a line of a new shape (numbers masked)
	Faults   = "faults"   // a fault followed another of a kind it had not followed
)

// Unknown is the At of a feature whose moment the run does not tell.
const Unknown = time.Duration(-1)

// Feature is one thing a run reached, and when it first did.
type Feature struct {
	Kind string
	What string        // for people: "server kvlog/server/store.go:85", "client: lost write k#"
	At   time.Duration // Unknown when the run does not say
	prog string        // a block's program and unit
	unit int
}

func (f Feature) String() string {
	if f.At == Unknown {
		return fmt.Sprintf("%s %s", f.Kind, f.What)
	}
	return fmt.Sprintf("%v %s %s", f.At, f.Kind, f.What)
}

// Seen is everything the runs added to it reached. Its zero value is not
// ready: use NewSeen.
type Seen struct {
	blocks *cover.Set
	maps   map[string]*cover.Map
	keys   map[string]bool
}

// NewSeen returns an empty set.
func NewSeen() *Seen {
	return &Seen{blocks: cover.NewSet(), maps: map[string]*cover.Map{}, keys: map[string]bool{}}
}

// Len is the number of features seen.
func (s *Seen) Len() int { return s.blocks.Len() + len(s.keys) }

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
		if f.Kind == Block {
			if !s.blocks.Add(f.prog, f.unit) {
				continue
			}
		} else {
			key := f.Kind + "\x00" + f.What
			if s.keys[key] {
				continue
			}
			s.keys[key] = true
		}
		out = append(out, f)
	}
	if res.Coverage != nil {
		for _, p := range slices.Sorted(maps.Keys(res.Coverage.Maps)) {
			s.maps[p] = res.Coverage.Maps[p]
		}
	}
	return out
}

// Features is everything a run reached, each once, in the order of the
// moments it first did (those without a moment last): the blocks of user
// code it ran, the properties it reached or met, the shapes of the lines
// its programs printed, and the pairs of fault kinds that followed each
// other.
func Features(res *engine.Result) []Feature {
	var out []Feature
	if c := res.Coverage; c != nil {
		for _, e := range c.First {
			if c.Maps[e.Program] == nil {
				continue
			}
			out = append(out, Feature{Kind: Block, What: e.Program + " " + c.Maps[e.Program].Where(e.Unit), At: e.At, prog: e.Program, unit: e.Unit})
		}
	}
	shapes := map[string]bool{}
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
				out = append(out, Feature{Kind: Property, What: what, At: time.Duration(l.At)})
			}
			continue
		}
		if l.Kind != trace.Stdout && l.Kind != trace.Stderr {
			continue
		}
		what := l.Node + ": " + Shape(l.Text)
		if !shapes[what] {
			shapes[what] = true
			out = append(out, Feature{Kind: Log, What: what, At: time.Duration(l.At)})
		}
	}
	for _, g := range res.Guidance {
		out = append(out, Feature{Kind: Property, What: fmt.Sprintf("%s %s operands within %d", g.Kind, g.Message, uint64(1)<<g.Bucket-1), At: g.At})
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
			out = append(out, Feature{Kind: Faults, What: what, At: f.At})
		}
		prev = f.Kind
	}
	slices.SortStableFunc(out, func(a, b Feature) int {
		switch {
		case a.At == b.At:
			return 0
		case a.At < b.At:
			return -1
		}
		return 1
	})
	// How many times each block ran: known only at the end.
	if c := res.Coverage; c != nil {
		for _, prog := range slices.Sorted(maps.Keys(c.Counts)) {
			if c.Maps[prog] == nil {
				continue
			}
			for unit, n := range c.Counts[prog] {
				if n > 0 {
					out = append(out, Feature{Kind: Count, What: fmt.Sprintf("%s %s ran %s", prog, c.Maps[prog].Where(unit), countRange(n)), At: Unknown})
				}
			}
		}
	}
	// The properties the trace did not time (its lines were cut).
	for _, p := range res.Properties {
		if what := p.Kind + " " + p.Message + " reached"; p.Hits > 0 && !props[what] {
			out = append(out, Feature{Kind: Property, What: what, At: Unknown})
		}
		if what := p.Kind + " " + p.Message + " held"; p.Holds() && p.Hits > 0 && !props[what] {
			out = append(out, Feature{Kind: Property, What: what, At: Unknown})
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

// countRange is the range of run counts n falls in, as AFL buckets hit
// counts: a block that ran 5 times where it ran twice before is new.
func countRange(n uint32) string {
	switch {
	case n <= 3:
		return fmt.Sprintf("%d times", n)
	case n < 8:
		return "4-7 times"
	case n < 16:
		return "8-15 times"
	case n < 32:
		return "16-31 times"
	case n < 128:
		return "32-127 times"
	}
	return "128+ times"
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
func Shape(line string) string {
	var b strings.Builder
	digits := false
	for _, r := range line {
		if b.Len() >= 120 {
			break
		}
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}
