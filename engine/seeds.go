package engine

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// MaxSeedSpans bounds how many spans ("7", "1-500") one list names. A list
// is held as its spans, never as its seeds, so this, not the number of
// seeds, is what it costs in memory: a few hundred kilobytes at most.
const MaxSeedSpans = 10_000

// MaxSeeds is the most seeds one list may name: as many as a count (an int)
// holds. Only absurd input reaches it, such as the whole 64-bit range
// 0-18446744073709551615.
const MaxSeeds = math.MaxInt64

// Seeds is a list of seeds, in order and without repeats, as seedfall run
// -seeds takes them. It keeps spans of consecutive seeds, not the seeds:
// "1-100000000" costs as little as "7". The zero Seeds is empty.
type Seeds struct {
	spans []seedSpan // disjoint, in the order their seeds come
	ends  []int      // ends[i]: seeds in spans[:i+1]
}

// seedSpan is the seeds a to b, both included.
type seedSpan struct{ a, b uint64 }

func (sp seedSpan) len() int { return int(sp.b-sp.a) + 1 }

// OneSeed is the list of one seed.
func OneSeed(seed uint64) Seeds { return SeedRange(seed, seed) }

// SeedRange is the list of seeds a to b (b >= a), both included; b-a must
// be below MaxSeeds.
func SeedRange(a, b uint64) Seeds {
	var s Seeds
	s.add(seedSpan{a, b})
	return s
}

// Append adds seed at the end of the list, which must not hold it yet;
// consecutive seeds share a span, so a list built seed by seed costs as
// little as one parsed.
func (s *Seeds) Append(seed uint64) { s.add(seedSpan{seed, seed}) }

func (s *Seeds) add(sp seedSpan) {
	if n := len(s.spans); n > 0 && s.spans[n-1].b+1 == sp.a && s.spans[n-1].b != math.MaxUint64 {
		s.spans[n-1].b = sp.b // "1-3,4-6" is "1-6"
		s.ends[n-1] += sp.len()
		return
	}
	s.spans = append(s.spans, sp)
	s.ends = append(s.ends, s.Len()+sp.len())
}

// ParseSeeds reads a list of seeds such as "7", "1-500" or "2-3,9", in
// order and without repeats, as seedfall run -seeds takes them: a span
// that overlaps earlier ones adds only the seeds they did not name, so
// "2-3,9,3-4" is 2, 3, 9, 4. The list holds spans, not seeds: its memory
// grows with the text, which may name at most MaxSeedSpans spans.
func ParseSeeds(spec string) (Seeds, error) {
	parts := strings.Split(spec, ",")
	if len(parts) > MaxSeedSpans {
		return Seeds{}, fmt.Errorf("seeds: %d seeds and ranges in one list, over the limit of %d; write consecutive seeds as a range such as 1-500", len(parts), MaxSeedSpans)
	}
	var out Seeds
	var named []seedSpan // the union of the spans so far: sorted, disjoint, not adjacent
	for _, part := range parts {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return Seeds{}, fmt.Errorf("seeds %q: %q is not a seed number (write seeds like 1-500 or 2-3,9)", abbrev(spec), part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil {
				return Seeds{}, fmt.Errorf("seeds %q: %q is not a range low-high (write seeds like 1-500 or 2-3,9)", abbrev(spec), part)
			}
			if b < a {
				return Seeds{}, fmt.Errorf("seeds %q: %q is reversed: write the low seed first, %d-%d", abbrev(spec), part, b, a)
			}
		}
		// The seeds of a-b no earlier span named: the gaps of named in it.
		i := sort.Search(len(named), func(i int) bool { return named[i].b >= a }) // the first that ends at or after a
		j := i                                                                    // past the last that starts at or before b
		next, covered := a, false
		for ; j < len(named) && named[j].a <= b; j++ {
			if named[j].a > next {
				if err := out.addChecked(seedSpan{next, named[j].a - 1}, spec); err != nil {
					return Seeds{}, err
				}
			}
			if named[j].b >= b {
				covered = true
			} else {
				next = named[j].b + 1
			}
		}
		if !covered {
			if err := out.addChecked(seedSpan{next, b}, spec); err != nil {
				return Seeds{}, err
			}
		}
		// named[i:j] overlap a-b: merge them with it, and with neighbours
		// it touches.
		m := seedSpan{a, b}
		if i < j {
			m.a, m.b = min(m.a, named[i].a), max(m.b, named[j-1].b)
		}
		if i > 0 && named[i-1].b+1 == m.a {
			i--
			m.a = named[i].a
		}
		if j < len(named) && m.b != math.MaxUint64 && named[j].a == m.b+1 {
			m.b = named[j].b
			j++
		}
		named = slices.Replace(named, i, j, m)
	}
	return out, nil
}

