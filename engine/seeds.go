package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxSeeds bounds how many seeds one list names: the list is held in
// memory, with a set to drop repeats (issue 12).
const MaxSeeds = 1_000_000

// ParseSeeds reads a list of seeds such as "7", "1-500" or "2-3,9", in
// order and without repeats, as seedfall run -seeds takes them. A list of
// more than MaxSeeds seeds is refused before any is stored.
func ParseSeeds(spec string) ([]uint64, error) {
	type span struct{ a, b uint64 }
	var spans []span
	var total uint64
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds %q: %q is not a seed number (write seeds like 1-500 or 2-3,9)", spec, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("seeds %q: %q is not a range low-high (write seeds like 1-500 or 2-3,9)", spec, part)
			}
		}
		if b-a >= MaxSeeds || total+(b-a+1) > MaxSeeds {
			return nil, fmt.Errorf("seeds %q: more than %d seeds, the limit of one list; split the seeds over several runs", spec, MaxSeeds)
		}
		total += b - a + 1
		spans = append(spans, span{a, b})
	}
	out := make([]uint64, 0, total)
	seen := make(map[uint64]bool, total)
	for _, sp := range spans {
		for x := sp.a; ; x++ {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
			if x == sp.b {
				break
			}
		}
	}
	return out, nil
}
