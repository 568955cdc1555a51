package disk

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

type crashCase struct {
	name   string
	strict bool
	steps  func(t *testing.T, d *Disk)
	want   string // tree after the crash
}

func runCrashCases(t *testing.T, cases []crashCase) {
	t.Helper()
	for _, c := range cases {
		mode := "lenient"
		if c.strict {
			mode = "strict"
		}
		t.Run(mode+"/"+c.name, func(t *testing.T) {
			d := newDisk(c.strict)
			c.steps(t, d)
			d.Crash()
			if got := tree(d); got != c.want {
				t.Errorf("after crash:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func truncate(t *testing.T, d *Disk, path string, size int64, sync bool) {
	t.Helper()
	h := open(t, d, path, Write)
	defer h.Close()
	ok(t, "truncate", h.Truncate(size))
	if sync {
		ok(t, "sync", h.Sync())
	}
}

func TestCrashFileData(t *testing.T) {
	var cases []crashCase
	// File data follows the same rules with or without strict dirs.
	for _, strict := range []bool{false, true} {
		cases = append(cases, []crashCase{
			{"unsynced overwrite is lost", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "old")
				h := open(t, d, "f", Write)
				write(t, h, "new", 0)
			}, "f=old"},
			{"synced overwrite is kept", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "old")
				h := open(t, d, "f", Write)
				write(t, h, "new", 0)
				ok(t, "sync", h.Sync())
			}, "f=new"},
			{"unsynced append is lost", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "abc")
				appendTo(t, d, "f", "def")
			}, "f=abc"},
			{"only writes before the fsync survive", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "")
				h := open(t, d, "f", Write)
				write(t, h, "1", 0)
				ok(t, "sync", h.Sync())
				write(t, h, "2", 1)
			}, "f=1"},
			{"unsynced truncate is lost", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "hello world")
				truncate(t, d, "f", 5, false)
			}, "f=hello world"},
			{"synced truncate is kept", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "hello world")
				truncate(t, d, "f", 5, true)
			}, "f=hello"},
			{"O_TRUNC then write, synced", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "hello world")
				h := open(t, d, "f", Write|Trunc)
				write(t, h, "x", 0)
				ok(t, "sync", h.Sync())
			}, "f=x"},
			{"O_TRUNC without fsync is lost", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "hello")
				open(t, d, "f", Write|Trunc).Close()
			}, "f=hello"},
			{"synced grow, unsynced shrink", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "ab")
				truncate(t, d, "f", 6, true)
				truncate(t, d, "f", 1, false)
			}, "f=ab\x00\x00\x00\x00"},
			{"shrink then grow reads zeros, not the old bytes", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "f", "secret")
				truncate(t, d, "f", 2, false)
				truncate(t, d, "f", 6, true)
			}, "f=se\x00\x00\x00\x00"},
			{"fsync through one hard link makes the file durable", strict, func(t *testing.T, d *Disk) {
				seed(t, d, "a", "one")
				ok(t, "link", d.Link(d.Root(), "a", false, d.Root(), "b"))
				fsync(t, d, ".")
				appendTo(t, d, "b", "+two")
				fsync(t, d, "a")
			}, lines("a=one+two", "b=one+two")},
			{"an unlinked open file is gone", strict, func(t *testing.T, d *Disk) {
				create(t, d, "x", "data")
				fsync(t, d, "x")
				fsync(t, d, ".")
				h := open(t, d, "x", Write)
				ok(t, "unlink", d.Unlink(d.Root(), "x"))
				fsync(t, d, ".")
				write(t, h, "more", 4)
				ok(t, "sync", h.Sync())
			}, ""},
		}...)
	}
	runCrashCases(t, cases)
}

