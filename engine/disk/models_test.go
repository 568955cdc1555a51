package disk

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

var (
	tornOnly    = CrashConfig{Torn: true}
	ext4        = CrashConfig{Reorder: true}
	ext4Torn    = CrashConfig{Reorder: true, Torn: true}
	pageIndep   = CrashConfig{Reorder: true, FSModel: PageIndependent}
	dirReorder  = CrashConfig{Reorder: true, FSModel: DirReorder, StrictDirs: true}
	explicitExt = CrashConfig{Reorder: true, FSModel: Ext4Ordered}
)

type modelCase struct {
	name   string
	strict bool
	cfg    CrashConfig
	steps  func(t *testing.T, d *Disk)
	want   []string // every state a crash can leave, in any order
}

func runModelCases(t *testing.T, cases []modelCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sameStates(t, crashStates(t, c.strict, c.cfg, c.steps), c.want)
		})
	}
}

// writeAt opens path, writes data at off and closes it, without fsync.
func writeAt(t *testing.T, d *Disk, path, data string, off int64) {
	t.Helper()
	h := open(t, d, path, Write)
	defer h.Close()
	write(t, h, data, off)
}

func fill(c byte, n int) string { return strings.Repeat(string(c), n) }

func TestTornWrites(t *testing.T) {
	runModelCases(t, []modelCase{
		{"an in-order prefix of the writes of all files", false, tornOnly, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			seed(t, d, "b", "")
			appendTo(t, d, "a", "x")
			appendTo(t, d, "b", "y")
			appendTo(t, d, "a", "z")
		}, []string{"a= b=", "a=x b=", "a=x b=y", "a=xz b=y"}},
		{"possibly ending in a partial write", false, tornOnly, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", "abc")
		}, []string{"a=", "a=a", "a=ab", "a=abc"}},
		{"a truncate takes its place in the order, whole", false, tornOnly, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "hello")
			truncate(t, d, "a", 2, false)
			appendTo(t, d, "a", "XY")
		}, []string{"a=hello", "a=he", "a=heX", "a=heXY"}},
		{"synced writes are not pending and always survive", false, tornOnly, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", "s")
			fsync(t, d, "a")
			appendTo(t, d, "a", "u")
		}, []string{"a=s", "a=su"}},
		{"directory operations take their place in the same order", true, tornOnly, func(t *testing.T, d *Disk) {
			create(t, d, "f", "ab")
			ok(t, "mkdir", d.Mkdir(d.Root(), "g"))
		}, []string{"(empty)", "f=", "f=a", "f=ab", "f=ab g/"}},
		{"fs_model does not apply: a later page never survives without an earlier one", false, tornOnly, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			writeAt(t, d, "a", "a", 0)
			writeAt(t, d, "a", "b", pageSize)
		}, []string{"a=", "a=a", "a=a{0*4095}b"}},
	})
}

