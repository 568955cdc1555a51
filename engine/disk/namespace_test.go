package disk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

func TestSymlinkResolution(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "a/b/file", "deep")
	seed(t, d, "top", "top")
	r := d.Root()
	for _, l := range [][2]string{
		{"b/file", "a/rel"},           // relative to the link's directory
		{"../../top", "a/b/up"},       // climbs from the link's directory
		{"/a/b/file", "a/b/c/abs"},    // absolute: from the disk root, not from a/b/c
		{"../../../../../top", "a/x"}, // ".." clamps at the root
		{"a/rel", "chain"},            // a link to a link
		{"a/b", "dirlink"},
		{"b/../b/file", "a/dots"},
	} {
		if l[1] == "a/b/c/abs" {
			ok(t, "mkdir", d.Mkdir(r, "a/b/c"))
		}
		ok(t, "symlink "+l[1], d.Symlink(l[0], r, l[1]))
	}
	cases := []struct{ path, want string }{
		{"a/rel", "deep"},
		{"a/b/up", "top"},
		{"a/b/c/abs", "deep"},
		{"a/x", "top"},
		{"chain", "deep"},
		{"dirlink/file", "deep"},
		{"dirlink/up", "top"},        // resolved from a/b, where the link lives
		{"dirlink/../../top", "top"}, // ".." after a link is the target's parent
		{"a/dots", "deep"},
	}
	for _, c := range cases {
		got, err := d.ReadFile(c.path)
		if err != nil || string(got) != c.want {
			t.Errorf("read %s = %q, %v; want %q", c.path, got, err, c.want)
		}
		// The guest goes through Open, which must agree with the helper.
		h, e := d.Open(r, c.path, true, Read)
		if e != 0 {
			t.Errorf("open %s: %v", c.path, e)
			continue
		}
		buf := make([]byte, 16)
		n, _ := h.ReadAt(buf, 0)
		if string(buf[:n]) != c.want {
			t.Errorf("open+read %s = %q, want %q", c.path, buf[:n], c.want)
		}
		h.Close()
	}

	// Stat follows, lstat does not; a symlink's size is its target's length.
	st, e := d.Stat(r, "chain", false)
	if e != 0 || st.Type != TypeSymlink || st.Size != int64(len("a/rel")) || st.Mode != 0o777 {
		t.Errorf("lstat chain = %+v, %v; want a symlink of size 5, mode 0777", st, e)
	}
	st, e = d.Stat(r, "chain", true)
	if e != 0 || st.Type != TypeRegular || st.Size != 4 {
		t.Errorf("stat chain = %+v, %v; want the 4-byte file", st, e)
	}
}

func TestSymlinkLoops(t *testing.T) {
	d := newDisk(false)
	r := d.Root()
	seed(t, d, "target", "x")
	// l0 -> target, l1 -> l0, ... l40 -> l39: l40 needs 41 links.
	ok(t, "symlink", d.Symlink("target", r, "l0"))
	for i := 1; i <= 40; i++ {
		ok(t, "symlink", d.Symlink(fmt.Sprintf("l%d", i-1), r, fmt.Sprintf("l%d", i)))
	}
	if _, e := d.Stat(r, "l39", true); e != 0 {
		t.Errorf("40 links: %v, want success", e)
	}
	if _, e := d.Stat(r, "l40", true); e != errno.ELOOP {
		t.Errorf("41 links: %v, want ELOOP", e)
	}
	ok(t, "symlink", d.Symlink("self/x", r, "self"))
	if _, e := d.Stat(r, "self", true); e != errno.ELOOP {
		t.Errorf("self-referencing link: %v, want ELOOP", e)
	}
	if e := d.Symlink("", r, "empty"); e != errno.ENOENT {
		t.Errorf("symlink with an empty target: %v, want ENOENT", e)
	}
}

func TestCreateThroughDanglingSymlink(t *testing.T) {
	d := newDisk(false)
	r := d.Root()
	ok(t, "mkdir", d.Mkdir(r, "dir"))
	ok(t, "symlink", d.Symlink("dir/new", r, "link"))
	ok(t, "symlink", d.Symlink("missing/new", r, "broken"))
	h, e := d.Open(r, "link", true, Write|Create)
	ok(t, "create through link", e)
	write(t, h, "hi", 0)
	h.Close()
	if got := tree(d); got != lines("broken -> missing/new", "dir/", "dir/new=hi", "link -> dir/new") {
		t.Errorf("tree after create through link:\n%s", got)
	}
	if _, e := d.Open(r, "broken", true, Write|Create); e != errno.ENOENT {
		t.Errorf("create through link into a missing directory: %v, want ENOENT", e)
	}
}