func TestCrashLenientDirs(t *testing.T) {
	runCrashCases(t, []crashCase{
		{"a new file keeps its entry but not unsynced data", false, func(t *testing.T, d *Disk) {
			create(t, d, "n", "data")
		}, "n="},
		{"a new file with fsync", false, func(t *testing.T, d *Disk) {
			create(t, d, "n", "data")
			fsync(t, d, "n")
		}, "n=data"},
		{"entries are durable at once", false, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "a")
			seed(t, d, "c", "c")
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
			ok(t, "mkdir", d.Mkdir(d.Root(), "d/e"))
			create(t, d, "d/e/f", "f")
			fsync(t, d, "d/e/f")
			ok(t, "symlink", d.Symlink("a", d.Root(), "l"))
			ok(t, "rename", d.Rename(d.Root(), "a", d.Root(), "b"))
			ok(t, "unlink", d.Unlink(d.Root(), "c"))
			ok(t, "link", d.Link(d.Root(), "b", false, d.Root(), "d/b2"))
		}, lines("b=a", "d/", "d/b2=a", "d/e/", "d/e/f=f", "l -> a")},
		{"rmdir is durable at once", false, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
			ok(t, "rmdir", d.Rmdir(d.Root(), "d"))
		}, ""},
	})
}

func TestCrashStrictDirs(t *testing.T) {
	runCrashCases(t, []crashCase{
		{"created and fsynced, parent not fsynced: gone", true, func(t *testing.T, d *Disk) {
			create(t, d, "f", "data")
			fsync(t, d, "f")
		}, ""},
		{"created, fsynced and parent fsynced: kept", true, func(t *testing.T, d *Disk) {
			create(t, d, "f", "data")
			fsync(t, d, "f")
			fsync(t, d, ".")
		}, "f=data"},
		{"parent fsynced but not the data: empty", true, func(t *testing.T, d *Disk) {
			create(t, d, "f", "data")
			fsync(t, d, ".")
		}, "f="},
		{"rename without directory fsync reverts", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "old")
			seed(t, d, "tmp", "new")
			ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
		}, lines("f=old", "tmp=new")},
		{"rename with directory fsync", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "old")
			seed(t, d, "tmp", "new")
			ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
			fsync(t, d, ".")
		}, "f=new"},
		{"write tmp, fsync, rename, fsync dir", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "old")
			create(t, d, "tmp", "new")
			fsync(t, d, "tmp")
			ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
			fsync(t, d, ".")
		}, "f=new"},
		{"write tmp, fsync, rename, no dir fsync", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "old")
			create(t, d, "tmp", "new")
			fsync(t, d, "tmp")
			ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
		}, "f=old"},
		{"unlink without directory fsync reverts", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "data")
			ok(t, "unlink", d.Unlink(d.Root(), "f"))
		}, "f=data"},
		{"unlink with directory fsync", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "data")
			ok(t, "unlink", d.Unlink(d.Root(), "f"))
			fsync(t, d, ".")
		}, ""},
		{"mkdir without parent fsync", true, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
		}, ""},
		{"mkdir with parent fsync", true, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
			fsync(t, d, ".")
		}, "d/"},
		{"rmdir without parent fsync reverts", true, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
			fsync(t, d, ".")
			ok(t, "rmdir", d.Rmdir(d.Root(), "d"))
		}, "d/"},
		{"a deep new subtree with only leaf syncs vanishes", true, func(t *testing.T, d *Disk) {
			for _, p := range []string{"a", "a/b", "a/b/c"} {
				ok(t, "mkdir", d.Mkdir(d.Root(), p))
			}
			create(t, d, "a/b/c/f", "data")
			fsync(t, d, "a/b/c/f")
			fsync(t, d, "a/b/c")
		}, ""},
		{"a deep new subtree synced at every level", true, func(t *testing.T, d *Disk) {
			for _, p := range []string{"a", "a/b", "a/b/c"} {
				ok(t, "mkdir", d.Mkdir(d.Root(), p))
			}
			create(t, d, "a/b/c/f", "data")
			for _, p := range []string{"a/b/c/f", "a/b/c", "a/b", "a", "."} {
				fsync(t, d, p)
			}
		}, lines("a/", "a/b/", "a/b/c/", "a/b/c/f=data")},
		{"a deep subtree with one level unsynced keeps what is above it", true, func(t *testing.T, d *Disk) {
			for _, p := range []string{"a", "a/b", "a/b/c"} {
				ok(t, "mkdir", d.Mkdir(d.Root(), p))
			}
			create(t, d, "a/b/c/f", "data")
			for _, p := range []string{"a/b/c/f", "a/b/c", "a", "."} {
				fsync(t, d, p)
			}
		}, lines("a/", "a/b/")}, // a/b's entry for c was never fsynced
		{"symlink without parent fsync", true, func(t *testing.T, d *Disk) {
			ok(t, "symlink", d.Symlink("x", d.Root(), "l"))
		}, ""},
		{"symlink with parent fsync", true, func(t *testing.T, d *Disk) {
			ok(t, "symlink", d.Symlink("x", d.Root(), "l"))
			fsync(t, d, ".")
		}, "l -> x"},
		{"hard link without directory fsync", true, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "data")
			ok(t, "link", d.Link(d.Root(), "a", false, d.Root(), "b"))
		}, "a=data"},
		{"hard link with directory fsync", true, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "data")
			ok(t, "link", d.Link(d.Root(), "a", false, d.Root(), "b"))
			fsync(t, d, ".")
		}, lines("a=data", "b=data")},
		{"fsync of an unrelated directory commits nothing here", true, func(t *testing.T, d *Disk) {
			seed(t, d, "d1/keep", "")
			seed(t, d, "d2/keep", "")
			create(t, d, "d1/f", "x")
			fsync(t, d, "d1/f")
			create(t, d, "d2/g", "y")
			fsync(t, d, "d2")
		}, lines("d1/", "d1/keep=", "d2/", "d2/g=", "d2/keep=")},
		{"a rename across directories is atomic: fsync of the target", true, func(t *testing.T, d *Disk) {
			seed(t, d, "x/f", "f")
			seed(t, d, "y/keep", "")
			ok(t, "rename", d.Rename(d.Root(), "x/f", d.Root(), "y/f"))
			fsync(t, d, "y")
		}, lines("x/", "y/", "y/f=f", "y/keep=")},
		{"a rename across directories is atomic: fsync of the source", true, func(t *testing.T, d *Disk) {
			seed(t, d, "x/f", "f")
			seed(t, d, "y/keep", "")
			ok(t, "rename", d.Rename(d.Root(), "x/f", d.Root(), "y/f"))
			fsync(t, d, "x")
		}, lines("x/", "y/", "y/f=f", "y/keep=")},
		{"chained renames commit together", true, func(t *testing.T, d *Disk) {
			seed(t, d, "a/x", "x")
			seed(t, d, "b/keep", "")
			seed(t, d, "c/keep", "")
			ok(t, "rename", d.Rename(d.Root(), "a/x", d.Root(), "b/x"))
			ok(t, "rename", d.Rename(d.Root(), "b/x", d.Root(), "c/x"))
			fsync(t, d, "c") // the second rename needs the first: one file, one name
		}, lines("a/", "b/", "b/keep=", "c/", "c/keep=", "c/x=x")},
		{"a moved directory keeps its content", true, func(t *testing.T, d *Disk) {
			seed(t, d, "a/sub/f", "f")
			seed(t, d, "b/keep", "")
			ok(t, "rename", d.Rename(d.Root(), "a/sub", d.Root(), "b/sub"))
			fsync(t, d, "b")
		}, lines("a/", "b/", "b/keep=", "b/sub/", "b/sub/f=f")},
		{"create then unlink, directory fsynced", true, func(t *testing.T, d *Disk) {
			create(t, d, "f", "x")
			ok(t, "unlink", d.Unlink(d.Root(), "f"))
			fsync(t, d, ".")
		}, ""},
		{"an unlink that is not durable brings back the fsynced data", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "durable")
			h := open(t, d, "f", Write)
			ok(t, "unlink", d.Unlink(d.Root(), "f"))
			write(t, h, "X", 0)
			ok(t, "sync", h.Sync())
			h.Close()
		}, "f=Xurable"},
		{"an unlinked closed file's unsynced data is dropped", true, func(t *testing.T, d *Disk) {
			seed(t, d, "f", "durable")
			h := open(t, d, "f", Write)
			ok(t, "unlink", d.Unlink(d.Root(), "f"))
			write(t, h, "X", 0)
			h.Close()
			d.CrashWith(keepData{}) // even a crash that writes all data back has nothing of it
		}, "f=durable"},
	})
}

