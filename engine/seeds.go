package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSeeds reads a list of seeds such as "7", "1-500" or "2-3,9", in
// order and without repeats, as seedfall run -seeds takes them.
func ParseSeeds(spec string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
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
		if b-a > 100_000_000 {
			return nil, fmt.Errorf("seeds %q: more than 100,000,000 seeds", spec)
		}
		for x := a; ; x++ {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
			if x == b {
				break
			}
		}
	}
	return out, nil
}
