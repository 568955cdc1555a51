package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// groupsync's -how fdatasync and msync need compat_overlay; one build
// serves every test.
const groupsyncWorld = `{"faults": {"disk_latency": ["10ms", "10ms"]}, "compat_overlay": true,
	"nodes": [{"name": "d", "pkg": "./groupsync"}],
	"workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "1", "-every", "1s"]}}`

// A goroutine keeps running while another waits on a slow fsync, as on
// Linux: the fsync parks only its own goroutine.
func TestSlowFsyncParksOnlyItsGoroutine(t *testing.T) {
	p := prepare(t, groupsyncWorld)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	out := output(r, "d")
	if !strings.Contains(out, "while the fsync is in flight") || strings.Contains(out, "wrote 0 records") {
		t.Fatalf("nothing ran during the fsync:\n%s", out)
	}
	start, end := lineAt(t, r, "d", "fsync starts"), lineAt(t, r, "d", "fsync returns")
	if d := end - start; d < 10*time.Millisecond || d > 11*time.Millisecond {
		t.Fatalf("the fsync took %v, want its 10ms disk_latency:\n%s", d, out)
	}
}

// The write and its durability are separate moments: a crash while the
// fsync is in flight loses what it would have made durable; a crash after it
// returned keeps that, and not what was written while it ran.
func TestCrashDuringSlowFsyncLosesTheWrite(t *testing.T) {
	p := prepare(t, groupsyncWorld)
	start := lineAt(t, run(t, p, 1, nil), "d", "fsync starts")
	for _, tc := range []struct {
		name  string
		at    time.Duration
		found string
	}{
		{"in flight", start + 5*time.Millisecond, `found ""`},
		{"after it returned", start + 10*time.Millisecond + 500*time.Microsecond, `found "before\n"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: tc.at, Kind: faults.Crash, Node: "d", Until: tc.at + 100*time.Millisecond}}}
			r := twice(t, p, 1, sch)
			out := output(r, "d")
			if !strings.Contains(out, "d#2 | "+tc.found) {
				t.Fatalf("after a crash at %v want the restarted node to find %s:\n%s", tc.at, tc.found, out)
			}
		})
	}
}

// syscall.Fsync called directly, syscall.Fdatasync and msync(MS_SYNC) of
// compat_overlay's shim park only their goroutine as os.File.Sync does,
// and a crash while one is in flight loses the write it would have made
// durable.
func TestEverySlowSyncParksOnlyItsGoroutine(t *testing.T) {
	for _, how := range []string{"syscall", "fdatasync", "msync"} {
		t.Run(how, func(t *testing.T) {
			p := prepare(t, strings.Replace(groupsyncWorld, `"./groupsync"`, `"./groupsync", "args": ["-how", "`+how+`"]`, 1))
			r := twice(t, p, 1, nil)
			out := output(r, "d")
			if !r.Passed || !strings.Contains(out, "while the fsync is in flight") || !strings.Contains(out, "returns at") {
				t.Fatalf("nothing ran during the %s (%s %s):\n%s", how, r.Class, r.Reason, out)
			}
			start, end := lineAt(t, r, "d", "fsync starts"), lineAt(t, r, "d", "fsync returns")
			if d := end - start; d < 10*time.Millisecond || d > 11*time.Millisecond {
				t.Fatalf("the %s took %v, want its 10ms disk_latency:\n%s", how, d, out)
			}
			at := start + 5*time.Millisecond
			sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: at, Kind: faults.Crash, Node: "d", Until: at + 100*time.Millisecond}}}
			if out := output(twice(t, p, 1, sch), "d"); !strings.Contains(out, `d#2 | found ""`) {
				t.Fatalf("a crash while the %s was in flight kept its write:\n%s", how, out)
			}
		})
	}
}

// To seedfall mutate, syscall.Fdatasync and msync(MS_SYNC), parked, are
// fdatasyncs: the fdatasync mutant weakens them, the fsync mutant does not.
func TestParkedFdatasyncIsAnFdatasyncToMutants(t *testing.T) {
	for _, how := range []string{"fdatasync", "msync"} {
		p := prepare(t, strings.Replace(groupsyncWorld, `"./groupsync"`, `"./groupsync", "args": ["-how", "`+how+`"]`, 1))
		at := lineAt(t, run(t, p, 1, nil), "d", "fsync returns") + 500*time.Microsecond
		sch := faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: at, Kind: faults.Crash, Node: "d", Until: at + 100*time.Millisecond}}}
		for _, tc := range []struct {
			mutant, found string
		}{{"", `found "before\n"`}, {"fsync", `found "before\n"`}, {"fdatasync", `found ""`}} {
			m, err := ParseMutant(tc.mutant)
			if tc.mutant == "" {
				m, err = Mutant{}, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			r := runMutant(t, p, 1, m, &sch)
			if out := output(r, "d"); !strings.Contains(out, "d#2 | "+tc.found) {
				t.Errorf("-how %s, mutant %q: want the restarted node to find %s:\n%s", how, tc.mutant, tc.found, out)
			}
		}
	}
}