// A crash that keeps everything must give back what the program saw, with
// the same inode numbers and link counts; this checks the rebuild.
func TestCrashKeepAll(t *testing.T) {
	for _, strict := range []bool{false, true} {
		d := newDisk(strict)
		r := d.Root()
		seed(t, d, "keep/a", "aaaa")
		seed(t, d, "gone", "x")
		ok(t, "mkdir", d.Mkdir(r, "d"))
		ok(t, "mkdir", d.Mkdir(r, "d/e"))
		create(t, d, "d/e/f", strings.Repeat("0123456789", 1000))
		truncate(t, d, "d/e/f", 5000, false)
		appendTo(t, d, "keep/a", "bb")
		ok(t, "link", d.Link(r, "keep/a", false, r, "d/a2"))
		ok(t, "symlink", d.Symlink("../keep/a", r, "d/l"))
		ok(t, "rename", d.Rename(r, "d/e", r, "keep/e"))
		ok(t, "unlink", d.Unlink(r, "gone"))
		create(t, d, "d/tmp", "t")
		ok(t, "rename", d.Rename(r, "d/tmp", r, "d/final"))
		before := tree(d)
		var stats []Stat
		d.Walk(func(_ string, st Stat, _ int64, _ int) {
			st.Atim, st.Mtim, st.Ctim = 0, 0, 0
			stats = append(stats, st)
		})
		d.CrashWith(KeepAll{})
		if after := tree(d); after != before {
			t.Errorf("strict=%v: after KeepAll crash:\n%s\nwant:\n%s", strict, after, before)
		}
		i := 0
		d.Walk(func(p string, st Stat, _ int64, _ int) {
			st.Atim, st.Mtim, st.Ctim = 0, 0, 0
			if i < len(stats) && st != stats[i] {
				t.Errorf("strict=%v: %s: stat %+v, want %+v", strict, p, st, stats[i])
			}
			i++
		})
	}
}

