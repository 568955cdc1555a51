package disk

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// script is a Draw that returns the given values in turn and records each
// n it was asked for; it fails the test when it runs out or a value is out
// of range.
type script struct {
	t    *testing.T
	vals []int
	asks []int
}

func scripted(t *testing.T, vals ...int) *script { return &script{t: t, vals: vals} }

func (s *script) draw(n int) int {
	s.t.Helper()
	s.asks = append(s.asks, n)
	if len(s.vals) == 0 {
		s.t.Fatalf("draw(%d): script exhausted after %v", n, s.asks[:len(s.asks)-1])
	}
	v := s.vals[0]
	s.vals = s.vals[1:]
	if v < 0 || v >= n {
		s.t.Fatalf("draw(%d): scripted value %d is out of range", n, v)
	}
	return v
}

func (s *script) done() {
	s.t.Helper()
	if len(s.vals) > 0 {
		s.t.Errorf("draws left unused: %v (asked %v)", s.vals, s.asks)
	}
}

// show renders file content readably: runs of four or more equal bytes
// as {c*n}, a zero byte as 0 inside a run and \0 outside.
func show(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		j := i
		for j < len(b) && b[j] == b[i] {
			j++
		}
		c := string(b[i])
		if b[i] == 0 {
			c = `\0`
		} else if b[i] < ' ' || b[i] > '~' {
			c = fmt.Sprintf(`\x%02x`, b[i])
		}
		if j-i >= 4 {
			if b[i] == 0 {
				c = "0"
			}
			fmt.Fprintf(&sb, "{%s*%d}", c, j-i)
		} else {
			sb.WriteString(strings.Repeat(c, j-i))
		}
		i = j
	}
	return sb.String()
}

// state renders the namespace and file contents on one line, sorted by
// path: "a=xy b/ l->a".
func state(d *Disk) string {
	var parts []string
	d.Walk(func(p string, st Stat, _ int64, _ int) {
		switch st.Type {
		case TypeDirectory:
			parts = append(parts, p+"/")
		case TypeSymlink:
			target, _ := d.Readlink(d.Root(), p)
			parts = append(parts, p+"->"+target)
		default:
			data, err := d.ReadFile(p)
			if err != nil {
				parts = append(parts, fmt.Sprintf("%s:%v", p, err))
				break
			}
			parts = append(parts, p+"="+show(data))
		}
	})
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, " ")
}

// crashStates returns every state a crash under cfg can leave after steps,
// sorted, by running the steps and the crash once per sequence of draws:
// an odometer over the choices, where a choice can change which draws
// follow.
func crashStates(t *testing.T, strict bool, cfg CrashConfig, steps func(t *testing.T, d *Disk)) []string {
	t.Helper()
	seen := map[string]bool{}
	var forced []int
	for runs := 0; ; runs++ {
		if runs > 100000 {
			t.Fatalf("more than 100000 crash states: scenario too big")
		}
		var asks []int
		draw := func(n int) int {
			v := 0
			if len(asks) < len(forced) {
				v = forced[len(asks)]
			}
			asks = append(asks, n)
			return v
		}
		d := newDisk(strict)
		steps(t, d)
		m, err := NewCrashModel(cfg, draw)
		if err != nil {
			t.Fatal(err)
		}
		d.CrashWith(m)
		seen[state(d)] = true
		// Advance the odometer: the last draw that has another value
		// moves on, and every draw after it starts again from 0.
		next := make([]int, len(asks))
		copy(next, forced)
		j := len(asks) - 1
		for j >= 0 && next[j]+1 >= asks[j] {
			j--
		}
		if j < 0 {
			break
		}
		forced = append(next[:j], next[j]+1)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// sameStates compares reachable crash states with the expected ones.
func sameStates(t *testing.T, got, want []string) {
	t.Helper()
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("crash states:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
