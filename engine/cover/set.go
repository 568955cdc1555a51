package cover

import (
	"maps"
	"math/bits"
	"slices"
	"time"
)

// Set is a set of units of one or more programs (a program's units are
// those of its binary's Map). Programs are kept by name, so the sets of
// runs of one world merge.
type Set struct {
	progs map[string][]uint64 // a bit per unit
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{progs: map[string][]uint64{}} }

// Add puts a unit in the set and reports whether it was new.
func (s *Set) Add(prog string, unit int) bool {
	if unit < 0 {
		return false
	}
	b := s.progs[prog]
	w := unit / 64
	if w >= len(b) {
		b = append(b, make([]uint64, w+1-len(b))...)
		s.progs[prog] = b
	}
	bit := uint64(1) << (unit % 64)
	if b[w]&bit != 0 {
		return false
	}
	b[w] |= bit
	return true
}

// Has reports whether the unit is in the set.
func (s *Set) Has(prog string, unit int) bool {
	b := s.progs[prog]
	return unit >= 0 && unit/64 < len(b) && b[unit/64]&(1<<(unit%64)) != 0
}

// Len is the number of units in the set.
func (s *Set) Len() int {
	n := 0
	for _, b := range s.progs {
		for _, w := range b {
			n += bits.OnesCount64(w)
		}
	}
	return n
}

// Programs are the programs with units in the set, sorted.
func (s *Set) Programs() []string {
	return slices.Sorted(maps.Keys(s.progs))
}

// Units are the set's units of prog, in order.
func (s *Set) Units(prog string) []int {
	var out []int
	for w, word := range s.progs[prog] {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, w*64+b)
			word &^= 1 << b
		}
	}
	return out
}

// Merge adds o's units to s and returns how many were new.
func (s *Set) Merge(o *Set) int {
	added := 0
	for _, prog := range o.Programs() {
		ob := o.progs[prog]
		b := s.progs[prog]
		if len(b) < len(ob) {
			b = append(b, make([]uint64, len(ob)-len(b))...)
			s.progs[prog] = b
		}
		for i, w := range ob {
			added += bits.OnesCount64(w &^ b[i])
			b[i] |= w
		}
	}
	return added
}

// Missing is how many of o's units s lacks.
func (s *Set) Missing(o *Set) int {
	n := 0
	for prog, ob := range o.progs {
		b := s.progs[prog]
		for i, w := range ob {
			if i < len(b) {
				w &^= b[i]
			}
			n += bits.OnesCount64(w)
		}
	}
	return n
}

// Clone returns a copy of s.
func (s *Set) Clone() *Set {
	c := NewSet()
	for p, b := range s.progs {
		c.progs[p] = slices.Clone(b)
	}
	return c
}

// Event is the moment a unit's count in a run first reached N (to the
// precision of the samples: it did at or before At, after the sample
// before). N is 1 for the first moment it ran.
type Event struct {
	At      time.Duration
	Program string
	Unit    int
	N       uint32
}

// Thresholds are the counts whose first moments a run notes (Run.First
// for 1, Run.Rises for the others): the ranges AFL buckets hit counts in.
var Thresholds = []uint32{1, 2, 3, 4, 8, 16, 32, 128}

// Run is the coverage of one run: the layout of each program's binary,
// the units that ran, and when each ran first, in order of time.
type Run struct {
	Maps  map[string]*Map
	Hit   *Set
	First []Event
	// Rises are the moments each unit's count first reached each of
	// Thresholds above 1, in order of time: when a checkpoint ran for the
	// second time, a recovery for the third.
	Rises []Event
	// Counts is how many times each unit ran, by program (every
	// incarnation's counters added up); nil when not known (a merge).
	Counts map[string][]uint32
}

// Stmts counts the statements of the covered packages and those of the
// units that ran.
func (r *Run) Stmts() (hit, all int) {
	for _, prog := range slices.Sorted(maps.Keys(r.Maps)) {
		m := r.Maps[prog]
		all += m.Stmts()
		for _, u := range r.Hit.Units(prog) {
			if u < len(m.Units) {
				hit += int(m.Units[u].Stmts)
			}
		}
	}
	return hit, all
}
