package realsoft

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// tidwall/wal cannot reopen a log whose last segment ends in part of an
// entry, which a crash during the append's write or fsync leaves: wal.Open
// says "log corrupt" on every restart, and the server never comes back.
func TestTidwallTornTailLogCorruptForever(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "tidwallwal/seedfall.corrupt.json")
	check := func(res *engine.Result) {
		t.Helper()
		server, client := output(res, "server"), output(res, "client")
		if res.Class != engine.ClassWorkload || !strings.Contains(client, "does not come back after a crash") ||
			strings.Count(server, "wal.Open data/wal: log corrupt") < 2 {
			t.Fatalf("seed %d: %s: %s; want the server failing wal.Open with log corrupt on every start:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
		}
	}
	res := findFailure(t, p, 10)
	check(res)
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)

	shrunk := shrunkFails(t, p, "tidwallwal/shrunk/corrupt.faults.json")
	check(shrunk)
	if n := len(shrunk.Schedule.Faults); n != 1 || shrunk.Schedule.Faults[0].Kind != "crash_io" {
		t.Fatalf("the shrunk schedule has %d faults, want one crash_io: %+v", n, shrunk.Schedule.Faults)
	}
}

// tidwall/wal never fsyncs its directory: under strict_dirs a crash takes
// away a segment file the library created for the next entries, whose
// writes it had fsynced and acknowledged. The server fsyncs the directories
// once after wal.Open (-sync-dir=open), so only the library's own new
// segments are lost.
func TestTidwallStrictDirsLosesNewSegment(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "tidwallwal/seedfall.strictdirs.json")
	check := func(res *engine.Result) {
		t.Helper()
		if res.Class != engine.ClassWorkload || !strings.Contains(output(res, "client"), "the log lost acknowledged entries and reused their indexes") {
			t.Fatalf("seed %d: %s: %s; want acknowledged entries lost:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
		}
	}
	res := findFailure(t, p, 5)
	check(res)
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)

	shrunk := shrunkFails(t, p, "tidwallwal/shrunk/strictdirs.faults.json")
	check(shrunk)
	// One plain crash, after the library started segment 42 (the segments
	// hold 41 entries of 101 bytes): the restart finds entries 1 to 41.
	if !strings.Contains(output(shrunk, "server"), "opened data/wal: entries 1 to 41") {
		t.Fatalf("the shrunk replay did not reopen with segment 1 alone:\n%s", output(shrunk, ""))
	}
}

// With both workarounds in the program (fsync the directory after each
// write; cut a torn tail the library refuses until wal.Open accepts the
// log), every acknowledged entry survives crashes, torn writes, crashes
// during disk operations and strict directories.
func TestTidwallWorkaroundsPass(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "tidwallwal/seedfall.fixed.json")
	faulted, crashIO, repaired := 0, 0, 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
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
		if strings.Contains(output(res, "server"), "cut a torn tail") {
			repaired++
		}
	}
	if faulted == 0 || crashIO == 0 || repaired == 0 {
		t.Fatalf("%d seeds: %d with faults, %d crashes during disk ops, %d with a torn tail repaired; want each above 0", passingSeeds(), faulted, crashIO, repaired)
	}
	t.Logf("%d seeds passed: %d with faults, %d crashes during disk ops, %d with a torn tail repaired", passingSeeds(), faulted, crashIO, repaired)
}
