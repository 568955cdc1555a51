package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// seedsOf lists s's seeds.
func seedsOf(s Seeds) []uint64 { return slices.Collect(s.All()) }

// naiveSeeds is what ParseSeeds meant when it stored the seeds: every
// seed of every span in order, a repeat dropped.
func naiveSeeds(spec string) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(spec, ",") {
		var a, b uint64
		if _, err := fmt.Sscanf(part, "%d-%d", &a, &b); err != nil {
			fmt.Sscanf(part, "%d", &a)
			b = a
		}
		for x := a; x <= b; x++ {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	return out
}

func TestParseSeeds(t *testing.T) {
	for spec, want := range map[string][]uint64{
		"7":               {7},
		" 7 ":             {7},
		"1-3":             {1, 2, 3},
		"2-3,9,3-4":       {2, 3, 9, 4},
		"5,5,5":           {5},
		"1-10,3-5":        nil, // nothing new
		"4-6,1-10":        {4, 5, 6, 1, 2, 3, 7, 8, 9, 10},
		"3,6,9,1-10":      {3, 6, 9, 1, 2, 4, 5, 7, 8, 10},
		"1-2,5-6,2-5":     {1, 2, 5, 6, 3, 4},
		"9-10,1-2,0-11":   {9, 10, 1, 2, 0, 3, 4, 5, 6, 7, 8, 11},
		"3-4,1-2,5-6,0-7": {3, 4, 1, 2, 5, 6, 0, 7},
	} {
		s, err := ParseSeeds(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if want == nil {
			want = naiveSeeds(spec)
		}
		if got := seedsOf(s); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", spec, got, want)
		}
		if s.Len() != len(want) {
			t.Errorf("%s: Len %d, want %d", spec, s.Len(), len(want))
		}
		for i, x := range want {
			if s.At(i) != x {
				t.Errorf("%s: At(%d) = %d, want %d", spec, i, s.At(i), x)
			}
			if !s.Has(x) {
				t.Errorf("%s: Has(%d) is false", spec, x)
			}
		}
	}
}

// TestParseSeedsLikeNaive compares random lists of overlapping spans with
// the seeds a set would keep: the same seeds in the same order.
func TestParseSeedsLikeNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var parts []string
		for range 1 + r.IntN(8) {
			a := r.Uint64N(40)
			if r.IntN(3) == 0 {
				parts = append(parts, fmt.Sprint(a))
			} else {
				parts = append(parts, fmt.Sprintf("%d-%d", a, a+r.Uint64N(15)))
			}
		}
		spec := strings.Join(parts, ",")
		s, err := ParseSeeds(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		want := naiveSeeds(spec)
		if got := seedsOf(s); !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", spec, got, want)
		}
		if s.Len() != len(want) {
			t.Fatalf("%s: Len %d, want %d", spec, s.Len(), len(want))
		}
		// Slices, and the list written back, name the same seeds.
		i := r.IntN(len(want) + 1)
		j := i + r.IntN(len(want)-i+1)
		if got := seedsOf(s.Slice(i, j)); !slices.Equal(got, want[i:j]) && !(len(got) == 0 && i == j) {
			t.Fatalf("%s [%d:%d]: %v, want %v", spec, i, j, got, want[i:j])
		}
		again, err := ParseSeeds(s.String())
		if err != nil || !slices.Equal(seedsOf(again), want) {
			t.Fatalf("%s written back as %q: %v, %v", spec, s.String(), seedsOf(again), err)
		}
	}
}

// A list costs its spans, whatever the seeds: a hundred million seeds are
// counted, indexed and sliced without being stored.
func TestParseSeedsBounded(t *testing.T) {
	allocs := testing.AllocsPerRun(10, func() {
		s, err := ParseSeeds("1-100000000")
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != 100_000_000 || s.At(99_999_999) != 100_000_000 || s.Slice(10, 20).String() != "11-20" {
			t.Fatalf("%d seeds, the last %d", s.Len(), s.At(s.Len()-1))
		}
	})
	if allocs > 20 {
		t.Errorf("%v allocations for one range", allocs)
	}
	n := 0
	for x := range func() Seeds { s, _ := ParseSeeds("1-100000000"); return s }().All() {
		if n++; n == 3 || x != uint64(n) {
			break
		}
	}
	if n != 3 {
		t.Errorf("iterating stopped at %d", n)
	}

	s, err := ParseSeeds("9223372036854775806,0-9223372036854775806")
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != math.MaxInt64 || s.At(0) != math.MaxInt64-1 || s.At(1) != 0 || s.At(s.Len()-1) != math.MaxInt64-2 {
		t.Errorf("%d seeds: %d, %d, ..., %d", s.Len(), s.At(0), s.At(1), s.At(s.Len()-1))
	}
	if s, err := ParseSeeds("18446744073709551615,18446744073709551614-18446744073709551615"); err != nil || s.String() != "18446744073709551615,18446744073709551614" {
		t.Errorf("%q, %v", s, err)
	}
}

func TestParseSeedsErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"":                                       `seeds "": "" is not a seed number (write seeds like 1-500 or 2-3,9)`,
		"x":                                      `seeds "x": "x" is not a seed number`,
		"1,,2":                                   `seeds "1,,2": "" is not a seed number`,
		"5-2":                                    `seeds "5-2": "5-2" is reversed: write the low seed first, 2-5`,
		"1-":                                     `seeds "1-": "1-" is not a range low-high`,
		"-3":                                     `seeds "-3": "-3" is not a seed number`,
		"1-2-3":                                  `seeds "1-2-3": "1-2-3" is not a range low-high`,
		"18446744073709551616":                   `is not a seed number`,
		"0-18446744073709551615":                 `seeds "0-18446744073709551615": more than 9223372036854775807 seeds, more than one list can count`,
		"1-9223372036854775807,0":                `more than 9223372036854775807 seeds`,
		strings.Repeat("1,", MaxSeedSpans) + "1": "seeds: 10001 seeds and ranges in one list, over the limit of 10000; write consecutive seeds as a range such as 1-500",
	} {
		_, err := ParseSeeds(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40s: %v, want %q", spec, err, want)
		}
	}
	// Up to the limit of spans, and the seeds they name, are fine.
	if s, err := ParseSeeds(strings.Repeat("1,", MaxSeedSpans-1) + "1"); err != nil || s.Len() != 1 {
		t.Errorf("%v, %v", s, err)
	}
	if s, err := ParseSeeds("0-9223372036854775806"); err != nil || s.Len() != math.MaxInt64 {
		t.Errorf("%v, %v", s.Len(), err)
	}
}
