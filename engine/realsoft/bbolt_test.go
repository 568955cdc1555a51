package realsoft

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// bboltkv with db.NoSync and a timed db.Sync acknowledges writes a crash
// loses; with reordered writeback a crash can also keep a meta page whose
// pages never reached the disk, and bbolt panics reading them.
func TestBboltNoSyncLosesAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "bboltkv/seedfall.json")
	res := findFailure(t, p, 10)
	out := output(res, "")
	switch res.Class {
	case engine.ClassWorkload:
		if !strings.Contains(out, "lost acknowledged write") {
			t.Errorf("seed %d failed without a lost write:\n%s", res.Seed, out)
		}
	case engine.ClassPanic:
		if !strings.Contains(out, "go.etcd.io/bbolt") {
			t.Errorf("seed %d panicked outside bbolt:\n%s", res.Seed, out)
		}
	default:
		t.Fatalf("seed %d failed with class %q (%s), want workload or panic", res.Seed, res.Class, res.Reason)
	}
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)
}

// The fixed twin (bbolt's default: every commit fdatasyncs) passes under
// crashes, torn and reordered writeback and crashes during disk operations.
// Every start checks that a second bolt.Open of the file times out on the
// flock, and a node restarted after a crash opens the file again: the crash
// released its lock.
func TestBboltFixedPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "bboltkv/seedfall.fixed.json")
	faulted, crashIO, restarts := 0, 0, 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
		out := output(res, "")
		if !res.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Class, res.Reason, out)
		}
		if len(res.Schedule.Faults) > 0 {
			faulted++
		}
		for _, f := range res.Schedule.Faults {
			if f.Kind == "crash_io" {
				crashIO++
			}
		}
		// A start can crash before it gets there (crash_on_io), but every
		// start that opens the database has checked the lock first.
		opened, checked := strings.Count(out, "server: opened data/kv.db"), strings.Count(out, "timed out on the file lock, as it should")
		if opened == 0 || checked < opened {
			t.Errorf("seed %d: %d starts opened the database, %d checked the lock:\n%s", seed, opened, checked, out)
		}
		if strings.Contains(out, "lock is still held") {
			t.Errorf("seed %d: a restarted server found the lock held:\n%s", seed, out)
		}
		if opened > 1 {
			restarts++
		}
	}
	if faulted == 0 || restarts == 0 {
		t.Errorf("no seed had faults (%d) or a restart that reopened the database (%d)", faulted, restarts)
	}
	t.Logf("%d seeds passed: %d with faults, %d crashes during disk operations, %d restarted and reopened", passingSeeds(), faulted, crashIO, restarts)
}

// BenchmarkBboltFixed reports seeds per second of real time and how much
// faster than real time the world runs.
func BenchmarkBboltFixed(b *testing.B) { benchWorld(b, "bboltkv/seedfall.fixed.json") }