func TestReorderExt4Ordered(t *testing.T) {
	// Two pages of A, with an overwrite in each and an append after them.
	var overwrites []string
	for _, p0 := range []string{fill('A', pageSize), "x" + fill('A', pageSize-1)} {
		for _, p1 := range []string{fill('A', pageSize), "y" + fill('A', pageSize-1)} {
			for _, tail := range []string{"", "z"} {
				overwrites = append(overwrites, "a="+show([]byte(p0+p1+tail)))
			}
		}
	}
	runModelCases(t, []modelCase{
		{"appends persist as an in-order prefix split at page boundaries", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", fill('A', pageSize)+"BB")
		}, []string{"a=", "a={A*4096}", "a={A*4096}BB"}},
		{"overwrites persist per page in any order, independently of the appends", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", fill('A', 2*pageSize))
			writeAt(t, d, "a", "x", 0)
			writeAt(t, d, "a", "y", pageSize)
			appendTo(t, d, "a", "z")
		}, overwrites},
		{"overwrites of one page persist as an in-order prefix", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "1234")
			writeAt(t, d, "a", "x", 1)
			writeAt(t, d, "a", "y", 2)
		}, []string{"a=1234", "a=1x34", "a=1xy4"}},
		{"an overwrite past the surviving size keeps nothing", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", "abcd")
			writeAt(t, d, "a", "X", 1)
		}, []string{"a=", "a=abcd", "a=aXcd"}},
		{"truncates persist in order with the appends", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "hello")
			truncate(t, d, "a", 0, false)
			appendTo(t, d, "a", "bye")
		}, []string{"a=hello", "a=", "a=bye"}},
		{"an append to one file survives while an earlier append to another is lost", false, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			seed(t, d, "b", "")
			appendTo(t, d, "a", "1")
			appendTo(t, d, "b", "2")
		}, []string{"a= b=", "a=1 b=", "a= b=2", "a=1 b=2"}},
		{"directory operations persist as an in-order prefix", true, ext4, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "x"))
			ok(t, "mkdir", d.Mkdir(d.Root(), "y"))
		}, []string{"(empty)", "x/", "x/ y/"}},
		{"a single directory operation is atomic", true, ext4, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "1")
			seed(t, d, "b", "2")
			ok(t, "rename", d.Rename(d.Root(), "a", d.Root(), "b"))
		}, []string{"a=1 b=2", "b=1"}},
		{"naming ext4_ordered is the same as the default", false, explicitExt, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", "abcd")
			writeAt(t, d, "a", "X", 1)
		}, []string{"a=", "a=abcd", "a=aXcd"}},
		{"torn_writes tears the last append kept", false, ext4Torn, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			appendTo(t, d, "a", "abc")
		}, []string{"a=", "a=a", "a=ab", "a=abc"}},
		{"torn_writes tears the last overwrite kept in each page", false, ext4Torn, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "1234"+fill('5', pageSize))
			writeAt(t, d, "a", "xy", 0)
			writeAt(t, d, "a", "zw", pageSize)
		}, func() []string {
			var out []string
			for _, p0 := range []string{"1234", "x234", "xy34"} {
				for _, p1 := range []string{"5555", "z555", "zw55"} {
					out = append(out, "a="+show([]byte(p0+fill('5', pageSize-4)+p1)))
				}
			}
			return out
		}()},
	})
}

func TestReorderPageIndependent(t *testing.T) {
	appendPages := func(t *testing.T, d *Disk) {
		seed(t, d, "a", "")
		writeAt(t, d, "a", "a", 0)
		writeAt(t, d, "a", "b", pageSize)
	}
	// Size 0, 1 or 4097; each page written back or not.
	appended := []string{"a=", "a=a", `a=\0`, "a=a{0*4095}b", "a=a{0*4096}", "a={0*4096}b", "a={0*4097}"}
	runModelCases(t, []modelCase{
		{"a later appended page can survive without an earlier one, leaving zeros", false, pageIndep, appendPages, appended},
		{"writes to one page persist as an in-order prefix", false, pageIndep, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "1234")
			writeAt(t, d, "a", "x", 1)
			writeAt(t, d, "a", "y", 2)
		}, []string{"a=1234", "a=1x34", "a=1xy4"}},
		{"the size and truncates persist as an in-order prefix, pages on their own", false, pageIndep, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "hello")
			truncate(t, d, "a", 2, false)
			appendTo(t, d, "a", "XY")
		}, []string{"a=hello", "a=heXYo", "a=he", `a=he\0\0`, "a=heXY"}},
		{"files are independent", false, pageIndep, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			seed(t, d, "b", "")
			appendTo(t, d, "a", "1")
			appendTo(t, d, "b", "2")
		}, []string{"a= b=", "a=1 b=", `a=\0 b=`, "a= b=2", `a= b=\0`, "a=1 b=2", `a=\0 b=2`, `a=1 b=\0`, `a=\0 b=\0`}},
		{"directory operations persist as an in-order prefix", true, pageIndep, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "x"))
			ok(t, "mkdir", d.Mkdir(d.Root(), "y"))
		}, []string{"(empty)", "x/", "x/ y/"}},
		{"dir_reorder writes file data back as page_independent does", true, dirReorder, appendPages, appended},
	})
}

// symswap publishes a generation by renaming a symlink over current after
// fsyncing the new file, but not the directory.
func symswap(t *testing.T, d *Disk) {
	seed(t, d, "gen1", "one")
	ok(t, "symlink", d.Symlink("gen1", d.Root(), "current"))
	fsync(t, d, ".")
	create(t, d, "gen2", "two")
	fsync(t, d, "gen2")
	ok(t, "symlink", d.Symlink("gen2", d.Root(), "tmp"))
	ok(t, "rename", d.Rename(d.Root(), "tmp", d.Root(), "current"))
}