func TestAfterCrash(t *testing.T) {
	d := newDisk(true)
	seed(t, d, "a", "data")
	ok(t, "link", d.Link(d.Root(), "a", false, d.Root(), "b"))
	before, _ := d.Stat(d.Root(), "a", false)
	if before.Nlink != 2 {
		t.Fatalf("nlink before crash = %d", before.Nlink)
	}
	dh := open(t, d, ".", Read)
	fh := open(t, d, "a", Read|Write)
	d.Crash()

	// The link was not durable: one name left, and nlink says so.
	after, e := d.Stat(d.Root(), "a", false)
	if e != 0 || after.Ino != before.Ino || after.Nlink != 1 {
		t.Errorf("after crash a = %+v, %v; want ino %d nlink 1", after, e, before.Ino)
	}
	// Handles from before the crash are stale.
	buf := make([]byte, 4)
	if _, e := fh.ReadAt(buf, 0); e != errno.EBADF {
		t.Errorf("read on stale handle: %v", e)
	}
	if _, e := fh.WriteAt(buf, 0); e != errno.EBADF {
		t.Errorf("write on stale handle: %v", e)
	}
	if e := fh.Sync(); e != errno.EBADF {
		t.Errorf("sync on stale handle: %v", e)
	}
	if e := fh.Truncate(0); e != errno.EBADF {
		t.Errorf("truncate on stale handle: %v", e)
	}
	if _, e := dh.Readdir(); e != errno.EBADF {
		t.Errorf("readdir on stale handle: %v", e)
	}
	if e := d.Mkdir(dh, "x"); e != errno.EBADF {
		t.Errorf("mkdir relative to stale handle: %v", e)
	}
	if fh.Valid() || fh.Size() != 0 || fh.Stat() != (Stat{}) {
		t.Errorf("stale handle: valid=%v size=%d stat=%+v", fh.Valid(), fh.Size(), fh.Stat())
	}
	fh.Close() // must not disturb the new epoch's open counts
	dh.Close()

	// The root handle survives, and the disk works on.
	if !d.Root().Valid() {
		t.Fatalf("root handle is stale after a crash")
	}
	h := open(t, d, "a", Write)
	write(t, h, "new!", 0)
	ok(t, "sync", h.Sync())
	ok(t, "unlink", d.Unlink(d.Root(), "a"))
	d.Crash()
	if got := tree(d); got != "a=new!" {
		t.Errorf("after second crash:\n%s", got)
	}
	if s, _ := d.Stat(d.Root(), "a", false); s.Ino != before.Ino {
		t.Errorf("ino changed across crashes: %d -> %d", before.Ino, s.Ino)
	}
}

