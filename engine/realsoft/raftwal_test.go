package realsoft

import (
	"regexp"
	"strconv"
	"testing"
)

// hashicorp/raft-wal v0.4.0 builds with compat_overlay (its metadata is a
// bbolt v1.3.6 database; systemd's journal client, which it pulls in, needs
// UnixRights) and keeps every entry StoreLogs acknowledged through crashes,
// crashes during disk operations, torn and reordered writes and strict
// directories.
func TestRaftWalKeepsAcknowledgedEntries(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "raftwal/seedfall.json")
	opened := regexp.MustCompile(`opened: (\d+) entries, (\d+) acknowledged, all intact`)
	checked := 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		r := run(t, p, seed, nil)
		if !r.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
		}
		for _, m := range opened.FindAllStringSubmatch(output(r, "raftwal"), -1) {
			if n, _ := strconv.Atoi(m[2]); n > 0 {
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no restart found acknowledged entries to check: the test proves nothing")
	}
	t.Logf("%d seeds passed, %d restarts checked acknowledged entries", passingSeeds(), checked)
	if r := twice(t, p, 1, nil); len(r.Schedule.Faults) == 0 {
		t.Fatal("seed 1 saw no fault")
	}
}
