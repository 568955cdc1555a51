package results

import "testing"

// A tally names the first ten seeds and counts the rest, as a sweep's
// summary line and the go test helper's print them.
func TestTally(t *testing.T) {
	var none Tally
	if none.String() != "" || none.N() != 0 {
		t.Errorf("empty tally: %q, %d", none.String(), none.N())
	}
	var some Tally
	for seed := uint64(1); seed <= 12; seed++ {
		some.Add(seed * 2)
	}
	if got, want := some.String(), " (seeds 2 4 6 8 10 12 14 16 18 20 and 2 more)"; got != want || some.N() != 12 {
		t.Errorf("got %q (%d), want %q (12)", got, some.N(), want)
	}
}
