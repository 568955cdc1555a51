package engine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// diskWorld is a world with one diskio node "d" under the given faults and
// a workload that keeps the run going for about two seconds.
func diskWorld(t *testing.T, faultsJS string, args ...string) *Prepared {
	t.Helper()
	a := `"-wait", "1h"`
	for _, s := range args {
		a += `, "` + s + `"`
	}
	// Free CPU: the tests read exact fsync times.
	return prepare(t, `{"duration": "3s", "cpu": {"ns_per_call": 0}, "faults": {`+faultsJS+`},
		"nodes": [{"name": "d", "pkg": "./diskio", "args": [`+a+`]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`)
}

func kinds(s *faults.Schedule) map[string]int {
	m := map[string]int{}
	for _, f := range s.Faults {
		m[f.Kind]++
	}
	return m
}

// Each operation fault, at probability 1, gives the program exactly what
// the spec's table says, and is recorded with its node, op and path.
func TestOperationFaultsWhatTheProgramSees(t *testing.T) {
	for _, tc := range []struct {
		faults string
		want   []string // lines of d's output
		kind   string
		first  faults.Fault // the first recorded fault, without At
	}{
		{`"write_eio": 1`, []string{"write page 0: 0 EIO", "reread 0 bytes: ok, intact"}, KindWriteEIO,
			faults.Fault{Kind: KindWriteEIO, Node: "d", Op: 1, Path: "log"}},
		{`"write_enospc": 1`, []string{"write page 0: 0 ENOSPC", "reread 0 bytes: ok"}, KindWriteENOSPC,
			faults.Fault{Kind: KindWriteENOSPC, Node: "d", Op: 1, Path: "log"}},
		{`"read_eio": 1`, []string{"found no log", "sync: ok", "reread 0 bytes: EIO"}, KindReadEIO,
			faults.Fault{Kind: KindReadEIO, Node: "d", Op: 1, Path: "log"}},
		{`"fsync_eio": 1`, []string{"write page 0: 4096 ok", "sync: EIO", "reread 16384 bytes: ok, intact"}, KindFsyncEIO,
			faults.Fault{Kind: KindFsyncEIO, Node: "d", Op: 2, Path: "log"}},
		{`"read_corrupt": 1`, []string{"sync: ok", "has 1 wrong bytes"}, KindReadCorrupt,
			faults.Fault{Kind: KindReadCorrupt, Node: "d", Op: 1, Path: "log"}},
		// A lost write is invisible until a crash: reads see the new content.
		{`"lost_write": 1`, []string{"sync: ok", "reread 16384 bytes: ok, intact"}, KindLostWrite,
			faults.Fault{Kind: KindLostWrite, Node: "d", Op: 2, Path: "log"}},
		{`"misdirected_write": 1`, []string{"sync: ok", "reread 16384 bytes: ok, intact"}, KindMisdirectedWrite,
			faults.Fault{Kind: KindMisdirectedWrite, Node: "d", Op: 4, Path: "log", Target: 0, Offset: 4096}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			p := diskWorld(t, tc.faults)
			r := twice(t, p, 1, nil)
			out := output(r, "d")
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if len(r.Schedule.Faults) == 0 {
				t.Fatalf("nothing recorded")
			}
			for _, f := range r.Schedule.Faults {
				if f.Kind != tc.kind {
					t.Fatalf("recorded %s, want only %s", f.Kind, tc.kind)
				}
			}
			got := r.Schedule.Faults[0]
			got.At = 0
			if tc.kind == KindReadCorrupt {
				got.Offset = 0 // the bit is drawn
			}
			if !reflect.DeepEqual(got, tc.first) {
				t.Errorf("first fault = %+v, want %+v", got, tc.first)
			}
			if !strings.Contains(out, "fault "+tc.kind) {
				t.Errorf("the trace does not show the fault:\n%s", out)
			}
			// The schedule replays to the same run.
			if again := twice(t, p, 1, r.Schedule); again.Digest != r.Digest {
				t.Fatalf("replay differs:\n%s\n---\n%s", out, output(again, "d"))
			}
		})
	}
}

