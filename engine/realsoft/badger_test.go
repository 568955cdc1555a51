package realsoft

import (
	"context"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
)

// badgerFailure runs seeds 1..limit of a badgerkv world that must fail, and
// returns the first failure, which must be acknowledged writes the client
// could not read back.
func badgerFailure(t testing.TB, rel string, limit uint64) (*engine.Prepared, *engine.Result) {
	t.Helper()
	p := prepareFile(t, rel)
	for seed := uint64(1); seed <= limit; seed++ {
		res := run(t, p, seed, nil)
		if res.Passed {
			continue
		}
		out := output(res, "")
		if res.Class != engine.ClassWorkload || !strings.Contains(out, "lost acknowledged write") {
			t.Fatalf("%s seed %d failed with class %q (%s), want lost acknowledged writes:\n%s", rel, seed, res.Class, res.Reason, out)
		}
		t.Logf("%s seed %d: %s: %s", rel, seed, res.Class, res.Reason)
		// The schedule the run recorded replays to the same verdict and
		// trace, twice.
		replaysExactly(t, p, res)
		return p, res
	}
	t.Fatalf("%s: no failure in seeds 1-%d", rel, limit)
	return nil, nil
}

// badgerkv with Badger's default SyncWrites=false answers OK before the
// write's mapped pages are msynced: a crash loses them.
func TestBadgerNoSyncWritesLosesAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	_, res := badgerFailure(t, "badgerkv/seedfall.json", 5)
	crashed := false
	for _, f := range res.Schedule.Faults {
		if f.Kind == "crash" || f.Kind == "crash_io" {
			crashed = true
		}
	}
	if !crashed {
		t.Errorf("seed %d lost writes without a crash: %v", res.Seed, res.Schedule.Faults)
	}
}

// With WithSyncWrites(true) but a ValueThreshold of 1, Badger puts the
// marker that ends each transaction in its memtable log (the commit
// timestamp in decimal) into the value log too, and replaying the memtable
// log after a crash stops at the first marker it cannot parse: every write
// not yet flushed to a table is lost. A bug in Badger, found with the
// application's settings all durable.
func TestBadgerSmallValueThresholdLosesAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	_, res := badgerFailure(t, "badgerkv/seedfall.threshold.json", 5)
	if !strings.Contains(output(res, "server"), "sync commit") {
		t.Errorf("seed %d: the server did not run with SyncWrites:\n%s", res.Seed, output(res, "server"))
	}
}

// Under strict_dirs (a directory entry survives a crash only once its
// directory is fsynced), the fixed server loses acknowledged writes too:
// Badger creates its memtable log (and value log files, and the tables a
// memtable flush writes) without ever fsyncing the directory, so a crash
// can lose the whole file although every write in it was msynced. ext4 and
// XFS persist the entry with the file's own fsync, POSIX does not promise
// it.
func TestBadgerStrictDirsLosesMemtableLog(t *testing.T) {
	t.Parallel()
	badgerFailure(t, "badgerkv/seedfall.strictdirs.json", 5)
}

// The fixed twin (WithSyncWrites(true), records in the value log) passes
// under crashes, torn and reordered writeback, crashes during disk
// operations and early writeback of mapped pages. Every start checks that a
// second badger.Open of the directory fails on the flock the badger shim
// takes, and a restart after a crash reopens the database and replays its
// memtable log.
func TestBadgerFixedPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "badgerkv/seedfall.fixed.json")
	faulted, restarts, kinds := 0, 0, map[string]int{}
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
			kinds[f.Kind]++
		}
		if !strings.Contains(out, "! server: a second badger.Open failed on the directory lock, as it should") {
			t.Errorf("seed %d: no start reported the lock check:\n%s", seed, out)
		}
		if strings.Contains(out, "server#2 ! server: opened data/badger with") && !strings.Contains(out, "server#2 ! server: opened data/badger with 0 keys") {
			restarts++
		}
	}
	if faulted == 0 || restarts == 0 {
		t.Errorf("no seed had faults (%d) or a restart that found keys in the database (%d)", faulted, restarts)
	}
	t.Logf("%d seeds passed: %d with faults (%v), %d restarted and found their keys", passingSeeds(), faulted, kinds, restarts)
}

// Badger's default sizes map 2 GiB per value log file: the ristretto shim
// refuses the mapping with a message that says what to change, rather than
// letting the program run out of memory.
func TestBadgerDefaultSizesSayWhatToChange(t *testing.T) {
	t.Parallel()
	w, err := world.Load("../../examples/real/badgerkv/seedfall.fixed.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Nodes[0].Args = append(w.Nodes[0].Args, "-sizes", "badger")
	w.Supervise = false
	p, err := testEngine(t).Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, p, 1, nil)
	out := output(res, "server")
	if res.Passed || !strings.Contains(out, "seedfall compat_overlay: cannot map 2147483646 bytes of data/badger/000001.vlog") ||
		!strings.Contains(out, "WithValueLogFileSize") {
		t.Fatalf("passed %v, %s: %s; server:\n%s", res.Passed, res.Class, res.Reason, out)
	}
}

// BenchmarkBadgerFixed reports seeds per second of real time and how much
// faster than real time the world runs.
func BenchmarkBadgerFixed(b *testing.B) { benchWorld(b, "badgerkv/seedfall.fixed.json") }