func TestReorderDirReorder(t *testing.T) {
	runModelCases(t, []modelCase{
		{"each directory operation survives on its own", true, dirReorder, func(t *testing.T, d *Disk) {
			ok(t, "mkdir", d.Mkdir(d.Root(), "x"))
			ok(t, "mkdir", d.Mkdir(d.Root(), "y"))
		}, []string{"(empty)", "x/", "y/", "x/ y/"}},
		{"a rename persists without the create before it", true, dirReorder, symswap, []string{
			"current->gen1 gen1=one",
			"current->gen1 gen1=one gen2=two",
			"current->gen1 gen1=one tmp->gen2",
			"current->gen1 gen1=one gen2=two tmp->gen2",
			"current->gen2 gen1=one", // current points at nothing
			"current->gen2 gen1=one gen2=two",
		}},
		{"ext4_ordered keeps the create before the rename", true, ext4, symswap, []string{
			"current->gen1 gen1=one",
			"current->gen1 gen1=one gen2=two",
			"current->gen1 gen1=one gen2=two tmp->gen2",
			"current->gen2 gen1=one gen2=two",
		}},
		{"a single directory operation is atomic", true, dirReorder, func(t *testing.T, d *Disk) {
			seed(t, d, "a/f", "1")
			seed(t, d, "b/g", "2")
			ok(t, "rename", d.Rename(d.Root(), "a/f", d.Root(), "b/g"))
		}, []string{"a/ a/f=1 b/ b/g=2", "a/ b/ b/g=1"}},
	})
}

func TestCrashDuringFsync(t *testing.T) {
	// The first file created on a fresh disk is inode 2, after the root.
	const a = 2
	runModelCases(t, []modelCase{
		{"the file being fsynced keeps an in-order prefix, possibly torn", false, CrashConfig{Syncing: a}, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			seed(t, d, "b", "")
			appendTo(t, d, "a", "xy")
			appendTo(t, d, "b", "other")
			appendTo(t, d, "a", "z")
		}, []string{"a= b=", "a=x b=", "a=xy b=", "a=xyz b="}},
		{"other files follow the model", false, CrashConfig{Syncing: a, Reorder: true}, func(t *testing.T, d *Disk) {
			seed(t, d, "a", "")
			seed(t, d, "b", "")
			appendTo(t, d, "a", "x")
			appendTo(t, d, "b", "y")
		}, []string{"a= b=", "a=x b=", "a= b=y", "a=x b=y"}},
	})
	// With corrupt_on_crash, a plain crash during an fsync flips a bit of
	// what it kept.
	d := newDisk(false)
	seed(t, d, "a", "")
	appendTo(t, d, "a", "@")
	s := scripted(t, 1, 0, 0)
	m, err := NewCrashModel(CrashConfig{Syncing: a, Corrupt: true}, s.draw)
	if err != nil {
		t.Fatal(err)
	}
	rep := d.CrashWith(m)
	s.done()
	if got := state(d); got != "a=A" || len(rep.Flips) != 1 {
		t.Errorf("after crash %s with flips %+v, want a=A and one flip", got, rep.Flips)
	}
}

func TestCrashConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  CrashConfig
		want string // part of the error, "" for none
	}{
		{CrashConfig{}, ""},
		{CrashConfig{Torn: true}, ""},
		{CrashConfig{Torn: true, Reorder: true, FSModel: PageIndependent}, ""},
		{CrashConfig{Reorder: true, FSModel: DirReorder, StrictDirs: true}, ""},
		{CrashConfig{Torn: true, FSModel: Ext4Ordered}, "without reorder_writes"},
		{CrashConfig{FSModel: PageIndependent}, "without reorder_writes"},
		{CrashConfig{Reorder: true, FSModel: DirReorder}, `"strict_dirs": true`},
		{CrashConfig{Reorder: true, FSModel: "ext3"}, "use ext4_ordered, page_independent or dir_reorder"},
	}
	for _, c := range cases {
		_, err := NewCrashModel(c.cfg, func(int) int { return 0 })
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one saying %q", c.cfg, err, c.want)
		}
	}
}

