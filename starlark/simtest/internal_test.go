package simtest

import (
	"strings"
	"testing"
)

// TestOptionErrors: a bad option fails the test with a message naming
// the option and what to write.
func TestOptionErrors(t *testing.T) {
	for _, c := range []struct {
		opt  Option
		want string
	}{
		{Seeds("1-"), `simtest.Seeds("1-"): seeds "1-": "1-" is not a range low-high (write seeds like 1-500 or 2-3,9)`},
		{Seeds("x"), `simtest.Seeds("x"): seeds "x": "x" is not a seed number`},
		{Short(-1), "simtest.Short(-1): want 0 or more seeds"},
		{Parallel(0), "simtest.Parallel(0): want 1 or more seeds at once"},
	} {
		err := c.opt(&options{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("got %v, want %s", err, c.want)
		}
	}
}

// TestMatches: the guess of which subtests -run and -skip select follows
// package testing's rules.
func TestMatches(t *testing.T) {
	for _, c := range []struct {
		pattern string
		name    string
		whole   bool
		want    bool
	}{
		{"TestKV/seed=17", "TestKV/seed=17", false, true},
		{"TestKV/seed=17", "TestKV/seed=170", false, true}, // unanchored, as in go test
		{"^TestKV$/^seed=17$", "TestKV/seed=170", false, false},
		{"^TestKV$/^seed=17$", "TestKVX/seed=17", false, false},
		{"TestKV", "TestKV/seed=3", false, true},                 // deeper levels match all
		{"TestKV/seed=1/x", "TestKV/seed=1", false, true},        // partial: its subtests may match
		{"TestKV/seed=1/x", "TestKV/seed=1", true, false},        // but -skip skips only whole matches
		{"TestKV/seed=[12]", "TestKV/seed=2", false, true},       // a bracket is not a level
		{"TestKV/seed=(1|2)$", "TestKV/seed=2", false, true},     // nor a bar in parentheses
		{"TestA/x|TestKV/seed=3", "TestKV/seed=3", false, true},  // alternatives
		{"TestA/x|TestKV/seed=3", "TestKV/seed=4", false, false}, // alternatives
		{"TestKV/seed=(", "TestKV/seed=4", false, true},          // a bad pattern: no guess
	} {
		if got := matches(splitPattern(c.pattern), strings.Split(c.name, "/"), c.whole); got != c.want {
			t.Errorf("%q on %s (whole %v): %v, want %v", c.pattern, c.name, c.whole, got, c.want)
		}
	}
}
