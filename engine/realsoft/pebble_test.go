package realsoft

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// pebbleFailure runs seeds 1..limit of a pebblekv world that must fail,
// returns the first failure, and checks that replaying its recorded
// schedule gives the same verdict and digest, twice.
func pebbleFailure(t *testing.T, rel string, limit uint64) (*engine.Prepared, *engine.Result) {
	t.Helper()
	p := prepareFile(t, rel)
	var res *engine.Result
	for seed := uint64(1); seed <= limit && res == nil; seed++ {
		if r := run(t, p, seed, nil); !r.Passed {
			res = r
		}
	}
	if res == nil {
		t.Fatalf("%s: no failure in seeds 1-%d", rel, limit)
	}
	if res.Class != engine.ClassWorkload || !strings.Contains(output(res, ""), "lost acknowledged write") {
		t.Fatalf("seed %d failed with class %q (%s), want a lost acknowledged write:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
	}
	replaysExactly(t, p, res)
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	return p, res
}

// pebblekv -durability=nosync writes with pebble.NoSync and answers OK at
// once: a crash loses writes the client was told were stored.
func TestPebbleNoSyncLosesAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	pebbleFailure(t, "pebblekv/seedfall.json", 5)
}

// Pebble v1.1's Open creates its directory with a bare MkdirAll and never
// fsyncs the parent. Under strict_dirs a crash can then take the whole
// directory, WAL and all, although every write was fsynced (pebble.Sync):
// the restart finds no directory.
func TestPebbleOpenLosesItsUnsyncedDirectory(t *testing.T) {
	t.Parallel()
	_, res := pebbleFailure(t, "pebblekv/seedfall.mkdir.json", 10)
	srv := output(res, "server")
	if n := strings.Count(srv, "no database directory data: creating it"); n < 2 {
		t.Fatalf("seed %d: the directory was created %d times, want a restart that found it gone:\n%s", res.Seed, n, srv)
	}
}

// The fixed twin (pebble.Sync, and the directory's parent fsynced before
// Open) passes under crashes, torn and reordered writeback, crashes during
// disk operations and strict directory semantics. Every start that opens
// the database checks that pebble's LOCK refuses a second flock and reports
// the shim's disk usage; restarts reopen the database, so a crash released
// the lock.
func TestPebbleFixedPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "pebblekv/seedfall.fixed.json")
	faulted, crashIO, restarts := 0, 0, 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
		out := output(res, "server")
		if !res.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Class, res.Reason, output(res, ""))
		}
		if len(res.Schedule.Faults) > 0 {
			faulted++
		}
		for _, f := range res.Schedule.Faults {
			if f.Kind == "crash_io" {
				crashIO++
			}
		}
		opened := strings.Count(out, "pebblekv: opened data, durability sync; disk: ")
		locked := strings.Count(out, "could not lock it, as it should")
		if opened == 0 || locked != opened {
			t.Errorf("seed %d: %d starts opened the database, %d checked the lock:\n%s", seed, opened, locked, out)
		}
		if !strings.Contains(out, "available of 1099511627776") {
			t.Errorf("seed %d: no disk usage of the nominal 1 TiB disk:\n%s", seed, out)
		}
		if opened > 1 {
			restarts++
		}
	}
	if faulted == 0 || crashIO == 0 || restarts == 0 {
		t.Errorf("seeds with faults %d, crashes during disk operations %d, seeds with a reopening restart %d: want each > 0", faulted, crashIO, restarts)
	}
	t.Logf("%d seeds passed: %d with faults, %d crashes during disk operations, %d restarted and reopened", passingSeeds(), faulted, crashIO, restarts)
}

// BenchmarkPebbleWorld reports seeds per second of real time of the fixed
// world, and how much faster than real time it runs.
func BenchmarkPebbleWorld(b *testing.B) { benchWorld(b, "pebblekv/seedfall.fixed.json") }