func TestRename(t *testing.T) {
	t.Run("over an existing file", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "old", "old")
		seed(t, d, "new", "new")
		before, _ := d.Stat(d.Root(), "old", false)
		victim := open(t, d, "new", Read)
		ok(t, "rename", d.Rename(d.Root(), "old", d.Root(), "new"))
		if got := tree(d); got != "new=old" {
			t.Errorf("tree:\n%s", got)
		}
		after, _ := d.Stat(d.Root(), "new", false)
		if after.Ino != before.Ino {
			t.Errorf("renamed file has ino %d, want %d", after.Ino, before.Ino)
		}
		// The replaced file lives on through its open handle.
		buf := make([]byte, 8)
		n, e := victim.ReadAt(buf, 0)
		if e != 0 || string(buf[:n]) != "new" || victim.Stat().Nlink != 0 {
			t.Errorf("replaced file through handle: %q %v nlink=%d", buf[:n], e, victim.Stat().Nlink)
		}
	})
	t.Run("directory over an empty directory", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "a/f", "f")
		ok(t, "mkdir", d.Mkdir(d.Root(), "b"))
		ok(t, "rename", d.Rename(d.Root(), "a", d.Root(), "b"))
		if got := tree(d); got != lines("b/", "b/f=f") {
			t.Errorf("tree:\n%s", got)
		}
		if st, _ := d.Stat(d.Root(), ".", false); st.Nlink != 3 {
			t.Errorf("root nlink = %d, want 3 (one subdirectory)", st.Nlink)
		}
	})
	t.Run("directory moves and its .. follows", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "a/sub/f", "f")
		ok(t, "mkdir", d.Mkdir(d.Root(), "b"))
		ok(t, "rename", d.Rename(d.Root(), "a/sub", d.Root(), "b/sub"))
		b, _ := d.Stat(d.Root(), "b", false)
		dotdot, e := d.Stat(d.Root(), "b/sub/..", false)
		if e != 0 || dotdot.Ino != b.Ino {
			t.Errorf("b/sub/.. is ino %d (%v), want b's %d", dotdot.Ino, e, b.Ino)
		}
		a, _ := d.Stat(d.Root(), "a", false)
		if a.Nlink != 2 || b.Nlink != 3 {
			t.Errorf("nlink a=%d b=%d, want 2 and 3", a.Nlink, b.Nlink)
		}
	})
	t.Run("two names of one file", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "x", "data")
		ok(t, "link", d.Link(d.Root(), "x", false, d.Root(), "y"))
		ok(t, "rename", d.Rename(d.Root(), "x", d.Root(), "y"))
		// POSIX: renaming onto another link of the same file does nothing.
		if got := tree(d); got != lines("x=data", "y=data") {
			t.Errorf("tree:\n%s", got)
		}
	})
	t.Run("a symlink, not its target", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "t", "t")
		ok(t, "symlink", d.Symlink("t", d.Root(), "l"))
		ok(t, "rename", d.Rename(d.Root(), "l", d.Root(), "m"))
		if got := tree(d); got != lines("m -> t", "t=t") {
			t.Errorf("tree:\n%s", got)
		}
	})
	t.Run("into a removed directory", func(t *testing.T) {
		d := newDisk(false)
		seed(t, d, "f", "f")
		ok(t, "mkdir", d.Mkdir(d.Root(), "gone"))
		h := open(t, d, "gone", Read)
		ok(t, "rmdir", d.Rmdir(d.Root(), "gone"))
		if e := d.Rename(d.Root(), "f", h, "f"); e != errno.ENOENT {
			t.Errorf("rename into removed dir: %v, want ENOENT", e)
		}
		if _, e := d.Open(h, "new", true, Create|Write); e != errno.ENOENT {
			t.Errorf("create in removed dir: %v, want ENOENT", e)
		}
		if st := h.Stat(); st.Nlink != 0 {
			t.Errorf("removed dir nlink = %d, want 0", st.Nlink)
		}
		if ents, e := h.Readdir(); e != errno.ENOENT {
			t.Errorf("readdir of removed dir = %v, %v; want ENOENT", ents, e)
		}
		// ".." still leads to the old parent, as on Linux.
		if st, e := d.Stat(h, "..", false); e != 0 || st.Ino != d.Root().Ino() {
			t.Errorf("stat .. of removed dir = %+v, %v; want the root", st, e)
		}
		if _, e := d.Stat(h, "../f", false); e != 0 {
			t.Errorf("stat ../f from removed dir: %v", e)
		}
	})
}

