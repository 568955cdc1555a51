package wasi

import (
	"fmt"
	"slices"
	"testing"

	"github.com/seedfall/seedfall/engine/internal/rng"
)

// poll_oneoff reports what is ready in an order drawn from Process.Order:
// the same stream gives the same order, other seeds other orders, never
// always the order of the subscriptions, and every ready event once.
func TestPollOneoffOrderIsSeeded(t *testing.T) {
	h := newHostile(t, 1)
	// Four subscriptions that are ready at once: a zero-timeout clock and
	// stdio, which never blocks.
	subs := make([]byte, 4*48)
	for i, s := range []struct {
		tag uint8
		fd  uint32
	}{{eventClock, 0}, {eventFdRead, 0}, {eventFdWrite, 1}, {eventFdWrite, 2}} {
		b := subs[i*48:]
		le.PutUint64(b, uint64(100+i)) // userdata
		b[8] = s.tag
		le.PutUint32(b[16:], s.fd)
	}
	h.m.Memory().Write(0, subs)
	order := func(seed uint64) []uint64 {
		h.p.Order = rng.New(seed, "poll", 0)
		if en := h.callUp(t, "wasi_snapshot_preview1.poll_oneoff", 0, 4096, 4, 8192); en != 0 {
			t.Fatalf("seed %d: errno %d", seed, en)
		}
		n, _ := h.m.Memory().ReadUint32Le(8192)
		var got []uint64
		for i := range n {
			u, _ := h.m.Memory().ReadUint64Le(4096 + i*32)
			got = append(got, u)
		}
		return got
	}
	subOrder := []uint64{100, 101, 102, 103}
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		got := order(seed)
		if again := order(seed); !slices.Equal(got, again) {
			t.Fatalf("seed %d: order %v, then %v", seed, got, again)
		}
		if sorted := slices.Sorted(slices.Values(got)); !slices.Equal(sorted, subOrder) {
			t.Fatalf("seed %d: events %v, want each of %v once", seed, got, subOrder)
		}
		seen[fmt.Sprint(got)] = true
	}
	if len(seen) < 5 { // 24 orders are possible
		t.Errorf("20 seeds gave %d orders of 4 ready events: the order does not come from the seed", len(seen))
	}
}