func TestDiskBytesShortWriteThenENOSPC(t *testing.T) {
	p := diskWorld(t, `"disk_bytes": 10000`)
	r := twice(t, p, 1, nil)
	out := output(r, "d")
	// Go's File.Write retries a short write and so reports ENOSPC with it.
	for _, w := range []string{"write page 1: 4096 ok", "write page 2: 1808 ENOSPC", "write page 2: 0 ENOSPC", "reread 10000 bytes: ok, intact"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if len(r.Schedule.Faults) != 0 {
		t.Errorf("a full disk is a setting, not a fault: recorded %v", r.Schedule.Faults)
	}
}

func TestDiskLatencyMakesFsyncWait(t *testing.T) {
	p := diskWorld(t, `"disk_latency": ["20ms", "20ms"]`)
	out := output(twice(t, p, 1, nil), "d")
	if n := strings.Count(out, "sync: ok took 20ms"); n != 4 {
		t.Fatalf("want 4 fsyncs of 20ms, got %d:\n%s", n, out)
	}
}

// A node with "faults": false gets no disk fault, whatever the rates.
func TestFaultsFalseKeepsDiskFaultsAway(t *testing.T) {
	p := prepare(t, `{"duration": "2s", "cpu": {"ns_per_call": 0}, "faults": {"write_eio": 1, "fsync_eio": 1, "read_eio": 1, "disk_bytes": 100, "disk_latency": ["1s", "1s"]},
		"nodes": [{"name": "d", "pkg": "./diskio", "args": ["-wait", "1h"], "faults": false}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "5"]}}`)
	r := twice(t, p, 1, nil)
	out := output(r, "d")
	if strings.Count(out, "sync: ok took 0s") != 4 || !strings.Contains(out, "reread 16384 bytes: ok, intact") {
		t.Fatalf("a node without faults saw some:\n%s", out)
	}
	if len(r.Schedule.Faults) != 0 {
		t.Fatalf("recorded %v", r.Schedule.Faults)
	}
}

var foundRE = regexp.MustCompile(`d#2 \| found (.*)`)

// found returns what d's second incarnation found on its disk.
func found(r *Result) string {
	m := foundRE.FindStringSubmatch(output(r, "d"))
	if m == nil {
		return ""
	}
	return m[1]
}

// crashAt1s crashes d at 1s and brings it back at 1.5s.
var crashAt1s = faults.Fault{At: time.Second, Kind: faults.Crash, Node: "d", Until: 1500 * time.Millisecond}

// Lost and misdirected writes show only after a crash, as the spec's
// table says: one page keeps its old content, or lands on another.
func TestLostAndMisdirectedWritesShowAfterACrash(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want string
	}{
		// The page drawn for seed 1 is page 1: it is a hole after the crash.
		{KindLostWrite, "16384 bytes: [page 1 has 4096 wrong bytes (first 0)]"},
		// Page 2 (bytes of 3) landed on page 0 and is a hole itself.
		{KindMisdirectedWrite, "16384 bytes: [page 0 has 4096 wrong bytes (first 3) page 2 has 4096 wrong bytes (first 0)]"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			p := diskWorld(t, ``, "-sync-last")
			sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{Kind: tc.kind, Node: "d", Op: 5}, crashAt1s}}
			r := twice(t, p, 1, sch)
			if got := found(r); got != tc.want {
				t.Fatalf("after the crash found %q, want %q\n%s", got, tc.want, output(r, "d"))
			}
			if k := kinds(r.Schedule); k[tc.kind] != 1 || k[faults.Crash] != 1 {
				t.Fatalf("recorded %v", r.Schedule.Faults)
			}
		})
	}
}

// fsyncgate: after a failed fsync the pages are readable but not durable,
// and the next fsync succeeds without them.
func TestFsyncEIODropsUnsyncedWrites(t *testing.T) {
	p := diskWorld(t, ``)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{Kind: KindFsyncEIO, Node: "d", Op: 4}, crashAt1s}}
	r := twice(t, p, 1, sch)
	out := output(r, "d")
	if strings.Count(out, "sync: EIO") != 1 || !strings.Contains(out, "d#1 | reread 16384 bytes: ok, intact") {
		t.Fatalf("want one failed fsync and an intact page cache:\n%s", out)
	}
	// Page 1 was dropped; pages 2 and 3 were synced after it, so the file
	// has its size and a hole.
	if got, want := found(r), "16384 bytes: [page 1 has 4096 wrong bytes (first 0)]"; got != want {
		t.Fatalf("after the crash found %q, want %q\n%s", got, want, out)
	}
}

