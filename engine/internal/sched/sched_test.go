package sched

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/internal/rng"
)

// sleeper runs n rounds of "log, then sleep d".
func sleeper(s *Sched, log *[]string, name string, n int, d int64) func(*Proc) {
	return func(p *Proc) {
		for i := 0; i < n; i++ {
			*log = append(*log, fmt.Sprintf("%d %s %d", s.Now(), name, i))
			wake := s.Now() + d
			if p.Block(func() int64 { return wake }) {
				return
			}
		}
	}
}

func runWorld(seed uint64) (string, Outcome, int64) {
	s := New(rng.New(seed, "sched", -1))
	var log []string
	s.Go("a", sleeper(s, &log, "a", 5, 10))
	s.Go("b", sleeper(s, &log, "b", 5, 10))
	s.Go("c", sleeper(s, &log, "c", 3, 25))
	out := s.Run(Options{Until: 1000})
	return strings.Join(log, "\n"), out, s.Now()
}

func TestVirtualTimeJumpsAndSeedDecidesOrder(t *testing.T) {
	l1, out, end := runWorld(1)
	l1b, _, _ := runWorld(1)
	if l1 != l1b {
		t.Fatalf("same seed, different interleavings:\n%s\n---\n%s", l1, l1b)
	}
	if out != Idle {
		t.Fatalf("outcome = %v, want Idle (every process exited)", out)
	}
	// Time only moves when all are blocked, and jumps to the earliest wake-up.
	if end != 75 {
		t.Fatalf("final time = %d, want 75 (c's last sleep)", end)
	}
	if !strings.Contains(l1, "40 a 4") || !strings.Contains(l1, "50 c 2") {
		t.Fatalf("unexpected timeline:\n%s", l1)
	}
	orders := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		l, _, _ := runWorld(seed)
		orders[l] = true
	}
	if len(orders) < 2 {
		t.Fatalf("20 seeds gave %d interleaving(s); the seed must choose among runnable processes", len(orders))
	}
}

func TestEventsKillAndHorizon(t *testing.T) {
	s := New(rng.New(1, "sched", -1))
	var log []string
	a := s.Go("a", sleeper(s, &log, "a", 100, 10))
	s.At(35, func() { s.Kill(a); log = append(log, fmt.Sprintf("%d killed a", s.Now())) })
	s.Go("b", sleeper(s, &log, "b", 100, 30))
	out := s.Run(Options{Until: 100})
	if out != Horizon || s.Now() != 100 {
		t.Fatalf("outcome %v at %d, want Horizon at 100", out, s.Now())
	}
	got := strings.Join(log, "|")
	if !strings.Contains(got, "30 a 3|35 killed a") && !strings.Contains(got, "35 killed a") {
		t.Fatalf("kill did not happen at 35: %s", got)
	}
	for _, l := range log {
		var at int64
		var who string
		fmt.Sscanf(l, "%d %s", &at, &who)
		if who == "a" && at > 35 {
			t.Fatalf("a ran after it was killed: %s", got)
		}
	}
	s.Shutdown()
}

func TestStuckWhenAllWaitOnNothing(t *testing.T) {
	s := New(rng.New(1, "sched", -1))
	s.Go("a", func(p *Proc) { p.Block(func() int64 { return Never }) })
	if out := s.Run(Options{Until: 100}); out != Stuck {
		t.Fatalf("outcome %v, want Stuck", out)
	}
	s.Shutdown()
}

func TestWatchdogInterruptsABusyProcess(t *testing.T) {
	s := New(rng.New(1, "sched", -1))
	stop := make(chan struct{})
	p := s.Go("spinner", func(p *Proc) { <-stop })
	p.Interrupt = func() { close(stop) }
	start := time.Now()
	if out := s.Run(Options{Until: 100, Watchdog: 50 * time.Millisecond}); out != Watchdog {
		t.Fatalf("outcome %v, want Watchdog", out)
	}
	if s.Overdue() != p {
		t.Fatalf("Overdue() = %v, want the spinner", s.Overdue())
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("watchdog took %v", el)
	}
}

func BenchmarkStep(b *testing.B) {
	s := New(rng.New(1, "sched", -1))
	n := b.N
	for i := 0; i < 3; i++ {
		s.Go("p", func(p *Proc) {
			for j := 0; j < n/3+1; j++ {
				if p.Yield() {
					return
				}
			}
		})
	}
	b.ResetTimer()
	s.Run(Options{Until: 1})
}

// A held process runs nothing until its hold ends, even a timer that came
// due or a wake-up that another process caused, then carries on.
func TestHoldDelaysEverythingUntilItEnds(t *testing.T) {
	s := New(rng.New(1, "sched", -1))
	var log []string
	msg := int64(Never) // when a's message arrives
	a := s.Go("a", sleeper(s, &log, "a", 4, 10))
	b := s.Go("b", func(p *Proc) {
		log = append(log, fmt.Sprintf("%d b waits", s.Now()))
		if p.Block(func() int64 { return msg }) {
			return
		}
		log = append(log, fmt.Sprintf("%d b got it", s.Now()))
	})
	s.At(15, func() { a.Hold(50); msg = 20 })
	s.At(25, func() {
		if !a.Held() {
			log = append(log, "a not held at 25")
		}
	})
	s.At(5, func() { b.Hold(40) })
	s.Run(Options{Until: 1000})
	got := strings.Join(log, "|")
	want := "0 a 0|0 b waits|10 a 1|50 a 2|40 b got it|60 a 3"
	for _, w := range strings.Split(want, "|") {
		if !strings.Contains(got, w) {
			t.Fatalf("log %q lacks %q", got, w)
		}
	}
	if strings.Contains(got, "not held") || strings.Contains(got, "20 a") || strings.Contains(got, "30 a") {
		t.Fatalf("a ran while held: %s", got)
	}
	s.Shutdown()
}
