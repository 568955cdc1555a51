package disk

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// fixture builds the tree every errno case starts from.
func fixture(t *testing.T) *Disk {
	t.Helper()
	d := newDisk(false)
	seed(t, d, "d/f", "df")
	seed(t, d, "f", "f")
	r := d.Root()
	ok(t, "mkdir e", d.Mkdir(r, "e"))
	for _, l := range [][2]string{{"f", "lf"}, {"d", "ld"}, {"nope", "dangling"}, {"loop2", "loop1"}, {"loop1", "loop2"}, {"/d", "abs"}} {
		ok(t, "symlink "+l[1], d.Symlink(l[0], r, l[1]))
	}
	return d
}

// pathCase is one path operation on the fixture and the errno Linux gives.
type pathCase struct {
	op       string // open, stat, lstat, mkdir, rmdir, unlink, rename, symlink, readlink, link, linkf
	path     string
	path2    string // rename and link: the new path; symlink: the target
	flags    OpenFlags
	nofollow bool // open only
	want     errno.Errno
}

func (c pathCase) run(d *Disk) errno.Errno {
	r := d.Root()
	switch c.op {
	case "open":
		h, e := d.Open(r, c.path, !c.nofollow, c.flags)
		if e == 0 {
			h.Close()
		}
		return e
	case "stat", "lstat":
		_, e := d.Stat(r, c.path, c.op == "stat")
		return e
	case "mkdir":
		return d.Mkdir(r, c.path)
	case "rmdir":
		return d.Rmdir(r, c.path)
	case "unlink":
		return d.Unlink(r, c.path)
	case "rename":
		return d.Rename(r, c.path, r, c.path2)
	case "symlink":
		return d.Symlink(c.path2, r, c.path)
	case "readlink":
		_, e := d.Readlink(r, c.path)
		return e
	case "link", "linkf":
		return d.Link(r, c.path, c.op == "linkf", r, c.path2)
	}
	panic("unknown op " + c.op)
}

var long = strings.Repeat("n", 256)