// crash_on_io crashes the node during a disk operation; it is recorded
// with its op and restart time, and replays exactly.
func TestCrashOnIO(t *testing.T) {
	p := diskWorld(t, `"crash_on_io": 0.2, "restart_after": ["100ms", "200ms"]`)
	var r *Result
	for seed := uint64(1); seed <= 20; seed++ {
		if r = twice(t, p, seed, nil); kinds(r.Schedule)[KindCrashIO] > 0 {
			break
		}
	}
	f := r.Schedule.Faults[0]
	if f.Kind != KindCrashIO || f.Op == 0 || f.Path != "log" || f.Until < f.At+100*time.Millisecond || f.Until > f.At+200*time.Millisecond {
		t.Fatalf("first fault = %+v", f)
	}
	out := output(r, "d")
	if !strings.Contains(out, "d#2 - start") || !strings.Contains(out, "fault crash_io") {
		t.Fatalf("no crash and restart:\n%s", out)
	}
	if again := twice(t, p, r.Seed, r.Schedule); again.Digest != r.Digest {
		t.Fatal("replay differs")
	}
}

// A crash during the fsync of the log keeps an in-order prefix of its
// pending writes, so part of the pages can survive without any fsync done.
func TestCrashDuringFsyncKeepsAPrefix(t *testing.T) {
	p := diskWorld(t, ``, "-sync-last")
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 12; seed++ {
		sch := &faults.Schedule{Seed: seed, Faults: []faults.Fault{{Kind: KindCrashIO, Node: "d", Op: 5, Until: 100 * time.Millisecond}}}
		r := twice(t, p, seed, sch)
		if k := kinds(r.Schedule); k[KindCrashIO] != 1 {
			t.Fatalf("recorded %v", r.Schedule.Faults)
		}
		got := found(r)
		if strings.Contains(got, "page") && !strings.Contains(got, "(first 0)") {
			t.Fatalf("seed %d: a page holds foreign bytes: %s", seed, got)
		}
		seen[strings.Fields(got + " x")[0]] = true
	}
	if len(seen) < 3 {
		t.Fatalf("12 seeds left only these sizes: %v", seen)
	}
}

// torn_writes keeps an in-order prefix of unsynced writes at a crash;
// corrupt_on_crash flips one bit among what was kept.
func TestTornWritesAndCorruptOnCrash(t *testing.T) {
	for _, tc := range []struct {
		faults  string
		corrupt bool
	}{
		{`"torn_writes": true`, false},
		{`"reorder_writes": true`, false},
		{`"reorder_writes": true, "fs_model": "page_independent", "torn_writes": true`, false},
		{`"torn_writes": true, "corrupt_on_crash": true`, true},
	} {
		t.Run(tc.faults, func(t *testing.T) {
			p := diskWorld(t, tc.faults, "-sync-last", "-pages", "3")
			sizes := map[string]bool{}
			flips := 0
			for seed := uint64(1); seed <= 10; seed++ {
				// Crash before the one fsync: everything is pending.
				sch := &faults.Schedule{Seed: seed, Faults: []faults.Fault{{Kind: KindCrashIO, Node: "d", Op: 4, Until: 100 * time.Millisecond}}}
				r := twice(t, p, seed, sch)
				got := found(r)
				sizes[strings.Fields(got + " x")[0]] = true
				if strings.Contains(output(r, "d"), "corrupt_on_crash: flipped") {
					flips++
					if !strings.Contains(got, "has 1 wrong bytes") {
						t.Fatalf("seed %d: a flip was reported but the file reads %s", seed, got)
					}
				} else if strings.Contains(got, "wrong bytes (first") && !strings.Contains(got, "(first 0)") {
					t.Fatalf("seed %d: foreign bytes without corruption: %s", seed, got)
				}
			}
			if len(sizes) < 2 {
				t.Errorf("every seed left the same file: %v", sizes)
			}
			if tc.corrupt != (flips > 0) {
				t.Errorf("corrupt_on_crash=%v but %d of 10 crashes flipped a bit", tc.corrupt, flips)
			}
		})
	}
}

func TestBitrotFlipsDurableData(t *testing.T) {
	p := diskWorld(t, `"bitrot_per_sec": 3`, "-reads", "1")
	var r *Result
	for seed := uint64(1); seed <= 10; seed++ {
		r = twice(t, p, seed, nil)
		if kinds(r.Schedule)[KindBitrot] > 0 {
			break
		}
	}
	f := r.Schedule.Faults[0]
	if f.Kind != KindBitrot || f.Path != "log" || f.Until != f.At || f.Op != 0 {
		t.Fatalf("bitrot recorded as %+v", f)
	}
	if again := twice(t, p, r.Seed, r.Schedule); again.Digest != r.Digest {
		t.Fatal("replay differs")
	}
	// The flipped bit shows after a crash.
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 500 * time.Millisecond, Kind: KindBitrot, Node: "d", Until: 500 * time.Millisecond}, crashAt1s}}
	got := found(twice(t, p, 1, sch))
	if !strings.Contains(got, "has 1 wrong bytes") {
		t.Fatalf("after bit rot and a crash found %q", got)
	}
}

