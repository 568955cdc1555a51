package elle

import (
	"slices"
	"testing"
)

func TestTransactionalModels(t *testing.T) {
	ms := TransactionalModels()
	for _, m := range []string{"strict-serializable", "serializable", "snapshot-isolation", "read-committed", "read-uncommitted", "repeatable-read"} {
		if !slices.Contains(ms, m) {
			t.Errorf("%s is not among the transactional models %v", m, ms)
		}
	}
	for _, m := range []string{"linearizable", "PRAM", "view-serializable", "PL-3"} {
		if slices.Contains(ms, m) {
			t.Errorf("%s, which forbids nothing a check finds or is no friendly name, is among the transactional models", m)
		}
	}
	if !slices.IsSorted(ms) {
		t.Errorf("not sorted: %v", ms)
	}
}