// pathCases were checked against Linux 6.18 on ext4 with the same calls,
// except the ones marked in simOnly, which need the disk root as "/".
var pathCases = []pathCase{
	{op: "open", path: "missing", want: errno.ENOENT},
	{op: "open", path: "", want: errno.ENOENT},
	{op: "open", path: "nope/x", want: errno.ENOENT},
	{op: "open", path: "nope/x", flags: Create | Write, want: errno.ENOENT},
	{op: "open", path: "f/x", want: errno.ENOTDIR},
	{op: "open", path: "f/", want: errno.ENOTDIR},
	{op: "open", path: "f/.", want: errno.ENOTDIR},
	{op: "open", path: "d/f/..", want: errno.ENOTDIR},
	{op: "open", path: "lf/", want: errno.ENOTDIR},
	{op: "open", path: "new/", flags: Create | Write, want: errno.EISDIR},
	{op: "open", path: "d/", flags: Create, want: errno.EISDIR},
	{op: "open", path: "f", flags: Create | Excl | Write, want: errno.EEXIST},
	{op: "open", path: "dangling", flags: Create | Excl | Write, want: errno.EEXIST},
	{op: "open", path: ".", flags: Create | Excl, want: errno.EEXIST},
	{op: "open", path: ".", flags: Create, want: errno.EISDIR},
	{op: "open", path: "f", flags: Directory, want: errno.ENOTDIR},
	{op: "open", path: "lf", flags: Directory, want: errno.ENOTDIR},
	{op: "open", path: "d", flags: Write, want: errno.EISDIR},
	{op: "open", path: "d", flags: Trunc, want: errno.EISDIR},
	{op: "open", path: "d", flags: Create, want: errno.EISDIR},
	{op: "open", path: "ld/", flags: Write, want: errno.EISDIR},
	{op: "open", path: "lf", nofollow: true, want: errno.ELOOP},
	{op: "open", path: "dangling", nofollow: true, flags: Create | Write, want: errno.ELOOP},
	{op: "open", path: "loop1", want: errno.ELOOP},
	{op: "open", path: "loop1/x", want: errno.ELOOP},
	{op: "open", path: "loop1", flags: Create | Write, want: errno.ELOOP},
	{op: "open", path: long, want: errno.ENAMETOOLONG},
	{op: "open", path: "d/" + long, flags: Create | Write, want: errno.ENAMETOOLONG},
	{op: "open", path: "d", want: 0},
	{op: "open", path: "d", flags: Directory, want: 0},
	{op: "open", path: "ld", flags: Directory, want: 0},
	{op: "open", path: "ld/", want: 0},
	{op: "open", path: "ld/f", want: 0},
	{op: "open", path: "d/../f", want: 0},
	{op: "open", path: "d//f", want: 0},
	{op: "open", path: "./d/./f", want: 0},
	{op: "open", path: "lf", want: 0},
	{op: "open", path: "f", flags: Create | Write, want: 0},
	{op: "open", path: "dangling", flags: Create | Write, want: 0},
	{op: "open", path: "lf", nofollow: true, flags: Create | Excl | Write, want: errno.EEXIST},

	{op: "stat", path: "dangling", want: errno.ENOENT},
	{op: "lstat", path: "dangling", want: 0},
	{op: "stat", path: "f/", want: errno.ENOTDIR},
	{op: "lstat", path: "lf/", want: errno.ENOTDIR},
	{op: "lstat", path: "ld/", want: 0},
	{op: "stat", path: "loop1", want: errno.ELOOP},
	{op: "lstat", path: "loop1", want: 0},
	{op: "stat", path: "ld/f", want: 0},

	{op: "mkdir", path: "d", want: errno.EEXIST},
	{op: "mkdir", path: "f", want: errno.EEXIST},
	{op: "mkdir", path: ".", want: errno.EEXIST},
	{op: "mkdir", path: "..", want: errno.EEXIST},
	{op: "mkdir", path: "nope/x", want: errno.ENOENT},
	{op: "mkdir", path: "f/x", want: errno.ENOTDIR},
	{op: "mkdir", path: "dangling", want: errno.EEXIST},
	{op: "mkdir", path: "lf", want: errno.EEXIST},
	{op: "mkdir", path: "new/", want: 0},
	{op: "mkdir", path: "ld/new", want: 0},

	{op: "rmdir", path: "d", want: errno.ENOTEMPTY},
	{op: "rmdir", path: "f", want: errno.ENOTDIR},
	{op: "rmdir", path: ".", want: errno.EINVAL},
	{op: "rmdir", path: "e/.", want: errno.EINVAL},
	{op: "rmdir", path: "e/..", want: errno.ENOTEMPTY},
	{op: "rmdir", path: "missing", want: errno.ENOENT},
	{op: "rmdir", path: "ld", want: errno.ENOTDIR},
	{op: "rmdir", path: "ld/", want: errno.ENOTDIR},
	{op: "rmdir", path: "lf", want: errno.ENOTDIR},
	{op: "rmdir", path: "f/", want: errno.ENOTDIR},
	{op: "rmdir", path: "e", want: 0},
	{op: "rmdir", path: "e/", want: 0},

	{op: "unlink", path: "d", want: errno.EISDIR},
	{op: "unlink", path: "d/", want: errno.EISDIR},
	{op: "unlink", path: ".", want: errno.EISDIR},
	{op: "unlink", path: "missing", want: errno.ENOENT},
	{op: "unlink", path: "f/", want: errno.ENOTDIR},
	{op: "unlink", path: "ld/", want: errno.ENOTDIR},
	{op: "unlink", path: "f/x", want: errno.ENOTDIR},
	{op: "unlink", path: "lf", want: 0},
	{op: "unlink", path: "dangling", want: 0},
	{op: "unlink", path: "ld/f", want: 0},

	{op: "symlink", path: "f", path2: "x", want: errno.EEXIST},
	{op: "symlink", path: "dangling", path2: "x", want: errno.EEXIST},
	{op: "symlink", path: "new", path2: "", want: errno.ENOENT},
	{op: "symlink", path: "nope/new", path2: "x", want: errno.ENOENT},
	{op: "symlink", path: "new/", path2: "x", want: errno.ENOENT},
	{op: "symlink", path: "new", path2: "x", want: 0},

	{op: "readlink", path: "f", want: errno.EINVAL},
	{op: "readlink", path: "d", want: errno.EINVAL},
	{op: "readlink", path: "missing", want: errno.ENOENT},
	{op: "readlink", path: "lf", want: 0},
	{op: "readlink", path: "ld/f", want: errno.EINVAL},
	{op: "readlink", path: "lf/", want: errno.ENOTDIR},
	{op: "readlink", path: "ld/", want: errno.EINVAL},
	{op: "readlink", path: "f/", want: errno.ENOTDIR},
	{op: "readlink", path: "dangling/", want: errno.ENOENT},

	{op: "link", path: "d", path2: "new", want: errno.EPERM},
	{op: "link", path: "d", path2: "f", want: errno.EEXIST},
	{op: "link", path: "f", path2: "lf", want: errno.EEXIST},
	{op: "link", path: "missing", path2: "new", want: errno.ENOENT},
	{op: "link", path: "f", path2: "new/", want: errno.ENOENT},
	{op: "link", path: "f", path2: "nope/new", want: errno.ENOENT},
	{op: "link", path: "f/", path2: "new", want: errno.ENOTDIR},
	{op: "linkf", path: "dangling", path2: "new", want: errno.ENOENT},
	{op: "link", path: "dangling", path2: "new", want: 0},
	{op: "linkf", path: "lf", path2: "new", want: 0},
	{op: "link", path: "f", path2: "d/g", want: 0},

	{op: "rename", path: "missing", path2: "x", want: errno.ENOENT},
	{op: "rename", path: "missing", path2: "nope/x", want: errno.ENOENT},
	{op: "rename", path: "f", path2: "nope/x", want: errno.ENOENT},
	{op: "rename", path: "d", path2: "f", want: errno.ENOTDIR},
	{op: "rename", path: "d", path2: "lf", want: errno.ENOTDIR},
	{op: "rename", path: "f", path2: "d", want: errno.EISDIR},
	{op: "rename", path: "ld", path2: "e", want: errno.EISDIR},
	{op: "rename", path: "e", path2: "d", want: errno.ENOTEMPTY},
	{op: "rename", path: "d", path2: "d/sub", want: errno.EINVAL},
	{op: "rename", path: "d", path2: "d/f/x", want: errno.ENOTDIR},
	{op: "rename", path: "d/f", path2: "d", want: errno.ENOTEMPTY},
	{op: "rename", path: ".", path2: "x", want: errno.EBUSY},
	{op: "rename", path: "f", path2: ".", want: errno.EBUSY},
	{op: "rename", path: "d/..", path2: "x", want: errno.EBUSY},
	{op: "rename", path: "f", path2: "x/", want: errno.ENOTDIR},
	{op: "rename", path: "f/", path2: "x", want: errno.ENOTDIR},
	{op: "rename", path: "lf/", path2: "x", want: errno.ENOTDIR},
	{op: "rename", path: "d", path2: "e", want: 0},
	{op: "rename", path: "d", path2: "x/", want: 0},
	{op: "rename", path: "e", path2: "e/", want: 0},
	{op: "rename", path: "f", path2: "f", want: 0},
	{op: "rename", path: "d/f", path2: "d/f", want: 0},
	{op: "rename", path: "f", path2: "d/f", want: 0},
	{op: "rename", path: "lf", path2: "ld", want: 0},
}