func TestUnlinkedButOpen(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "hello")
	h := open(t, d, "f", Read|Write)
	ok(t, "unlink", d.Unlink(d.Root(), "f"))
	write(t, h, " world", 5)
	buf := make([]byte, 32)
	n, e := h.ReadAt(buf, 0)
	if e != 0 || string(buf[:n]) != "hello world" {
		t.Errorf("read through handle = %q, %v", buf[:n], e)
	}
	ok(t, "sync", h.Sync())
	if st := h.Stat(); st.Nlink != 0 || st.Size != 11 {
		t.Errorf("stat through handle = %+v, want nlink 0 size 11", st)
	}
	// A new file under the old name is a different file.
	create(t, d, "f", "other")
	if got := tree(d); got != "f=other" {
		t.Errorf("tree:\n%s", got)
	}
	n, _ = h.ReadAt(buf, 0)
	if string(buf[:n]) != "hello world" {
		t.Errorf("old handle reads %q after the name was reused", buf[:n])
	}
	h.Close()
	if _, e := h.ReadAt(buf, 0); e != errno.EBADF {
		t.Errorf("read after close: %v, want EBADF", e)
	}
}

func TestHardLinks(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "a", "one")
	ok(t, "link", d.Link(d.Root(), "a", false, d.Root(), "b"))
	appendTo(t, d, "b", "+two")
	sa, _ := d.Stat(d.Root(), "a", false)
	sb, _ := d.Stat(d.Root(), "b", false)
	if sa.Ino != sb.Ino || sa.Nlink != 2 {
		t.Errorf("a=%+v b=%+v; want one inode with nlink 2", sa, sb)
	}
	if got := tree(d); got != lines("a=one+two", "b=one+two") {
		t.Errorf("tree:\n%s", got)
	}
	ok(t, "unlink", d.Unlink(d.Root(), "a"))
	if sb, _ = d.Stat(d.Root(), "b", false); sb.Nlink != 1 {
		t.Errorf("nlink after unlink = %d, want 1", sb.Nlink)
	}
}

func TestStatAndReaddir(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "dir/b", "bb")
	seed(t, d, "dir/a", "a")
	r := d.Root()
	ok(t, "mkdir", d.Mkdir(r, "dir/sub2"))
	ok(t, "mkdir", d.Mkdir(r, "dir/sub1"))
	ok(t, "symlink", d.Symlink("a", r, "dir/c"))
	h := open(t, d, "dir", Read)
	ents, e := h.Readdir()
	ok(t, "readdir", e)
	var got []string
	for _, en := range ents {
		st, _ := d.Stat(h, en.Name, false)
		if st.Ino != en.Ino || st.Type != en.Type {
			t.Errorf("dirent %+v disagrees with stat %+v", en, st)
		}
		got = append(got, en.Name+":"+en.Type.String())
	}
	if want := "a:file b:file c:symlink sub1:dir sub2:dir"; strings.Join(got, " ") != want {
		t.Errorf("readdir = %s, want %s", strings.Join(got, " "), want)
	}
	st := h.Stat()
	if st.Type != TypeDirectory || st.Size != 4096 || st.Mode != 0o755 || st.Nlink != 4 {
		t.Errorf("dir stat = %+v, want dir size 4096 mode 0755 nlink 4", st)
	}
	fst, _ := d.Stat(r, "dir/b", false)
	if fst.Type != TypeRegular || fst.Size != 2 || fst.Mode != 0o644 || fst.Nlink != 1 {
		t.Errorf("file stat = %+v", fst)
	}
	if fst.Ino == st.Ino {
		t.Errorf("dir and file share inode number %d", st.Ino)
	}
	// Inode numbers come from a counter: the same steps give the same numbers.
	d2 := newDisk(false)
	seed(t, d2, "dir/b", "bb")
	if st2, _ := d2.Stat(d2.Root(), "dir/b", false); st2.Ino != fst.Ino {
		t.Errorf("ino of the same file on a fresh disk = %d, want %d", st2.Ino, fst.Ino)
	}
}

