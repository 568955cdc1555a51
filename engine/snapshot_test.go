package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/trace"
)

// stdout returns the lines a run's programs printed, with their times.
func stdout(res *Result) []trace.Line {
	var out []trace.Line
	for _, l := range res.Lines {
		if l.Kind == trace.Stdout {
			out = append(out, l)
		}
	}
	return out
}

// A start from the post-init snapshot keeps what init computed and
// printed, continues init's monotonic clock (a timer init started fires on
// time, also in a program that starts late: the finally check), and draws
// the runtime's random state from the seed: map order varies across seeds
// as after a cold boot, and a seed run twice gives the same digest.
func TestSnapshotStartIsABoot(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./snapinit"}, "finally": {"name": "f", "pkg": "./snapinit"}}`)
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		snap := twice(t, p, seed, nil)
		cold, err := p.Run(context.Background(), RunOptions{Seed: seed, ColdBoot: true})
		if err != nil {
			t.Fatal(err)
		}
		if !snap.Passed || !cold.Passed {
			t.Fatalf("seed %d: snapshot start %s %s, cold boot %s %s", seed, snap.Class, snap.Reason, cold.Class, cold.Reason)
		}
		s, c := stdout(snap), stdout(cold)
		if len(s) != 8 || len(c) != 8 {
			t.Fatalf("seed %d: printed %d lines from a snapshot, %d cold; want 8:\n%v\n%v", seed, len(s), len(c), s, c)
		}
		for i := 0; i < 8; i += 4 {
			if s[i].Text != "init: table ready" || s[i].Text != c[i].Text || s[i].Node != c[i].Node {
				t.Errorf("seed %d: the line init printed: %+v from a snapshot, %+v cold", seed, s[i], c[i])
			}
			if !strings.HasPrefix(s[i+1].Text, "main: sum ") || s[i+1].Text != c[i+1].Text {
				t.Errorf("seed %d: what init computed: %q from a snapshot, %q cold", seed, s[i+1].Text, c[i+1].Text)
			}
			if want := "main: init's timer fired 1.5s after main began"; s[i+3].Text != want || c[i+3].Text != want {
				t.Errorf("seed %d, %s: %q from a snapshot, %q cold; want %q", seed, s[i+3].Node, s[i+3].Text, c[i+3].Text, want)
			}
			orders[s[i+2].Text] = true
		}
		if s[4].At < int64(1500*time.Millisecond) {
			t.Errorf("seed %d: the finally check started at %v, before the workload ended", seed, time.Duration(s[4].At))
		}
	}
	if len(orders) < 2 {
		t.Errorf("every start iterated the map in the same order from the snapshot: %v; the runtime's random state was not re-drawn", orders)
	}
}

// A program whose init reads the wall clock cannot share one snapshot
// across starts: it boots cold, hints so once, and sees the run's clock.
func TestSnapshotRefusesTheWallClock(t *testing.T) {
	var notes []string
	e, err := New(context.Background(), Options{Hint: func(s string) { notes = append(notes, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	p := prepareWith(t, e, `{"nodes": [], "workload": {"name": "w", "pkg": "./wallinit"}}`)
	for seed := uint64(1); seed <= 2; seed++ {
		res := twice(t, p, seed, nil)
		out := stdout(res)
		if !res.Passed || len(out) != 1 || !strings.HasPrefix(out[0].Text, "booted at 2025-01-01T00:00:00") {
			t.Fatalf("seed %d: %v %s, printed %v", seed, res.Passed, res.Reason, out)
		}
	}
	want := "seedfall: w starts without a snapshot, running its init at every start: its init calls clock_time_get (the wall clock)"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes: %q, want once %q", notes, want)
	}
}

// An instance reused for a new start keeps the size its earlier guests grew
// it to; what they grew into must read zero again, however much larger or
// smaller than before each start grows (seeded: 1 to 12 MiB).
func TestReusedInstanceGrowsIntoZeroedMemory(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./freshmem"}}`)
	sizes := map[string]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		res := twice(t, p, seed, nil)
		out := stdout(res)
		if !res.Passed || len(out) != 1 {
			t.Fatalf("seed %d: %v %s, printed %v", seed, res.Passed, res.Reason, out)
		}
		var mib, dirty int
		if _, err := fmt.Sscanf(out[0].Text, "grew %d MiB, %d bytes not zero", &mib, &dirty); err != nil {
			t.Fatalf("seed %d: %q: %v", seed, out[0].Text, err)
		}
		if dirty != 0 {
			t.Errorf("seed %d: %s: an earlier incarnation's bytes showed through", seed, out[0].Text)
		}
		sizes[fmt.Sprint(mib)] = true
	}
	if len(sizes) < 4 {
		t.Errorf("the seeds grew the memory by only %v MiB: the test needs starts that grow more and less than the one before", sizes)
	}
}
