package realsoft

import (
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// The worlds of examples/real/etcdraft: three members of a key-value store
// on go.etcd.io/raft/v3 v3.7.0 with etcd's own WAL and snapshots
// (go.etcd.io/etcd/server/v3 v3.7.3), which builds for wasip1 with the
// generic compat_overlay shim alone (flock for fileutil's lock files).

const raftLost = "Was the raft log corrupted, truncated, or lost?"

// etcdLostLog checks that a failure is a log that raft or the checker saw
// lost: raft's panic on a commit index past the end of a member's log, or
// an acknowledged write missing, and that its schedule replays it exactly.
func etcdLostLog(t *testing.T, p *engine.Prepared, res *engine.Result) {
	t.Helper()
	out := output(res, "")
	switch res.Class {
	case engine.ClassPanic:
		if !strings.Contains(out, raftLost) {
			t.Fatalf("seed %d panicked, but not on a lost raft log:\n%s", res.Seed, out)
		}
	case engine.ClassWorkload:
		if !strings.Contains(out, "lost acknowledged write") {
			t.Fatalf("seed %d: the checker failed without a lost write:\n%s", res.Seed, out)
		}
	default:
		t.Fatalf("seed %d failed with class %q (%s), want panic or workload", res.Seed, res.Class, res.Reason)
	}
	replaysExactly(t, p, res)
	t.Logf("seed %d: %s: %s (%d faults; replayed twice, same digest)", res.Seed, res.Class, res.Reason, len(res.Schedule.Faults))
}

// Sending rd.Messages before wal.Save: a follower acknowledges entries it
// loses in a crash during the fsync, the leader counts them, and the
// restarted follower panics on a commit index past its log.
func TestEtcdSendBeforeSaveFound(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "etcdraft/seedfall.json")
	etcdLostLog(t, p, findFailure(t, p, 10))
}

// Without an fsync of the WAL's directory after wal.Create (etcd leaves it
// to ext4's journal), strict_dirs loses a member's whole WAL: it bootstraps
// anew and raft finds its log gone.
func TestEtcdNoDirSyncFound(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "etcdraft/seedfall.nodirsync.json")
	res := findFailure(t, p, 10)
	etcdLostLog(t, p, res)
	// A member that had saved entries started again from nothing.
	if !regexp.MustCompile(`n\d#([2-9]|\d\d+) ! node\d: replayed snapshot at 0, hard state term 0 vote 0 commit 0, 0 entries`).MatchString(output(res, "")) {
		t.Errorf("seed %d: no restart found its WAL empty", res.Seed)
	}
}

// The fixed twin passes under crashes, reordered writeback, strict
// directories, slow fsyncs and partitions; the seeds exercise what etcd's
// WAL does beyond appending: it restarts from snapshots, cuts segments,
// purges old ones it has unlocked, and holds the flock of its tail.
func TestEtcdFixedPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "etcdraft/seedfall.fixed.json")
	fromSnap := regexp.MustCompile(`replayed snapshot at [1-9]`)
	var faulted, restarts, snaps, cuts, purged int
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
		out := output(res, "")
		if !res.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Class, res.Reason, out)
		}
		if len(res.Schedule.Faults) > 0 {
			faulted++
		}
		starts := strings.Count(out, ": replayed snapshot at ")
		restarts += starts - 3
		snaps += len(fromSnap.FindAllString(out, -1))
		cuts += strings.Count(out, "created a new WAL segment")
		purged += strings.Count(out, "purged")
		if locked := strings.Count(out, "is locked by the WAL, as it should be"); locked < starts {
			t.Errorf("seed %d: %d starts, %d checked the WAL's flock", seed, starts, locked)
		}
		if !strings.Contains(out, "read back intact") {
			t.Errorf("seed %d passed without the checker's verdict:\n%s", seed, out)
		}
	}
	if faulted == 0 || restarts == 0 || snaps == 0 || cuts == 0 || purged == 0 {
		t.Errorf("seeds with faults %d, restarts %d, restarts from a snapshot %d, WAL cuts %d, files purged %d: want all > 0",
			faulted, restarts, snaps, cuts, purged)
	}
	t.Logf("%d seeds passed: %d with faults, %d restarts (%d from a snapshot), %d WAL cuts, %d files purged",
		passingSeeds(), faulted, restarts, snaps, cuts, purged)
}

// BenchmarkEtcdFixed reports seeds per second of real time and how much
// faster than real time the world runs.
func BenchmarkEtcdFixed(b *testing.B) { benchWorld(b, "etcdraft/seedfall.fixed.json") }
