package realsoft

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// raftkv acknowledging a PUT once raft.Apply has queued it, not when its
// future returns, loses writes when the leader crashes or is cut off before
// the entry commits.
func TestRaftEnqueueAckLosesWrites(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "raftkv/seedfall.json")
	res := findFailure(t, p, 10)
	out := output(res, "client")
	if res.Class != engine.ClassWorkload || !(strings.Contains(out, "lost acknowledged write") || strings.Contains(out, "FAIL: stale or lost")) {
		t.Fatalf("seed %d: %s: %s, want the client to find a lost write:\n%s", res.Seed, res.Class, res.Reason, out)
	}
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)
}

// raft-boltdb with NoSync keeps the log in the page cache: a crash loses
// entries the node had voted on or acknowledged, and with reordered
// writeback leaves bbolt pages that no longer decode.
func TestRaftBoltNoSyncFound(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "raftkv/seedfall.nosync.json")
	res := findFailure(t, p, 6)
	if res.Class != engine.ClassWorkload && res.Class != engine.ClassPanic {
		t.Fatalf("seed %d: %s: %s, want a lost write or a panic", res.Seed, res.Class, res.Reason)
	}
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
}

// The fixed twin passes under crashes, torn and reordered writeback, crashes
// during disk operations and partitions, with leaders changing, nodes
// restarting from raft-boltdb and snapshots.
func TestRaftFixedPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "raftkv/seedfall.fixed.json")
	kinds := map[string]int{}
	elections := 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
		if !res.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Class, res.Reason, output(res, ""))
		}
		for _, f := range res.Schedule.Faults {
			kinds[f.Kind]++
		}
		elections += strings.Count(output(res, ""), ": leader (term ")
		if out := output(res, "client"); !strings.Contains(out, "read back intact") {
			t.Errorf("seed %d: the client did not finish its check:\n%s", seed, out)
		}
	}
	for _, k := range []string{"crash", "partition"} {
		if kinds[k] == 0 {
			t.Errorf("no %s in %d seeds: %v", k, passingSeeds(), kinds)
		}
	}
	if elections <= int(passingSeeds()) {
		t.Errorf("%d elections in %d seeds: leaders never changed", elections, passingSeeds())
	}
	t.Logf("%d seeds passed: faults %v, %d elections won", passingSeeds(), kinds, elections)
}
