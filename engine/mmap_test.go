package engine

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/faults"
)

// The mmapops guest checks, through the seedfall host functions, that a
// shared mapping follows every write, truncate and store, that a private
// one is a copy, flock between open file descriptions, and every error
// case the ABI lists.
func TestMmapOpsGuest(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "m", "pkg": "./mmapops"}}`)
	r := twice(t, p, 1, nil)
	out := output(r, "m")
	for _, l := range r.Lines {
		if strings.HasPrefix(l.Text, "FAIL ") {
			t.Error(l.Text)
		}
	}
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	if !strings.Contains(out, "checks, 0 failed") || strings.Count(out, "| ok ") < 58 {
		t.Fatalf("too few checks reported ok:\n%s", out)
	}
}

func mmapCrashWorld(t *testing.T, faultsJS string) *Prepared {
	t.Helper()
	return prepare(t, `{"duration": "3s", "faults": {`+faultsJS+`},
		"nodes": [{"name": "d", "pkg": "./mmapops", "args": ["-mode", "crash"]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`)
}

var mmapCrashAt1s = &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: time.Second, Kind: faults.Crash, Node: "d", Until: 1500 * time.Millisecond}}}

// A crash loses the stores in a writable mapping that were never synced;
// msync(MS_SYNC) and fsync kept theirs. The exclusive flock the first
// incarnation held is gone with it.
func TestMmapCrashDropsUnsyncedMappedPages(t *testing.T) {
	r := twice(t, mmapCrashWorld(t, ``), 1, mmapCrashAt1s)
	out := output(r, "d")
	for _, want := range []string{
		"d#1 | ready",
		"crash loses 14 dirty mapped pages",
		"d#2 | msync kept true, fsync kept true, unsynced survived []",
		"d#2 | flock after crash: <nil>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

var survivedRE = regexp.MustCompile(`d#2 \| msync kept true, fsync kept true, unsynced survived \[([0-9 ]*)\]`)

// survived returns the offsets of the unsynced pages d#2 found, as the
// guest prints them.
func survived(t *testing.T, r *Result) string {
	t.Helper()
	m := survivedRE.FindStringSubmatch(output(r, "d"))
	if m == nil {
		t.Fatalf("d#2 did not report its pages:\n%s", output(r, "d"))
	}
	return m[1]
}

// wbOffsets lists the pages the schedule's early writebacks at crash op
// name, in the guest's format.
func wbOffsets(s *faults.Schedule, op uint64) string {
	var offs []string
	for _, f := range s.Faults {
		if f.Kind == KindMmapEarlyWriteback && f.Op == op {
			offs = append(offs, fmt.Sprint(f.Offset))
		}
	}
	return strings.Join(offs, " ")
}

// mmap_early_writeback keeps each dirty mapped page with its probability,
// and records each kept page; a replay keeps exactly the pages its faults
// name, also after an edit removes one or shifts them to another crash.
func TestMmapEarlyWriteback(t *testing.T) {
	p := mmapCrashWorld(t, `"crash_per_sec": 1, "restart_after": ["100ms", "200ms"], "mmap_early_writeback": 0.5`)
	r := twice(t, p, 1, nil)
	got := survived(t, r)
	want := wbOffsets(r.Schedule, 1)
	if got != want {
		t.Fatalf("pages that survived the first crash: [%s]; the schedule kept [%s]\n%v", got, want, r.Schedule.Faults)
	}
	n := len(strings.Fields(got))
	t.Logf("the first crash kept pages [%s]", got)
	if n == 0 || n == 14 {
		t.Fatalf("at probability 0.5, %d of 14 pages were kept", n)
	}
	for _, f := range r.Schedule.Faults {
		if f.Kind == KindMmapEarlyWriteback && (f.Node != "d" || f.Path != "pages" || f.Offset%disk.PageSize != 0) {
			t.Errorf("recorded %+v", f)
		}
	}
	if err := faults.Check(r.Schedule, faults.CheckConfig{Programs: []string{"d", "c"}, Duration: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}

	// The recorded schedule replays to the same pages.
	rep := twice(t, p, 1, r.Schedule)
	if s := survived(t, rep); s != got {
		t.Fatalf("replay kept [%s], the run [%s]", s, got)
	}

	// Remove the first early writeback: its page is lost, the others kept.
	first := -1
	for i, f := range r.Schedule.Faults {
		if f.Kind == KindMmapEarlyWriteback {
			first = i
			break
		}
	}
	edited, err := faults.Edit(r.Schedule, faults.Edits{Remove: []int{first + 1}})
	if err != nil {
		t.Fatal(err)
	}
	rep = twice(t, p, 1, edited)
	if s, w := survived(t, rep), strings.Join(strings.Fields(got)[1:], " "); s != w {
		t.Fatalf("after removing the writeback of page %d: kept [%s], want [%s]", r.Schedule.Faults[first].Offset, s, w)
	}

	// Shift every early writeback to the second crash: the first keeps
	// nothing.
	var sh []faults.Shift
	for i, f := range r.Schedule.Faults {
		if f.Kind == KindMmapEarlyWriteback {
			sh = append(sh, faults.Shift{Pos: i + 1, Ops: 1, Count: true})
		}
	}
	edited, err = faults.Edit(r.Schedule, faults.Edits{Shift: sh})
	if err != nil {
		t.Fatal(err)
	}
	if s := survived(t, twice(t, p, 1, edited)); s != "" {
		t.Fatalf("with the writebacks moved to crash #2, the first crash kept [%s]", s)
	}
}

// Without mmap_early_writeback a crash draws nothing for mapped pages and
// records no such fault.
func TestMmapEarlyWritebackOff(t *testing.T) {
	r := twice(t, mmapCrashWorld(t, `"crash_per_sec": 1, "restart_after": ["100ms", "200ms"]`), 1, nil)
	if s := survived(t, r); s != "" {
		t.Fatalf("kept [%s] with mmap_early_writeback 0", s)
	}
	if k := kinds(r.Schedule); k[KindMmapEarlyWriteback] != 0 {
		t.Fatalf("recorded %v", k)
	}
}

// Stores into a writable mapping reach the page cache when the process
// exits, even without munmap or msync: the restarted node reads them.
func TestMmapStoresReachThePageCacheAtExit(t *testing.T) {
	p := prepare(t, `{"supervise": true, "duration": "3s",
		"nodes": [{"name": "d", "pkg": "./mmapops", "args": ["-mode", "exit"]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`)
	r := twice(t, p, 1, nil)
	if out := output(r, "d"); !strings.Contains(out, `d#2 | after exit: "atexit"`) {
		t.Fatalf("the stores did not reach the page cache at exit:\n%s", out)
	}
}

// BenchmarkMmapCoherence is the cost of keeping mappings coherent, per
// MiB written with 4 KiB pwrites into a 64 MiB file: with no mapping, with
// a read-only mapping of the whole file (each write is copied into it),
// and with a writable one (each write also compares the pages it covers
// with the mapping, to take stores in first). The cost follows the bytes
// written, not the mapping's size.
func BenchmarkMmapCoherence(b *testing.B) {
	const fileSize, chunk = 64 << 20, 4 << 10
	for _, mode := range []string{"unmapped", "read-only", "writable"} {
		b.Run(mode, func(b *testing.B) {
			d := disk.New(disk.Options{})
			if err := d.WriteFile("f", make([]byte, fileSize)); err != nil {
				b.Fatal(err)
			}
			h, e := d.Open(d.Root(), "f", true, disk.Read|disk.Write)
			if e != 0 {
				b.Fatal(e)
			}
			mem := make([]byte, fileSize)
			if mode != "unmapped" {
				if _, e := h.Map(0, fileSize, mode == "writable", func() []byte { return mem }); e != 0 {
					b.Fatal(e)
				}
			}
			data := make([]byte, chunk)
			for i := range data {
				data[i] = byte(i)
			}
			b.SetBytes(1 << 20)
			b.ResetTimer()
			off := int64(0)
			for i := 0; i < b.N; i++ {
				for j := 0; j < (1<<20)/chunk; j++ {
					if _, e := h.WriteAt(data, off); e != 0 {
						b.Fatal(e)
					}
					off = (off + chunk) % fileSize
				}
				if i%8 == 7 {
					b.StopTimer()
					if e := h.Sync(); e != 0 { // keep the pending log short
						b.Fatal(e)
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/MiB")
		})
	}
}
