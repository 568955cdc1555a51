package engine

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSeeds(t *testing.T) {
	for spec, want := range map[string][]uint64{
		"7":         {7},
		"1-3":       {1, 2, 3},
		"2-3,9,3-4": {2, 3, 9, 4},
		"0-999999":  nil, // exactly MaxSeeds
	} {
		got, err := ParseSeeds(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if want == nil {
			if len(got) != MaxSeeds {
				t.Fatalf("%s: %d seeds", spec, len(got))
			}
			continue
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", spec, got, want)
		}
	}
	// Over the limit, in one range or in several, refused before storing.
	for _, spec := range []string{"1-100000000", "0-1000000", "1-600000,1-600000", "0-18446744073709551615", "5,0-999999"} {
		_, err := ParseSeeds(spec)
		if err == nil || !strings.Contains(err.Error(), "more than 1000000 seeds, the limit of one list; split the seeds over several runs") {
			t.Fatalf("%s: %v", spec, err)
		}
	}
}