// addChecked adds a span of new seeds unless the list would then name more
// than MaxSeeds.
func (s *Seeds) addChecked(sp seedSpan, spec string) error {
	if sp.b-sp.a >= MaxSeeds || uint64(s.Len())+(sp.b-sp.a) >= MaxSeeds {
		return fmt.Errorf("seeds %q: more than %d seeds, more than one list can count", abbrev(spec), uint64(MaxSeeds))
	}
	s.add(sp)
	return nil
}

// abbrev shortens a long -seeds text for a message.
func abbrev(spec string) string {
	const most = 60
	if len(spec) <= most {
		return spec
	}
	return spec[:most] + "..."
}

// Len is how many seeds the list names.
func (s Seeds) Len() int {
	if len(s.ends) == 0 {
		return 0
	}
	return s.ends[len(s.ends)-1]
}

// All yields the seeds in order.
func (s Seeds) All() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for _, sp := range s.spans {
			for x := sp.a; ; x++ {
				if !yield(x) {
					return
				}
				if x == sp.b {
					break
				}
			}
		}
	}
}

// At is the i-th seed, from 0; it panics unless 0 <= i < Len().
func (s Seeds) At(i int) uint64 {
	if i < 0 || i >= s.Len() {
		panic(fmt.Sprintf("seed index %d out of range [0:%d]", i, s.Len()))
	}
	k := sort.SearchInts(s.ends, i+1) // the span that holds seed i
	start := 0
	if k > 0 {
		start = s.ends[k-1]
	}
	return s.spans[k].a + uint64(i-start)
}

// Slice is the seeds from the i-th up to, not including, the j-th; it
// panics unless 0 <= i <= j <= Len().
func (s Seeds) Slice(i, j int) Seeds {
	if i < 0 || j < i || j > s.Len() {
		panic(fmt.Sprintf("seed slice [%d:%d] out of range [0:%d]", i, j, s.Len()))
	}
	var out Seeds
	if i == j {
		return out
	}
	k := sort.SearchInts(s.ends, i+1) // the span that holds seed i
	sp := s.spans[k]
	sp.a = s.At(i)
	for s.ends[k] < j {
		out.add(sp)
		k++
		sp = s.spans[k]
	}
	sp.b = s.At(j - 1)
	out.add(sp)
	return out
}

// Range reports whether the seeds are consecutive, and the first and last.
func (s Seeds) Range() (first, last uint64, ok bool) {
	if len(s.spans) != 1 {
		return 0, 0, false
	}
	return s.spans[0].a, s.spans[0].b, true
}

// Has reports whether seed is in the list.
func (s Seeds) Has(seed uint64) bool {
	for _, sp := range s.spans {
		if sp.a <= seed && seed <= sp.b {
			return true
		}
	}
	return false
}

// String writes the list as -seeds takes it: "1-500", "2-3,9".
func (s Seeds) String() string {
	var b strings.Builder
	for i, sp := range s.spans {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(sp.a, 10))
		if sp.b != sp.a {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(sp.b, 10))
		}
	}
	return b.String()
}