// prefixModel keeps the first pending directory operation and the first
// half of each file's first pending write: a torn write.
type prefixModel struct{ files []PendingFile }

func (m *prefixModel) DirOps(p *Pending) []int {
	if len(p.Dirs) == 0 {
		return nil
	}
	return []int{0}
}

func (m *prefixModel) File(f PendingFile) Writeback {
	f.Ops = append([]DataOp(nil), f.Ops...) // only valid during the call
	m.files = append(m.files, f)
	w := f.Ops[0]
	w.Data = w.Data[:len(w.Data)/2]
	return Writeback{Ops: []DataOp{w}}
}

func TestCrashModel(t *testing.T) {
	d := newDisk(true)
	r := d.Root()
	seed(t, d, "log", "")
	seed(t, d, "other", "0000")
	h := open(t, d, "log", Write)
	write(t, h, "abcdef", 0)
	write(t, h, "ghij", 6)
	appendTo(t, d, "other", "1111")
	ok(t, "mkdir", d.Mkdir(r, "first"))
	ok(t, "mkdir", d.Mkdir(r, "second"))
	m := &prefixModel{}
	d.CrashWith(m)
	if got := tree(d); got != lines("first/", "log=abc", "other=000011") {
		t.Errorf("after torn crash:\n%s", got)
	}
	// Files come in inode order with their pending log as it happened.
	if len(m.files) != 2 || m.files[0].Path != "log" || m.files[1].Path != "other" ||
		len(m.files[0].Ops) != 2 || string(m.files[0].Ops[1].Data) != "ghij" || m.files[0].Ops[1].Off != 6 ||
		m.files[1].DurableSize != 4 {
		t.Errorf("model saw %+v", m.files)
	}

	// The directory log carries what happened, with paths.
	d = newDisk(true)
	seed(t, d, "dir/x", "")
	ok(t, "rename", d.Rename(d.Root(), "dir/x", d.Root(), "y"))
	ok(t, "link", d.Link(d.Root(), "y", false, d.Root(), "dir/z"))
	ok(t, "unlink", d.Unlink(d.Root(), "dir/z"))
	var seen []DirOp
	d.CrashWith(dirSpy{&seen})
	// Seq numbers every pending operation: the seed wrote nothing pending.
	want := []DirOp{{DirRename, "dir/x", "y", 1}, {DirLink, "y", "dir/z", 2}, {DirUnlink, "dir/z", "", 3}}
	if len(seen) != len(want) {
		t.Fatalf("dir ops = %+v, want %+v", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("dir op %d = %+v, want %+v", i, seen[i], want[i])
		}
	}
}

// keepData keeps every pending data operation but no directory operation.
type keepData struct{}

func (keepData) DirOps(*Pending) []int        { return nil }
func (keepData) File(f PendingFile) Writeback { return Writeback{Ops: f.Ops} }

type dirSpy struct{ ops *[]DirOp }

func (s dirSpy) DirOps(p *Pending) []int  { *s.ops = append(*s.ops, p.Dirs...); return nil }
func (dirSpy) File(PendingFile) Writeback { return Writeback{} }

type badModel struct {
	dir  []int
	flip int64
}

func (m badModel) DirOps(*Pending) []int { return m.dir }
func (m badModel) File(f PendingFile) Writeback {
	if m.flip != 0 {
		return Writeback{Flips: []int64{m.flip}}
	}
	return Writeback{Ops: []DataOp{{Kind: DataWrite, Off: -1}}}
}

func TestCrashModelMistakesPanic(t *testing.T) {
	for _, c := range []struct {
		name string
		m    badModel
	}{
		{"out of range", badModel{dir: []int{5}}},
		{"not ascending", badModel{dir: []int{0, 0}}},
		{"bad data op", badModel{}},
		{"flip past the end", badModel{flip: 8 * 100}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDisk(true)
			seed(t, d, "f", "")
			appendTo(t, d, "f", "x")
			ok(t, "mkdir", d.Mkdir(d.Root(), "d"))
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			d.CrashWith(c.m)
		})
	}
}