func TestTimes(t *testing.T) {
	d := newDisk(false)
	r := d.Root()
	seed(t, d, "f", "x")
	st0, _ := d.Stat(r, "f", false)
	appendTo(t, d, "f", "y")
	st1, _ := d.Stat(r, "f", false)
	if st1.Mtim <= st0.Mtim || st1.Ctim <= st0.Ctim {
		t.Errorf("write did not move mtime/ctime: %+v -> %+v", st0, st1)
	}
	root0, _ := d.Stat(r, ".", false)
	ok(t, "mkdir", d.Mkdir(r, "d"))
	root1, _ := d.Stat(r, ".", false)
	if root1.Mtim <= root0.Mtim {
		t.Errorf("mkdir did not move the parent's mtime")
	}

	ok(t, "settimes", d.SetTimes(r, "f", true, 111, 222, SetAtim|SetMtim))
	st2, _ := d.Stat(r, "f", false)
	if st2.Atim != 111 || st2.Mtim != 222 || st2.Ctim <= st1.Ctim {
		t.Errorf("after SetTimes(111, 222): %+v", st2)
	}
	ok(t, "settimes", d.SetTimes(r, "f", true, 0, 0, SetMtimNow))
	st3, _ := d.Stat(r, "f", false)
	if st3.Atim != 111 || st3.Mtim <= 222 {
		t.Errorf("after SetTimes(mtime now): %+v; atime must stay 111", st3)
	}
	// Relatime: a read moves atime only when it is not newer than mtime.
	h := open(t, d, "f", Read)
	h.ReadAt(make([]byte, 1), 0)
	st4 := h.Stat()
	if st4.Atim <= st3.Mtim {
		t.Errorf("read did not move an old atime: %+v", st4)
	}
	h.ReadAt(make([]byte, 1), 0)
	if st5 := h.Stat(); st5.Atim != st4.Atim {
		t.Errorf("second read moved atime again (relatime): %d -> %d", st4.Atim, st5.Atim)
	}
	// Symlink times are set on the link itself without follow.
	ok(t, "symlink", d.Symlink("f", r, "l"))
	ok(t, "settimes", d.SetTimes(r, "l", false, 5, 6, SetAtim|SetMtim))
	if lst, _ := d.Stat(r, "l", false); lst.Mtim != 6 {
		t.Errorf("link mtime = %d, want 6", lst.Mtim)
	}
	if fst, _ := d.Stat(r, "f", false); fst.Mtim == 6 {
		t.Errorf("nofollow SetTimes changed the target")
	}
}

func TestOpenTruncAndAccess(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "content")
	// Linux truncates on O_TRUNC even for a read-only open.
	h := open(t, d, "f", Read|Trunc)
	if h.Size() != 0 || h.Readable() != true || h.Writable() != false {
		t.Errorf("after O_RDONLY|O_TRUNC: size %d readable %v writable %v", h.Size(), h.Readable(), h.Writable())
	}
	h.Close()
	w := open(t, d, "f", Write)
	if w.Readable() {
		t.Errorf("write-only handle is readable")
	}
	write(t, w, "x", 3)
	if got, _ := d.ReadFile("f"); string(got) != "\x00\x00\x00x" {
		t.Errorf("write past the end = %q, want zeros then x", got)
	}
	if n, e := w.WriteAt(nil, 100); n != 0 || e != 0 || w.Size() != 4 {
		t.Errorf("empty write: n=%d %v size=%d, want no change", n, e, w.Size())
	}
}

func TestWriteFileErrors(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "x")
	ok(t, "mkdir", d.Mkdir(d.Root(), "dir"))
	for _, c := range []struct {
		path string
		want errno.Errno
		msg  string
	}{
		{"f/x", errno.ENOTDIR, "simulated disk: write f/x: a path element is not a directory (ENOTDIR)"},
		{"dir", errno.EISDIR, "simulated disk: write dir: is a directory (EISDIR)"},
		{"", errno.EISDIR, "simulated disk: write : is a directory (EISDIR)"},
	} {
		err := d.WriteFile(c.path, nil)
		pe, isPE := err.(*PathError)
		if !isPE || pe.Err != c.want || err.Error() != c.msg {
			t.Errorf("WriteFile(%q) = %v, want %q", c.path, err, c.msg)
		}
	}
	if _, err := d.ReadFile("missing"); err == nil || err.Error() != "simulated disk: read missing: no such file or directory (ENOENT)" {
		t.Errorf("ReadFile(missing) = %v", err)
	}
	if _, err := d.ReadFile("dir"); err == nil {
		t.Errorf("ReadFile(dir) succeeded")
	}
}

func TestWalk(t *testing.T) {
	d := newDisk(true)
	seed(t, d, "a.txt", "12345")
	seed(t, d, "a/b", "x")
	appendTo(t, d, "a.txt", "678")
	appendTo(t, d, "a.txt", "9")
	create(t, d, "a/new", "")
	ok(t, "symlink", d.Symlink("a.txt", d.Root(), "z"))
	var got []string
	d.Walk(func(p string, st Stat, durable int64, pending int) {
		got = append(got, fmt.Sprintf("%s %s size=%d durable=%d pending=%d", p, st.Type, st.Size, durable, pending))
	})
	want := []string{
		"a dir size=4096 durable=4096 pending=1", // the create of a/new
		"a/b file size=1 durable=1 pending=0",
		"a/new file size=0 durable=0 pending=0", // neither O_TRUNC on a new file nor an empty write is logged
		"a.txt file size=9 durable=5 pending=2",
		"z symlink size=5 durable=5 pending=0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walk:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