// simOnly cases depend on the disk root being "/": ".." clamps there and
// absolute symlinks start there.
var simOnly = []pathCase{
	{op: "open", path: "../../f", want: 0},
	{op: "open", path: "d/../../../d/f", want: 0},
	{op: "open", path: "abs/f", want: 0},
	{op: "open", path: "/d/f", want: 0},
	{op: "stat", path: "abs", want: 0},
	{op: "rmdir", path: "/", want: errno.EBUSY},
	{op: "rmdir", path: "..", want: errno.ENOTEMPTY},
	{op: "mkdir", path: "/", want: errno.EEXIST},
	{op: "open", path: "/", flags: Create, want: errno.EISDIR},
	{op: "rename", path: "/", path2: "x", want: errno.EBUSY},
}

func TestPathErrnos(t *testing.T) {
	for _, c := range append(pathCases[:len(pathCases):len(pathCases)], simOnly...) {
		name := c.op + " " + c.path
		if c.path2 != "" {
			name += " " + c.path2
		}
		t.Run(name, func(t *testing.T) {
			d := fixture(t)
			if got := c.run(d); got != c.want {
				t.Errorf("%s %q %q flags=%b nofollow=%v: got %v, want %v", c.op, c.path, c.path2, c.flags, c.nofollow, got, c.want)
			}
		})
	}
}