func TestCorruptOnCrash(t *testing.T) {
	cases := []struct {
		name  string
		model func(Draw) CrashModel
		steps func(t *testing.T, d *Disk)
		draws []int
		want  string
		flips []Fired
	}{
		{"a plain crash keeps no written bytes and flips nothing", func(dr Draw) CrashModel { return &Corrupt{KeepNothing{}, dr} },
			func(t *testing.T, d *Disk) {
				seed(t, d, "a", "aaaa")
				writeAt(t, d, "a", "bc", 1)
			}, nil, "a={a*4}", nil},
		{"the flip lands in the bytes written back", func(dr Draw) CrashModel { return &Corrupt{KeepAll{}, dr} },
			func(t *testing.T, d *Disk) {
				seed(t, d, "a", "1234")
				writeAt(t, d, "a", "bc", 1)
			}, []int{1, 0}, "a=1bb4", // byte 2 of "1bc4", 'c'^1 = 'b'
			[]Fired{{Kind: KindCorruptOnCrash, Path: "a", Offset: 2, Bit: 0}}},
		{"one flip per file", func(dr Draw) CrashModel { return &Corrupt{KeepAll{}, dr} },
			func(t *testing.T, d *Disk) {
				seed(t, d, "a", "")
				seed(t, d, "b", "")
				appendTo(t, d, "a", "@@")
				appendTo(t, d, "b", "@@")
			}, []int{0, 1, 1, 2}, "a=B@ b=@D",
			[]Fired{{Kind: KindCorruptOnCrash, Path: "a", Offset: 0, Bit: 1}, {Kind: KindCorruptOnCrash, Path: "b", Offset: 1, Bit: 2}}},
		{"bytes truncated away are not candidates", func(dr Draw) CrashModel { return &Corrupt{KeepAll{}, dr} },
			func(t *testing.T, d *Disk) {
				seed(t, d, "a", "")
				appendTo(t, d, "a", "xyz")
				truncate(t, d, "a", 1, false)
			}, []int{0, 0}, "a=y",
			[]Fired{{Kind: KindCorruptOnCrash, Path: "a", Offset: 0, Bit: 0}}},
		{"only the kept prefix of a torn crash is a candidate", func(dr Draw) CrashModel { return &Corrupt{&Torn{Draw: dr}, dr} },
			func(t *testing.T, d *Disk) {
				seed(t, d, "a", "1234")
				writeAt(t, d, "a", "ab", 0)
			}, []int{0, 1, 0, 5}, "a=A234", // the first byte of "ab" is kept, then 'a' with bit 5 flipped
			[]Fired{{Kind: KindCorruptOnCrash, Path: "a", Offset: 0, Bit: 5}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDisk(false)
			c.steps(t, d)
			s := scripted(t, c.draws...)
			rep := d.CrashWith(c.model(s.draw))
			s.done()
			if !slices.Equal(rep.Flips, c.flips) {
				t.Errorf("flips %+v, want %+v", rep.Flips, c.flips)
			}
			if got := state(d); got != c.want {
				t.Errorf("after crash %s, want %s", got, c.want)
			}
			// Every flip is recorded as damage, for inspect.
			var damage []Damage
			for _, f := range d.Files() {
				damage = append(damage, f.Damage...)
			}
			if len(damage) != len(rep.Flips) {
				t.Errorf("damage %+v for flips %+v", damage, rep.Flips)
			}
		})
	}
}

// busy leaves a strict disk with pending directory operations, appends,
// overwrites and truncates over several files and pages.
func busy(t testing.TB, d *Disk) {
	for i := range 4 {
		name := fmt.Sprintf("f%d", i)
		if err := d.WriteFile(name, []byte(fill(byte('a'+i), 3*pageSize+100))); err != nil {
			t.Fatal(err)
		}
		h, e := d.Open(d.Root(), name, false, Write)
		if e != 0 {
			t.Fatal(e)
		}
		for j := range 6 {
			off := int64((j*2500 + i*700) % (4 * pageSize))
			h.WriteAt([]byte(fill(byte('A'+j), 300+j*50)), off)
			if j == 3 {
				h.Truncate(int64(2*pageSize + i*10))
			}
		}
		h.Close()
		d.Mkdir(d.Root(), "dir"+name)
		d.Rename(d.Root(), name, d.Root(), "dir"+name+"/moved")
	}
}

