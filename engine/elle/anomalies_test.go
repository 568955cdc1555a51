package elle

import (
	"strings"
	"testing"
)

// seq builds a history from a timeline: "+N" invokes transaction N, "-N"
// completes it (ok), each on its own process (N). txns holds them by N.
func seq(txns map[int]string, list bool, timeline string) *History {
	var ops []Op
	for _, ev := range strings.Fields(timeline) {
		n := int(ev[1] - '0')
		o := top(txns[n], list)
		o.Process = int64(n)
		if ev[0] == '+' {
			o = pairOf(o)[0]
		}
		ops = append(ops, o)
	}
	return hist(ops...)
}

// One minimal history per anomaly type: the types reported are exactly
// those Elle would report (with the models given), and the weakest models
// ruled out.
func TestAnomalyTypes(t *testing.T) {
	sss := models("strong-session-serializable")
	for _, c := range []struct {
		name  string
		h     *History
		list  bool
		o     Options
		valid Validity
		types string
		not   string
	}{
		{"G0", hist(laOp("ax1ay1"), laOp("ax2ay2"), laOp("rx12ry21")), true, Options{}, Invalid, "G0", "read-uncommitted"},
		{"G1a", hist(with(laOp("ax1"), 0, Fail), laOp("ax2"), laOp("rx12")), true, Options{}, Invalid, "G1a dirty-update", "read-committed"},
		{"G1b", hist(laOp("ax1ax2"), laOp("rx1"), laOp("ay1"), laOp("ry1")), true, opts(models("read-committed")), Invalid, "G1b", "read-committed"},
		{"G1c", hist(laOp("ax1ry1"), laOp("ax2ay1"), laOp("rx12")), true, Options{}, Invalid, "G1c", "read-committed"},
		{"G-single-item", hist(laOp("ax1ay1"), laOp("ax2ry"), laOp("rx12")), true, Options{}, Invalid, "G-single-item", "consistent-view repeatable-read"},
		{"G-nonadjacent-item", pairs(laOp("ax1"), laOp("rx1ry"), laOp("ay1"), laOp("ry1rx")), true, Options{}, Invalid, "G-nonadjacent-item", "repeatable-read snapshot-isolation"},
		{"G2-item", hist(laOp("rxay1"), laOp("ryax1")), true, Options{}, Invalid, "G2-item", "repeatable-read"},
		{"internal", hist(laOp("ax1rx"), laOp("rx1")), true, Options{}, Invalid, "internal", "read-atomic"},
		{"future-read", hist(laOp("rx1ax1"), laOp("rx1")), true, Options{}, Invalid, "future-read", "read-committed"},
		{"dirty-update", hist(with(laOp("ax1"), 0, Fail), laOp("ax2"), laOp("rx12")), true, opts(models("read-uncommitted"), "dirty-update"), Invalid, "dirty-update", "read-committed"},
		{"duplicate-elements", hist(laOp("ax1"), laOp("rx11")), true, Options{}, Invalid, "duplicate-elements", "read-uncommitted"},
		{"incompatible-order", hist(laOp("ax1"), laOp("ax2"), laOp("rx1"), laOp("rx2")), true, Options{}, Invalid, "incompatible-order", "read-committed"},
		{"lost-update", pairs(laOp("ax0"), laOp("rx0ax1"), laOp("rx0ax2")), true, opts(models("cursor-stability")), Invalid, "lost-update", "cursor-stability update-atomic"},
		{"garbage-read", hist(laOp("ax1"), laOp("rx19"), laOp("rx1")), true, Options{}, Invalid, "garbage-read", "read-committed"},
		{"empty-transaction-graph", hist(laOp("ax1")), true, Options{}, Unknown, "empty-transaction-graph", ""},
		// With process or real-time order.
		{"G0-process", hist(with(laOp("ax1"), 0, OK), with(laOp("ax2"), 0, OK), with(laOp("rx21"), 1, OK)), true, opts(sss), Invalid, "G0-process", "strong-session-read-uncommitted"},
		{"G0-realtime", seq(map[int]string{1: "ax1", 2: "ax2", 3: "rx21"}, true, "+1 -1 +2 -2 +3 -3"), true, Options{}, Invalid, "G0-realtime", "strong-read-uncommitted"},
		{"G1c-process", hist(with(laOp("ry1"), 0, OK), with(laOp("ay1"), 0, OK)), true, opts(sss), Invalid, "G1c-process", "strong-session-read-committed"},
		{"G1c-realtime", seq(map[int]string{1: "ry1", 2: "ay1"}, true, "+1 -1 +2 -2"), true, Options{}, Invalid, "G1c-realtime", "strong-read-committed"},
		{"G-single-item-process", hist(with(laOp("ax1"), 0, OK), with(laOp("ax2"), 1, OK), with(laOp("rx1"), 1, OK), with(laOp("rx12"), 2, OK)), true, opts(sss), Invalid, "G-single-item-process", "strong-session-snapshot-isolation"},
		{"G-single-item-realtime", seq(map[int]string{1: "ax1", 2: "ax2", 3: "rx1", 4: "rx12"}, true, "+1 -1 +2 -2 +3 -3 +4 -4"), true, Options{}, Invalid, "G-single-item-realtime", "strong-snapshot-isolation"},
		{"G-nonadjacent-item-process", hist(with(laOp("rxrz1"), 0, OK), with(laOp("ax1"), 1, OK), with(laOp("rz"), 1, OK), with(laOp("az1"), 2, OK)), true, opts(sss), Invalid, "G-nonadjacent-item-process", "strong-session-snapshot-isolation"},
		{"G-nonadjacent-item-realtime", seq(map[int]string{0: "rxrz1", 1: "ax1", 2: "rz", 3: "az1"}, true, "+3 +0 +1 -1 +2 -2 -3 -0"), true, Options{}, Invalid, "G-nonadjacent-item-realtime", "strong-snapshot-isolation"},
		{"G2-item-process", hist(with(laOp("ay1"), 0, OK), with(laOp("rx"), 0, OK), with(laOp("ax1ry"), 1, OK)), true, opts(sss), Invalid, "G2-item-process", "strong-session-serializable"},
		{"G2-item-realtime", seq(map[int]string{0: "rx", 1: "ax1ry", 2: "ay1"}, true, "+1 +2 -2 +0 -0 -1"), true, Options{}, Invalid, "G2-item-realtime", "strong-serializable"},
		// A search cut short says so, and what the cheap checks still show.
		{"cycle-search-timeout", pairs(laOp("ax1"), laOp("rx1ry"), laOp("ay1"), laOp("ry1rx")), true, Options{CycleSearchBudget: 1}, Invalid, "PL-2.99-cycle-exists PL-SI-cycle-exists cycle-search-timeout", "repeatable-read snapshot-isolation"},
		// rw-register.
		{"rw G0", hist(slices2(pairOf(rwp(0, OK, "wx1wy2")), pairOf(rwp(1, OK, "wx2wy1")), pairOf(rwp(0, OK, "rx2")), pairOf(rwp(1, OK, "ry2")))...), false, Options{SequentialKeys: true}, Invalid, "G0", "read-uncommitted"},
		{"rw G1a", hist(with(rwOp("wx1"), 0, Fail), rwOp("rx1"), rwOp("wy1"), rwOp("ry1")), false, Options{}, Invalid, "G1a", "read-committed"},
		{"rw G1b", hist(rwOp("wx1wx2"), rwOp("rx1"), rwOp("wy1"), rwOp("ry1")), false, Options{}, Invalid, "G1b", "read-committed"},
		{"rw G1c", hist(rwOp("wx1ry1"), rwOp("wy1rx1")), false, Options{}, Invalid, "G1c", "read-committed"},
		{"rw G-single-item", hist(rwOp("rx_ry1"), rwOp("wy1wx2")), false, Options{}, Invalid, "G-single-item", "consistent-view repeatable-read"},
		{"rw G2-item", hist(rwOp("rx_wy1"), rwOp("ry_wx1")), false, Options{}, Invalid, "G2-item", "repeatable-read"},
		{"rw internal", hist(rwOp("wx1rx2"), rwOp("wy1"), rwOp("ry1")), false, Options{}, Invalid, "internal", "read-atomic"},
		{"rw lost-update", pairs(rwOp("rx_wx1"), rwOp("rx_wx2")), false, opts(models("cursor-stability")), Invalid, "lost-update", "cursor-stability update-atomic"},
		{"rw cyclic-versions", pairs(rwOp("wx1"), rwOp("wx2"), rwOp("rx1")), false, Options{SequentialKeys: true}, Invalid, "cyclic-versions", "read-uncommitted"},
		{"rw G-single-item-realtime", seq(map[int]string{1: "rx_", 2: "wx1"}, false, "+2 -2 +1 -1"), false, Options{}, Invalid, "G-single-item-realtime", "strong-snapshot-isolation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r *Result
			if c.list {
				r = mustLA(t, c.h, c.o)
			} else {
				r = mustRW(t, c.h, c.o)
			}
			want(t, r, c.valid, strs(c.types), strs(c.not))
			for _, as := range r.Anomalies {
				for _, a := range as {
					if a.Explanation == "" {
						t.Errorf("%s has no explanation", a.Type)
					}
				}
			}
		})
	}
}

func slices2(ps ...[]Op) []Op {
	var all []Op
	for _, p := range ps {
		all = append(all, p...)
	}
	return all
}