func TestHandleErrnos(t *testing.T) {
	cases := []struct {
		name string
		run  func(d *Disk) errno.Errno
		want errno.Errno
	}{
		{"write on read-only handle", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Read).WriteAt([]byte("x"), 0)
			return e
		}, errno.EBADF},
		{"read on write-only handle", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Write).ReadAt(make([]byte, 1), 0)
			return e
		}, errno.EBADF},
		{"read on directory", func(d *Disk) errno.Errno {
			_, e := open(t, d, "d", Read).ReadAt(make([]byte, 1), 0)
			return e
		}, errno.EISDIR},
		{"readdir on file", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Read).Readdir()
			return e
		}, errno.ENOTDIR},
		{"truncate on read-only handle", func(d *Disk) errno.Errno { return open(t, d, "f", Read).Truncate(0) }, errno.EINVAL},
		{"truncate on directory", func(d *Disk) errno.Errno { return open(t, d, "d", Read).Truncate(0) }, errno.EINVAL},
		{"negative truncate", func(d *Disk) errno.Errno { return open(t, d, "f", Write).Truncate(-1) }, errno.EINVAL},
		{"huge truncate", func(d *Disk) errno.Errno { return open(t, d, "f", Write).Truncate(maxFileSize + 1) }, errno.EFBIG},
		{"negative read offset", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Read).ReadAt(make([]byte, 1), -1)
			return e
		}, errno.EINVAL},
		{"negative write offset", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Write).WriteAt([]byte("x"), -1)
			return e
		}, errno.EINVAL},
		{"write past the largest file", func(d *Disk) errno.Errno {
			_, e := open(t, d, "f", Write).WriteAt([]byte("x"), maxFileSize)
			return e
		}, errno.EFBIG},
		{"read after close", func(d *Disk) errno.Errno {
			h := open(t, d, "f", Read)
			h.Close()
			_, e := h.ReadAt(make([]byte, 1), 0)
			return e
		}, errno.EBADF},
		{"sync after close", func(d *Disk) errno.Errno {
			h := open(t, d, "f", Read)
			h.Close()
			return h.Sync()
		}, errno.EBADF},
		{"path op on a closed directory handle", func(d *Disk) errno.Errno {
			h := open(t, d, "d", Read)
			h.Close()
			_, e := d.Stat(h, "f", true)
			return e
		}, errno.EBADF},
		{"path op relative to a file handle", func(d *Disk) errno.Errno {
			_, e := d.Stat(open(t, d, "f", Read), "x", true)
			return e
		}, errno.ENOTDIR},
		{"handle of another disk", func(d *Disk) errno.Errno { return d.Mkdir(newDisk(false).Root(), "x") }, errno.EBADF},
		{"set both time and now", func(d *Disk) errno.Errno { return open(t, d, "f", Read).SetTimes(1, 1, SetAtim|SetAtimNow) }, errno.EINVAL},
		{"set mtime both ways", func(d *Disk) errno.Errno { return d.SetTimes(d.Root(), "f", true, 1, 1, SetMtim|SetMtimNow) }, errno.EINVAL},
		{"set times of missing file", func(d *Disk) errno.Errno { return d.SetTimes(d.Root(), "missing", true, 1, 1, SetMtim) }, errno.ENOENT},
		{"read on closed root still works", func(d *Disk) errno.Errno {
			d.Root().Close()
			_, e := d.Root().Readdir()
			return e
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.run(fixture(t)); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}