func TestSeededDiskIsDurable(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "seed", "sub", "empty"), 0o755)
	os.WriteFile(filepath.Join(dir, "seed", "log"), []byte(strings.Repeat("\x01", 4096)), 0o644)
	os.WriteFile(filepath.Join(dir, "seed", "sub", "x"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "extra"), []byte("e"), 0o644)
	js := `{"duration": "3s", "faults": {"strict_dirs": true},
		"nodes": [{"name": "d", "pkg": "` + mustAbs(t, "testdata/guests/durable") + `", "disk": "` + filepath.Join(dir, "seed") + `",
			"files": {"etc/extra.txt": "` + filepath.Join(dir, "extra") + `"}}],
		"workload": {"name": "c", "pkg": "` + mustAbs(t, "testdata/guests/sleeper") + `", "args": ["-n", "20"]}}`
	p := prepare(t, js)
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{crashAt1s}})
	out := output(r, "d")
	for _, w := range []string{`d#1 | found [etc/extra.txt="e" log=`, `sub/x="x"]`, `d#2 | found [a/synced="x" etc/extra.txt="e" log=`} {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// One schedule holding every disk fault kind replays to the same trace.
func TestReplayEveryDiskFaultKind(t *testing.T) {
	p := diskWorld(t, `"torn_writes": true, "corrupt_on_crash": true`, "-reads", "2", "-pages", "6")
	sch := &faults.Schedule{Seed: 3, Faults: []faults.Fault{
		{Kind: KindWriteEIO, Node: "d", Op: 1},
		{Kind: KindWriteENOSPC, Node: "d", Op: 2},
		{Kind: KindFsyncEIO, Node: "d", Op: 4},
		{Kind: KindLostWrite, Node: "d", Op: 6},
		{Kind: KindMisdirectedWrite, Node: "d", Op: 10},
		{Kind: KindReadEIO, Node: "d", Op: 1},
		{Kind: KindReadCorrupt, Node: "d", Op: 3},
		{At: 800 * time.Millisecond, Kind: KindBitrot, Node: "d", Until: 800 * time.Millisecond},
		crashAt1s,
		{Kind: KindCrashIO, Node: "d", Op: 13, Until: 2 * time.Second},
	}}
	r := twice(t, p, 3, sch)
	got := kinds(r.Schedule)
	for _, k := range []string{KindWriteEIO, KindWriteENOSPC, KindFsyncEIO, KindLostWrite, KindMisdirectedWrite, KindReadEIO, KindReadCorrupt, KindBitrot, faults.Crash, KindCrashIO} {
		if got[k] != 1 {
			t.Errorf("%s applied %d times, want 1", k, got[k])
		}
	}
	if t.Failed() {
		t.Fatalf("schedule %+v\n%s", r.Schedule.Faults, output(r, "d"))
	}
	if again := run(t, p, 3, r.Schedule); again.Digest != r.Digest {
		t.Fatal("replaying the recorded schedule changed the trace")
	}
}

// The disk fault variants of the examples: each broken world fails within
// 50 seeds, with the client catching it; each passing one passes
// passingSeeds (500 in scripts/sweep-examples).
func TestDiskFaultExampleWorlds(t *testing.T) {
	for _, tc := range []struct {
		world string
		fails bool
	}{
		{"kvlog/seedfall.readcorrupt.json", true}, // no checksum: a flipped bit is believed
		{"kvlog/seedfall.checksum.json", true},    // a checksum alone: the record is cut as torn
		{"kvlog/seedfall.reread.json", false},     // a checksum and a re-read
		{"kvlog/seedfall.lostwrite.json", true},
		{"kvlog/seedfall.misdirected.json", true},
		{"kvlog/seedfall.bitrot.json", true},
		{"symswap/seedfall.ext4.json", false},
	} {
		t.Run(tc.world, func(t *testing.T) {
			p := prepareFile(t, "../examples/"+tc.world)
			n := passingSeeds()
			if tc.fails {
				n = 50
			}
			for seed := uint64(1); seed <= n; seed++ {
				r := run(t, p, seed, nil)
				if r.Passed == tc.fails {
					if !tc.fails {
						t.Fatalf("seed %d: %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
					}
					continue
				}
				if !tc.fails {
					continue
				}
				if r.Class != ClassWorkload {
					t.Fatalf("seed %d failed as %s: %s\n%s", seed, r.Class, r.Reason, output(r, ""))
				}
				if again := twice(t, p, seed, r.Schedule); again.Digest != r.Digest {
					t.Fatalf("seed %d: replaying its schedule changed the trace", seed)
				}
				return
			}
			if tc.fails {
				t.Fatalf("no seed of 50 failed")
			}
			if r := run(t, p, 1, nil); len(r.Schedule.Faults) == 0 {
				t.Fatalf("seed 1 saw no fault: the test proves nothing")
			}
		})
	}
}

// StopAt ends a run early and KeepDisks hands its disks over, with what
// faults damaged: what `seedfall inspect -at` shows.
func TestStopAtKeepsDisksWithTheirDamage(t *testing.T) {
	p := diskWorld(t, `"torn_writes": true, "corrupt_on_crash": true`, "-sync-last", "-pages", "3")
	for seed := uint64(1); seed <= 10; seed++ {
		sch := &faults.Schedule{Seed: seed, Faults: []faults.Fault{{Kind: KindCrashIO, Node: "d", Op: 4, Until: time.Second}}}
		res, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: sch, StopAt: 500 * time.Millisecond, KeepDisks: true})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed || !res.Stopped || res.Reason != "stopped at 500ms to inspect" || res.SimNs != int64(500*time.Millisecond) {
			t.Fatalf("verdict %v, stopped %v, %q at %d", res.Passed, res.Stopped, res.Reason, res.SimNs)
		}
		if len(res.Disks) != 2 || res.Disks[0].Node != "d" || res.Disks[1].Node != "c" {
			t.Fatalf("disks %+v", res.Disks)
		}
		if !strings.Contains(output(res, "d"), "corrupt_on_crash: flipped") {
			continue // the crash kept nothing of the file
		}
		for _, f := range res.Disks[0].Disk.Files() {
			if f.Path == "log" && len(f.Damage) == 1 && f.Damage[0].Kind == "corrupt_on_crash" && f.Damage[0].Len == 1 {
				return
			}
		}
		t.Fatalf("seed %d: a flip was reported but the disk shows no damage: %+v", seed, res.Disks[0].Disk.Files())
	}
	t.Fatal("no crash of 10 kept part of the file")
}