func TestCrashDeterminism(t *testing.T) {
	configs := map[string]CrashConfig{
		"torn": tornOnly, "ext4": ext4, "ext4+torn": ext4Torn, "page_independent": pageIndep,
		"dir_reorder+torn+corrupt": {Reorder: true, Torn: true, FSModel: DirReorder, StrictDirs: true, Corrupt: true},
		"torn+corrupt":             {Torn: true, Corrupt: true},
	}
	names := make([]string, 0, len(configs))
	for n := range configs {
		names = append(names, n)
	}
	slices.Sort(names)
	crash := func(t *testing.T, cfg CrashConfig, seed uint64) string {
		d := newDisk(true)
		busy(t, d)
		r := rand.New(rand.NewPCG(seed, 7))
		m, err := NewCrashModel(cfg, func(n int) int { return r.IntN(n) })
		if err != nil {
			t.Fatal(err)
		}
		rep := d.CrashWith(m)
		return fmt.Sprintf("%s %+v %+v", state(d), d.Files(), rep)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			cfg := configs[name]
			distinct := map[string]bool{}
			for seed := range uint64(8) {
				a, b := crash(t, cfg, seed), crash(t, cfg, seed)
				if a != b {
					t.Fatalf("seed %d: two crashes with the same draws differ:\n%s\n%s", seed, a, b)
				}
				distinct[a] = true
			}
			if len(distinct) < 2 {
				t.Errorf("8 seeds gave %d crash state: the draws are not used", len(distinct))
			}
		})
	}
}

// TestDrawOrder pins the draws a crash makes, as models.go documents them.
func TestDrawOrder(t *testing.T) {
	steps := func(t *testing.T, d *Disk) {
		seed(t, d, "a", "1234")
		ok(t, "mkdir", d.Mkdir(d.Root(), "x"))
		ok(t, "mkdir", d.Mkdir(d.Root(), "y"))
		writeAt(t, d, "a", "xy", 0)
		appendTo(t, d, "a", "56")
	}
	cases := []struct {
		name  string
		cfg   CrashConfig
		draws []int
		asks  []int
		want  string
	}{
		// 4 pending operations: mkdir, mkdir, write "xy", write "56".
		// Keep 3 and one byte of the 4th.
		{"torn_writes", tornOnly, []int{3, 1}, []int{5, 2}, "a=xy345 x/ y/"},
		// Directories: both. Size log: none, then 1 byte of "56". Page 0:
		// none, then 1 byte of "xy". Corruption: the first of the 2
		// written bytes, bit 0.
		{"ext4_ordered, torn, corrupt", CrashConfig{Reorder: true, Torn: true, Corrupt: true}, []int{2, 0, 1, 0, 1, 0, 0},
			[]int{3, 2, 2, 2, 2, 2, 8}, "a=y2345 x/ y/"},
		// One draw per directory operation, then the size log (the append
		// only sets the size here), then page 0 with both writes: the size
		// survives without the bytes.
		{"dir_reorder", dirReorder, []int{0, 1, 1, 0}, []int{2, 2, 2, 3}, `a=1234\0\0 y/`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDisk(true)
			steps(t, d)
			s := scripted(t, c.draws...)
			m, err := NewCrashModel(c.cfg, s.draw)
			if err != nil {
				t.Fatal(err)
			}
			d.CrashWith(m)
			s.done()
			if !slices.Equal(s.asks, c.asks) {
				t.Errorf("draws %v, want %v", s.asks, c.asks)
			}
			if got := state(d); got != c.want {
				t.Errorf("after crash %s, want %s", got, c.want)
			}
		})
	}
}

// BenchmarkCrash measures a crash with 10,000 pending pages: appends of
// one file, and overwrites of another, under each model.
func BenchmarkCrash(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  CrashConfig
	}{
		{"plain", CrashConfig{}}, {"torn", tornOnly}, {"ext4_ordered", ext4Torn},
		{"page_independent", pageIndep}, {"dir_reorder", dirReorder},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, pageSize)
			r := rand.New(rand.NewPCG(1, 2))
			for b.Loop() {
				b.StopTimer()
				d := newDisk(true)
				d.WriteFile("over", make([]byte, 5000*pageSize))
				d.WriteFile("log", nil)
				ho, _ := d.Open(d.Root(), "over", false, Write)
				hl, _ := d.Open(d.Root(), "log", false, Write)
				for i := range 5000 {
					ho.WriteAt(buf, int64(i)*pageSize)
					hl.WriteAt(buf, int64(i)*pageSize)
				}
				m, _ := NewCrashModel(c.cfg, func(n int) int { return r.IntN(n) })
				b.StartTimer()
				d.CrashWith(m)
			}
		})
	}
}
