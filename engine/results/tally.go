package results

import "fmt"

// Tally keeps the first few seeds of a kind (the failing ones) and
// counts the rest, for a line such as "(seeds 3 5 8 and 12 more)".
type Tally struct {
	first []uint64
	n     int
}

// tallyShown is how many seeds a Tally names.
const tallyShown = 10

func (t *Tally) Add(seed uint64) {
	if len(t.first) < tallyShown {
		t.first = append(t.first, seed)
	}
	t.n++
}

// String writes " (seeds 3 5 and 12 more)", or "" for none.
func (t *Tally) String() string {
	if t.n == 0 {
		return ""
	}
	s := " (seeds"
	for _, x := range t.first {
		s += fmt.Sprintf(" %d", x)
	}
	if more := t.n - len(t.first); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + ")"
}

// N is how many seeds were added.
func (t *Tally) N() int { return t.n }