// An operation fault is drawn from its own stream keyed by its operation:
// turning another kind off does not move it.
func TestOperationFaultDrawsAreStable(t *testing.T) {
	ops := func(r *Result, kind string) []uint64 {
		var out []uint64
		for _, f := range r.Schedule.Faults {
			if f.Kind == kind {
				out = append(out, f.Op)
			}
		}
		return out
	}
	both := twice(t, diskWorld(t, `"write_eio": 0.3, "fsync_eio": 0.3`, "-pages", "12"), 5, nil)
	alone := twice(t, diskWorld(t, `"write_eio": 0.3`, "-pages", "12"), 5, nil)
	w := ops(both, KindWriteEIO)
	if len(w) == 0 || len(ops(both, KindFsyncEIO)) == 0 {
		t.Fatalf("seed 5 drew %v: want both kinds", both.Schedule.Faults)
	}
	if got := ops(alone, KindWriteEIO); !reflect.DeepEqual(got, w) {
		t.Fatalf("write_eio fired at ops %v with fsync_eio on, %v without", w, got)
	}
}

// A seeded file must be a regular host file: /dev/urandom would be read
// without end.
func TestSeededFileMustBeRegular(t *testing.T) {
	js := `{"duration": "1s",
		"nodes": [{"name": "d", "pkg": "` + mustAbs(t, "testdata/guests/durable") + `", "files": {"junk": "/dev/urandom"}}],
		"workload": {"name": "c", "pkg": "` + mustAbs(t, "testdata/guests/sleeper") + `", "args": ["-n", "1"]}}`
	p := prepare(t, js)
	_, err := p.Run(context.Background(), RunOptions{Seed: 1})
	if err == nil || !strings.Contains(err.Error(), "nodes[0]: files: /dev/urandom: it is a character device, not a regular file (each entry copies a readable regular host file; disk and files hold 1 GiB in all)") {
		t.Fatalf("run with /dev/urandom as a seeded file: %v", err)
	}
}
