package elle

import (
	"slices"
	"testing"
)

// These come from Elle's test/elle/consistency_model_test.clj.

// all-anomalies-test: the anomalies in implication and severity order.
func TestElleAnomalyOrder(t *testing.T) {
	want := strs(`G-MSR G-SI G-SIb G-cursor G-monotonic G-single-item G-update G0 G1b GSIa
		PL-1-cycle-exists PL-2-cycle-exists PL-2.99-cycle-exists PL-3-cycle-exists PL-SI-cycle-exists PL-SS-cycle-exists
		cyclic-versions dirty-update duplicate-elements future-read incompatible-order internal lost-update predicate-read-miss
		strong-PL-1-cycle-exists strong-PL-2-cycle-exists strong-session-PL-1-cycle-exists strong-session-PL-2-cycle-exists
		strong-session-serializable-cycle-exists strong-session-snapshot-isolation-cycle-exists strong-snapshot-isolation-cycle-exists
		G-nonadjacent-item G-single-item-process G1a G1c write-skew
		G-nonadjacent-item-process G-single G-single-item-realtime G1 G2-item
		G-nonadjacent G-nonadjacent-item-realtime GSIb G2 GSI
		G0-process G1c-process G-single-process G1-process G2-item-process G-nonadjacent-process G2-process
		G0-realtime G1c-realtime G-single-realtime G1-realtime G2-item-realtime G-nonadjacent-realtime G2-realtime`)
	var got []string
	for a := range anomalyDepth {
		if a != "garbage-read" { // not Elle's
			got = append(got, a)
		}
	}
	slices.SortFunc(got, compareAnomalies)
	if !slices.Equal(got, want) {
		t.Errorf("order\n%v\nwant Elle's\n%v", got, want)
	}
}

// weakest-models-test and strongest-models-test.
func TestElleWeakestStrongestModels(t *testing.T) {
	set := func(ms ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range ms {
			m[canonicalModel(x)] = true
		}
		return m
	}
	for _, c := range []struct {
		in             []string
		weak, strongst []string
	}{
		{nil, nil, nil},
		{strs("serializable strict-serializable"), strs("serializable"), strs("strong-serializable")},
		{strs("repeatable-read read-committed sequential read-your-writes"), strs("read-committed read-your-writes"), strs("repeatable-read sequential")},
		{strs("serializable read-atomic"), strs("read-atomic"), strs("serializable")},
	} {
		if got := friendlySorted(extremeModels(modelGraph.out, set(c.in...))); !slices.Equal(got, c.weak) {
			t.Errorf("weakest of %v: %v, want %v", c.in, got, c.weak)
		}
		if got := friendlySorted(extremeModels(modelGraph.in, set(c.in...))); !slices.Equal(got, c.strongst) {
			t.Errorf("strongest of %v: %v, want %v", c.in, got, c.strongst)
		}
	}
}

// anomalies-prohibited-by-test.
func TestElleAnomaliesProhibitedBy(t *testing.T) {
	got := sortedKeys(anomaliesProhibitedBy(strs("read-committed")))
	got = slices.DeleteFunc(got, func(a string) bool { return a == "garbage-read" })
	want := strs("G0 G1 G1a G1b G1c PL-1-cycle-exists PL-2-cycle-exists cyclic-versions dirty-update duplicate-elements future-read incompatible-order")
	if !slices.Equal(got, want) {
		t.Errorf("read-committed prohibits %v, want %v", got, want)
	}
	if err := ValidateModels(strs("stricct-snappshot-isolation")); err == nil {
		t.Error("an unknown model is accepted")
	}
}

// anomaly->impossible-models-test.
func TestElleImpossibleModels(t *testing.T) {
	for _, c := range []struct {
		anomaly string
		want    []string
	}{
		{"G-single", strs("consistent-view forward-consistent-view serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation update-serializable")},
		{"G-SI", strs("serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation")},
		{"dirty-update", strs(`causal-cerone consistent-view cursor-stability forward-consistent-view monotonic-atomic-view monotonic-snapshot-read
			monotonic-view parallel-snapshot-isolation prefix read-atomic read-committed repeatable-read serializable snapshot-isolation
			strong-read-committed strong-serializable strong-session-read-committed strong-session-serializable
			strong-session-snapshot-isolation strong-snapshot-isolation update-atomic update-serializable`)},
		{"internal", strs("causal-cerone parallel-snapshot-isolation prefix read-atomic serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation update-atomic")},
	} {
		var got []string
		for m := range impossibleModels([]string{c.anomaly}) {
			got = append(got, friendlyModel(m))
		}
		if got = friendlySorted(got); !slices.Equal(got, c.want) {
			t.Errorf("%s rules out %v, want %v", c.anomaly, got, c.want)
		}
	}
}

// friendly-boundary-test.
func TestElleBoundary(t *testing.T) {
	for _, c := range []struct {
		anomalies    []string
		not, alsoNot []string
	}{
		{nil, nil, nil},
		{strs("internal"), strs("read-atomic"), strs("causal-cerone parallel-snapshot-isolation prefix serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation update-atomic")},
		{strs("G1a"), strs("read-committed"), strs(`causal-cerone consistent-view cursor-stability forward-consistent-view monotonic-atomic-view
			monotonic-snapshot-read monotonic-view parallel-snapshot-isolation prefix read-atomic repeatable-read serializable
			snapshot-isolation strong-read-committed strong-serializable strong-session-read-committed strong-session-serializable
			strong-session-snapshot-isolation strong-snapshot-isolation update-atomic update-serializable`)},
		{strs("G-single"), strs("consistent-view"), strs("forward-consistent-view serializable snapshot-isolation strong-serializable strong-session-serializable strong-session-snapshot-isolation strong-snapshot-isolation update-serializable")},
		{strs("cyclic-versions"), strs("read-uncommitted"), strs(`causal-cerone consistent-view cursor-stability forward-consistent-view
			monotonic-atomic-view monotonic-snapshot-read monotonic-view parallel-snapshot-isolation prefix read-atomic read-committed
			repeatable-read serializable snapshot-isolation strong-read-committed strong-read-uncommitted strong-serializable
			strong-session-read-committed strong-session-read-uncommitted strong-session-serializable strong-session-snapshot-isolation
			strong-snapshot-isolation update-atomic update-serializable`)},
	} {
		not, also := boundary(c.anomalies)
		if !slices.Equal(not, c.not) || !slices.Equal(also, c.alsoNot) {
			t.Errorf("%v: not %v, also-not %v; want %v, %v", c.anomalies, not, also, c.not, c.alsoNot)
		}
	}
}

func TestStrongestPossible(t *testing.T) {
	if got := strongestPossible(strs("strict-serializable"), nil); !slices.Equal(got, strs("strict-serializable")) {
		t.Errorf("nothing found: %v", got)
	}
	// A G2-item rules out repeatable read and above, not snapshot
	// isolation (its strongest form checked is still possible), nor Adya's
	// update serializability.
	if got := strongestPossible(strs("strict-serializable"), strs("G2-item")); !slices.Equal(got, strs("strong-snapshot-isolation update-serializable")) {
		t.Errorf("G2-item: %v", got)
	}
	if got := strongestPossible(strs("read-committed"), strs("G1c")); !slices.Equal(got, strs("read-uncommitted")) {
		t.Errorf("G1c: %v", got)
	}
}
