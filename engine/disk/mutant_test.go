package disk

import (
	"slices"
	"testing"
)

// mutantDisk is newDisk with the mutant hooks: weaken says which syncs to
// make no-ops, tear how to tear each pending rename. It records the calls.
type mutantDisk struct {
	*Disk
	asked []SyncCall
	torn  []DirOp
}

func newMutantDisk(strict bool, weaken func(SyncCall) bool, tear Tear) *mutantDisk {
	md := &mutantDisk{}
	var clock int64 = 1_000_000_000
	md.Disk = New(Options{StrictDirs: strict, Now: func() int64 { clock++; return clock },
		Weaken: func(c SyncCall) bool { md.asked = append(md.asked, c); return weaken != nil && weaken(c) },
		Tear:   func(op DirOp) Tear { md.torn = append(md.torn, op); return tear }})
	return md
}

func onlyKind(k SyncKind) func(SyncCall) bool {
	return func(c SyncCall) bool { return !c.Dir && c.Kind == k }
}

// A weakened sync succeeds and makes nothing durable; the kinds that are
// not weakened still work, and each call is told apart by how it came.
func TestWeakenedSyncsMakeNothingDurable(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind SyncKind
		want string // after a crash
	}{
		{"fsync", SyncFsync, lines("fd=d", "fs=", "ow=w")},
		{"fdatasync", SyncData, lines("fd=", "fs=s", "ow=w")},
		{"osync", SyncWrite, lines("fd=d", "fs=s", "ow=")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newMutantDisk(false, onlyKind(tc.kind), TearNone)
			// fs is synced by fsync, fd by fdatasync, ow as an O_SYNC
			// write: each mutant drops one of them.
			for _, c := range []struct {
				path, data string
				kind       SyncKind
			}{{"fs", "s", SyncFsync}, {"fd", "d", SyncData}, {"ow", "w", SyncWrite}} {
				h := open(t, d.Disk, c.path, Write|Create)
				write(t, h, c.data, 0)
				ok(t, "sync", h.SyncAs(c.kind))
				h.Close()
			}
			if d.Ops() != 6 {
				t.Errorf("%d disk ops, want 6: a weakened sync still counts as one", d.Ops())
			}
			d.Crash()
			if got := tree(d.Disk); got != tc.want {
				t.Errorf("after the crash:\n%s\nwant:\n%s", got, tc.want)
			}
			if r := d.Reach(); r != (Reach{Fsync: 1, Fdatasync: 1, OSync: 1}) {
				t.Errorf("reach %+v, want one of each file sync", r)
			}
		})
	}
}

// Only syncs with something to make durable are asked about, and so
// counted: a second fsync with nothing pending is not.
func TestWeakenAsksOnlyWhenASyncWouldDoSomething(t *testing.T) {
	d := newMutantDisk(false, nil, TearNone)
	h := open(t, d.Disk, "f", Write|Create)
	write(t, h, "x", 0)
	ok(t, "sync", h.Sync())
	ok(t, "sync again", h.Sync())
	fsync(t, d.Disk, ".") // lenient dirs: a directory fsync changes nothing
	if len(d.asked) != 1 || d.asked[0] != (SyncCall{Kind: SyncFsync, N: 2, Path: "f"}) {
		t.Fatalf("asked %+v, want the first fsync of f only, as disk op #2", d.asked)
	}
	if r := d.Reach(); r != (Reach{Fsync: 1}) {
		t.Fatalf("reach %+v, want one fsync", r)
	}
}

// A weakened directory fsync leaves the entries pending, so a crash loses
// them; an fsync of another directory is not asked about.
func TestWeakenedDirSync(t *testing.T) {
	d := newMutantDisk(true, func(c SyncCall) bool { return c.Dir }, TearNone)
	ok(t, "mkdir", d.Mkdir(d.Root(), "a"))
	fsync(t, d.Disk, ".")
	create(t, d.Disk, "f", "x")
	fsync(t, d.Disk, "f")
	fsync(t, d.Disk, "a") // nothing of a is pending
	d.Crash()
	if got := tree(d.Disk); got != "" {
		t.Errorf("after the crash:\n%s\nwant nothing: the directory fsync was a no-op", got)
	}
	var dirs []string
	for _, c := range d.asked {
		if c.Dir {
			dirs = append(dirs, c.Path)
		}
	}
	if !slices.Equal(dirs, []string{"."}) || d.Reach().DirSync != 1 {
		t.Errorf("directory fsyncs asked about: %v (reach %+v), want only the root's", dirs, d.Reach())
	}
}

// A rename still pending at a crash is kept in half when torn: both names,
// or neither (the file it replaced goes too). A rename that a directory
// fsync made durable is never asked about.
func TestTornRenames(t *testing.T) {
	for _, tc := range []struct {
		tear Tear
		want string
	}{
		{TearNone, "f=old\ntmp=new"}, // plain crash: the rename is undone
		{TearBoth, "f=new\ntmp=new"},
		{TearNeither, ""},
	} {
		t.Run(tc.tear.String(), func(t *testing.T) {
			d := newMutantDisk(true, nil, tc.tear)
			seed(t, d.Disk, "f", "old")
			create(t, d.Disk, "tmp", "new")
			fsync(t, d.Disk, "tmp")
			fsync(t, d.Disk, ".")
			ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
			d.Crash()
			if got := tree(d.Disk); got != tc.want {
				t.Errorf("after the crash:\n%s\nwant:\n%s", got, tc.want)
			}
			if len(d.torn) != 1 || d.torn[0].Path != "tmp" || d.torn[0].NewPath != "f" || d.Reach().Renames != 1 {
				t.Errorf("asked about %+v (reach %+v), want the one rename tmp -> f", d.torn, d.Reach())
			}
		})
	}
	t.Run("synced", func(t *testing.T) {
		d := newMutantDisk(true, nil, TearNeither)
		seed(t, d.Disk, "f", "old")
		create(t, d.Disk, "tmp", "new")
		fsync(t, d.Disk, "tmp")
		ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
		fsync(t, d.Disk, ".")
		d.Crash()
		if got := tree(d.Disk); got != "f=new" || len(d.torn) != 0 {
			t.Errorf("after the crash:\n%s\n(asked about %+v), want f=new and no question", got, d.torn)
		}
	})
}

// A torn rename keeps its half whatever the crash model keeps, and the
// operations after it apply as the model says.
func TestTornRenameUnderAModel(t *testing.T) {
	d := newMutantDisk(true, nil, TearBoth)
	create(t, d.Disk, "tmp", "new")
	fsync(t, d.Disk, "tmp")
	ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "f"))
	create(t, d.Disk, "g", "")
	d.CrashWith(KeepAll{})
	// KeepAll keeps the create of tmp and of g; the rename keeps only its
	// new entry, so tmp stays.
	if got, want := tree(d.Disk), "f=new\ng=\ntmp=new"; got != want {
		t.Errorf("after the crash:\n%s\nwant:\n%s", got, want)
	}
}
