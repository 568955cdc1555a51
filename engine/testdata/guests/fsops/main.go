// fsops checks that os, io/fs and path/filepath behave as they do on Linux:
// each check does real file system calls in its own directory and compares
// the outcome with what Linux gives. It prints "ok <name>" or
// "FAIL <name>: ..." per check and exits 1 if any failed.
//
// Linux is the reference: the same binary built natively passes every check
// when run in an empty temporary directory.
package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
)

type check struct {
	name string
	fn   func(dir string) error
}

var checks = []check{
	{"open_excl_existing", openExclExisting},
	{"open_excl_new", openExclNew},
	{"open_excl_symlink", openExclSymlink},
	{"open_creat_rdonly", openCreatRdonly},
	{"open_trunc", openTrunc},
	{"append_after_seek", appendAfterSeek},
	{"append_two_handles", appendTwoHandles},
	{"truncate_grow_shrink", truncateGrowShrink},
	{"truncate_keeps_offset", truncateKeepsOffset},
	{"truncate_path", truncatePath},
	{"truncate_readonly", truncateReadonly},
	{"pread_pwrite_offset", preadPwriteOffset},
	{"pwrite_past_end", pwritePastEnd},
	{"readat_eof", readAtEOF},
	{"seek_whence", seekWhence},
	{"seek_negative", seekNegative},
	{"seek_past_end_hole", seekPastEndHole},
	{"read_at_eof", readAtEOF2},
	{"shared_page_cache", sharedPageCache},
	{"readdir_sorted", readDirSorted},
	{"readdir_many", readDirMany},
	{"readdirnames_batches", readdirnamesBatches},
	{"readdir_rewind", readdirRewind},
	{"readdir_on_file", readdirOnFile},
	{"rename_over_file", renameOverFile},
	{"rename_dir_over_empty_dir", renameDirOverEmptyDir},
	{"rename_dir_over_nonempty", renameDirOverNonEmpty},
	{"rename_file_over_dir", renameFileOverDir},
	{"rename_dir_over_file", renameDirOverFile},
	{"rename_into_self", renameIntoSelf},
	{"rename_missing", renameMissing},
	{"rename_same_file", renameSameFile},
	{"remove_nonempty_dir", removeNonEmptyDir},
	{"remove_missing", removeMissing},
	{"remove_all", removeAll},
	{"mkdir_existing", mkdirExisting},
	{"mkdir_missing_parent", mkdirMissingParent},
	{"mkdir_all", mkdirAll},
	{"mkdir_all_through_file", mkdirAllThroughFile},
	{"symlink_basics", symlinkBasics},
	{"symlink_dangling", symlinkDangling},
	{"symlink_to_dir", symlinkToDir},
	{"symlink_loop", symlinkLoop},
	{"symlink_long_target", symlinkLongTarget},
	{"symlink_existing", symlinkExisting},
	{"readlink_not_symlink", readlinkNotSymlink},
	{"stat_sizes_modes", statSizesModes},
	{"stat_trailing_slash", statTrailingSlash},
	{"file_stat", fileStat},
	{"dir_nlink", dirNlink},
	{"chtimes_modtime", chtimesModtime},
	{"mtime_on_write", mtimeOnWrite},
	{"walkdir_order", walkDirOrder},
	{"fs_walkdir_dirfs", fsWalkDirDirFS},
	{"dirfs_readfile", dirFSReadFile},
	{"io_copy_files", ioCopyFiles},
	{"readfile_writefile", readFileWriteFile},
	{"big_file_chunks", bigFileChunks},
	{"enoent", errENOENT},
	{"enotdir", errENOTDIR},
	{"eisdir_open_write", errEISDIROpenWrite},
	{"eisdir_read_dir", errEISDIRReadDir},
	{"ebadf_write_readonly", errEBADFWriteReadonly},
	{"ebadf_read_writeonly", errEBADFReadWriteonly},
	{"closed_file", closedFile},
	{"sync_file_and_dir", syncFileAndDir},
	{"getwd_relative", getwdRelative},
	{"absolute_paths", absolutePaths},
	{"dot_and_dotdot", dotAndDotdot},
	{"create_temp", createTemp},
	{"mkdir_temp", mkdirTemp},
	{"hard_link_nlink", hardLinkNlink},
	{"hard_link_errors", hardLinkErrors},
	{"unlink_open_file", unlinkOpenFile},
	{"many_open_close", manyOpenClose},
	{"os_root", osRoot},
	{"open_nofollow", openNofollow},
	{"open_rdonly_trunc", openRdonlyTrunc},
	{"trailing_slash_ops", trailingSlashOps},
	{"name_too_long", nameTooLong},
	{"odd_names", oddNames},
	{"removed_dir_fd", removedDirFd},
	{"dir_mtime_on_create", dirMtimeOnCreate},
	{"sparse_large_offset", sparseLargeOffset},
	{"readdir_infos", readdirInfos},
	{"remove_all_large", removeAllLarge},
	{"copy_fs", copyFS},
	{"symlink_absolute_target", symlinkAbsoluteTarget},
	{"temp_dir_default", tempDirDefault},
}

func main() {
	durability := flag.Bool("durability", false, "report what survived, write with O_SYNC and without, then wait for a crash")
	skip := flag.String("skip", "", "comma-separated checks to skip")
	flag.Parse()
	if *durability {
		syncWrites()
		return
	}
	skipped := map[string]bool{}
	for _, n := range strings.Split(*skip, ",") {
		skipped[n] = true
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Println("FAIL getwd:", err)
		os.Exit(1)
	}
	fmt.Println("wd", wd)
	if err := os.Mkdir("fsops", 0o755); err != nil {
		fmt.Println("FAIL setup:", err)
		os.Exit(1)
	}
	failed := 0
	for _, c := range checks {
		if skipped[c.name] {
			fmt.Println("skip", c.name)
			continue
		}
		dir := filepath.Join("fsops", c.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			fmt.Printf("FAIL %s: setup: %v\n", c.name, err)
			failed++
			continue
		}
		if err := c.fn(dir); err != nil {
			fmt.Printf("FAIL %s: %v\n", c.name, err)
			failed++
		} else {
			fmt.Println("ok", c.name)
		}
	}
	fmt.Printf("%d checks, %d failed\n", len(checks), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

// syncWrites reports the files an earlier incarnation wrote, then writes
// one file with O_SYNC and one without fsync, and waits to be crashed. Only
// the O_SYNC data is promised to survive, as on Linux.
func syncWrites() {
	var found []string
	for _, n := range []string{"osync", "plain"} {
		if b, err := os.ReadFile(n); err == nil {
			found = append(found, fmt.Sprintf("%s=%q", n, b))
		}
	}
	fmt.Println("found", found)
	f, err := os.OpenFile("osync", os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_SYNC, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	f.WriteString("one")
	f.WriteString("two")
	g, err := os.OpenFile("plain", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	g.WriteString("lost")
	fmt.Println("wrote")
	time.Sleep(time.Hour)
}

// ---- helpers ----

// errf reports a mismatch as "got ..., want ...".
func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func write(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

func content(path string, want string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %v", path, err)
	}
	if string(b) != want {
		return errf("%s holds %q, want %q", path, b, want)
	}
	return nil
}

// wantErr checks that err wraps every target.
func wantErr(what string, err error, targets ...error) error {
	for _, t := range targets {
		if !errors.Is(err, t) {
			return errf("%s: got error %v, want %v", what, err, t)
		}
	}
	return nil
}

// wantErrno checks that err is the errno Linux gives.
func wantErrno(what string, err error, want syscall.Errno) error {
	var en syscall.Errno
	if !errors.As(err, &en) || en != want {
		return errf("%s: got error %v, want %v (%s)", what, err, want, errnoName(want))
	}
	return nil
}

func errnoName(e syscall.Errno) string {
	for _, n := range []struct {
		e    syscall.Errno
		name string
	}{{syscall.ENOENT, "ENOENT"}, {syscall.EEXIST, "EEXIST"}, {syscall.ENOTDIR, "ENOTDIR"}, {syscall.EISDIR, "EISDIR"},
		{syscall.ENOTEMPTY, "ENOTEMPTY"}, {syscall.EBADF, "EBADF"}, {syscall.EINVAL, "EINVAL"}, {syscall.ELOOP, "ELOOP"},
		{syscall.EPERM, "EPERM"}} {
		if n.e == e {
			return n.name
		}
	}
	return "?"
}

func offset(f *os.File) int64 {
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return -1
	}
	return off
}

func names(ents []fs.DirEntry) []string {
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

func nlink(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

// ---- open flags ----

func openExclExisting(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "x"); err != nil {
		return err
	}
	_, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if e := wantErr("O_EXCL on an existing file", err, fs.ErrExist, syscall.EEXIST); e != nil {
		return e
	}
	if !os.IsExist(err) {
		return errf("os.IsExist(%v) = false, want true", err)
	}
	return content(p, "x")
}

func openExclNew(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return errf("O_EXCL on a new file: %v", err)
	}
	if _, err := f.WriteString("new"); err != nil {
		return err
	}
	f.Close()
	return content(p, "new")
}

// O_EXCL never follows a symlink in the last element, even a dangling one.
func openExclSymlink(dir string) error {
	link := filepath.Join(dir, "link")
	if err := os.Symlink("target", link); err != nil {
		return err
	}
	_, err := os.OpenFile(link, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if e := wantErr("O_EXCL on a dangling symlink", err, fs.ErrExist); e != nil {
		return e
	}
	if _, err := os.Lstat(filepath.Join(dir, "target")); !errors.Is(err, fs.ErrNotExist) {
		return errf("O_EXCL created the symlink's target: lstat gives %v", err)
	}
	// Without O_EXCL, O_CREATE through a dangling symlink creates the target.
	f, err := os.OpenFile(link, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return errf("O_CREATE through a dangling symlink: %v", err)
	}
	f.WriteString("t")
	f.Close()
	return content(filepath.Join(dir, "target"), "t")
}

func openCreatRdonly(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return errf("O_CREATE|O_RDONLY: %v", err)
	}
	defer f.Close()
	if fi, err := os.Stat(p); err != nil || fi.Size() != 0 || !fi.Mode().IsRegular() {
		return errf("stat after O_CREATE|O_RDONLY: %v %v", fi, err)
	}
	_, err = f.Write([]byte("x"))
	return wantErrno("write to O_RDONLY", err, syscall.EBADF)
}

func openTrunc(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "hello"); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	fi, _ := f.Stat()
	if fi.Size() != 0 {
		return errf("size after O_TRUNC = %d, want 0", fi.Size())
	}
	f.WriteString("hi")
	f.Close()
	return content(p, "hi")
}

func appendAfterSeek(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "abc"); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if off := offset(f); off != 0 {
		return errf("offset after open with O_APPEND = %d, want 0", off)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if _, err := f.WriteString("def"); err != nil {
		return err
	}
	if off := offset(f); off != 6 {
		return errf("offset after an O_APPEND write = %d, want 6 (the end)", off)
	}
	if _, err := f.Seek(1, io.SeekStart); err != nil {
		return err
	}
	b := make([]byte, 2)
	if n, err := f.Read(b); n != 2 || string(b) != "bc" {
		return errf("read after seek in an O_APPEND file = %q %v, want \"bc\"", b[:n], err)
	}
	f.WriteString("g")
	return content(p, "abcdefg")
}

func appendTwoHandles(dir string) error {
	p := filepath.Join(dir, "a")
	f1, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f1.Close()
	f2, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f2.Close()
	for _, w := range []struct {
		f *os.File
		s string
	}{{f1, "1"}, {f2, "22"}, {f1, "333"}, {f2, "4444"}} {
		if _, err := w.f.WriteString(w.s); err != nil {
			return err
		}
	}
	return content(p, "1223334444")
}

// ---- truncate ----

func truncateGrowShrink(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "abc"); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(8); err != nil {
		return err
	}
	if err := content(p, "abc\x00\x00\x00\x00\x00"); err != nil {
		return errf("grow: %v", err)
	}
	if err := f.Truncate(2); err != nil {
		return err
	}
	if err := content(p, "ab"); err != nil {
		return errf("shrink: %v", err)
	}
	// Growing again shows zeros, not the old bytes.
	if err := f.Truncate(3); err != nil {
		return err
	}
	if err := content(p, "ab\x00"); err != nil {
		return errf("regrow: %v", err)
	}
	err = f.Truncate(-1)
	return wantErrno("truncate to -1", err, syscall.EINVAL)
}

func truncateKeepsOffset(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("abcd")
	if err := f.Truncate(1); err != nil {
		return err
	}
	if off := offset(f); off != 4 {
		return errf("offset after ftruncate = %d, want 4 (unchanged)", off)
	}
	f.WriteString("x")
	return content(p, "a\x00\x00\x00x")
}

func truncatePath(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "hello"); err != nil {
		return err
	}
	if err := os.Truncate(p, 2); err != nil {
		return err
	}
	if err := content(p, "he"); err != nil {
		return err
	}
	if err := os.Truncate(p, 4); err != nil {
		return err
	}
	if err := content(p, "he\x00\x00"); err != nil {
		return err
	}
	err := os.Truncate(filepath.Join(dir, "missing"), 1)
	if e := wantErr("truncate a missing file", err, fs.ErrNotExist); e != nil {
		return e
	}
	err = os.Truncate(dir, 0)
	return wantErrno("truncate a directory", err, syscall.EISDIR)
}

func truncateReadonly(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "hello"); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	err = f.Truncate(0)
	if err == nil {
		return errf("ftruncate on a read-only file succeeded, want EINVAL or EBADF")
	}
	if !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.EBADF) {
		return errf("ftruncate on a read-only file: got %v, want EINVAL or EBADF", err)
	}
	return content(p, "hello")
}

// ---- offsets ----

func preadPwriteOffset(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("hello world")
	if _, err := f.Seek(2, io.SeekStart); err != nil {
		return err
	}
	b := make([]byte, 5)
	if n, err := f.ReadAt(b, 6); n != 5 || err != nil || string(b) != "world" {
		return errf("ReadAt(6) = %q %v, want \"world\"", b[:n], err)
	}
	if off := offset(f); off != 2 {
		return errf("offset after ReadAt = %d, want 2", off)
	}
	if _, err := f.WriteAt([]byte("HELLO"), 0); err != nil {
		return err
	}
	if off := offset(f); off != 2 {
		return errf("offset after WriteAt = %d, want 2", off)
	}
	b = make([]byte, 4)
	if n, _ := f.Read(b); string(b[:n]) != "LLO " {
		return errf("read after WriteAt = %q, want \"LLO \"", b[:n])
	}
	return content(p, "HELLO world")
}

func pwritePastEnd(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("ab")
	if _, err := f.WriteAt([]byte("z"), 5); err != nil {
		return err
	}
	fi, _ := f.Stat()
	if fi.Size() != 6 {
		return errf("size after WriteAt past the end = %d, want 6", fi.Size())
	}
	if off := offset(f); off != 2 {
		return errf("offset after WriteAt past the end = %d, want 2", off)
	}
	return content(p, "ab\x00\x00\x00z")
}

func readAtEOF(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "abc"); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 5)
	n, err := f.ReadAt(b, 1)
	if n != 2 || err != io.EOF || string(b[:n]) != "bc" {
		return errf("ReadAt across the end = %d %q %v, want 2 \"bc\" EOF", n, b[:n], err)
	}
	n, err = f.ReadAt(b, 10)
	if n != 0 || err != io.EOF {
		return errf("ReadAt past the end = %d %v, want 0 EOF", n, err)
	}
	_, err = f.ReadAt(b, -1)
	if err == nil {
		return errf("ReadAt(-1) succeeded, want an error")
	}
	return nil
}

func seekWhence(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "0123456789"); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, s := range []struct {
		off    int64
		whence int
		want   int64
	}{
		{-3, io.SeekEnd, 7},
		{1, io.SeekCurrent, 8},
		{-8, io.SeekCurrent, 0},
		{4, io.SeekStart, 4},
		{0, io.SeekEnd, 10},
	} {
		got, err := f.Seek(s.off, s.whence)
		if err != nil || got != s.want {
			return errf("Seek(%d, %d) = %d %v, want %d", s.off, s.whence, got, err, s.want)
		}
	}
	f.Seek(-3, io.SeekEnd)
	b, _ := io.ReadAll(f)
	if string(b) != "789" {
		return errf("read after Seek(-3, end) = %q, want \"789\"", b)
	}
	return nil
}

func seekNegative(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "abc"); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.Seek(2, io.SeekStart)
	_, err = f.Seek(-1, io.SeekStart)
	if e := wantErrno("Seek(-1, start)", err, syscall.EINVAL); e != nil {
		return e
	}
	_, err = f.Seek(-4, io.SeekEnd)
	if e := wantErrno("Seek(-4, end) of a 3-byte file", err, syscall.EINVAL); e != nil {
		return e
	}
	if off := offset(f); off != 2 {
		return errf("offset after failed seeks = %d, want 2", off)
	}
	return nil
}

func seekPastEndHole(dir string) error {
	p := filepath.Join(dir, "a")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("ab")
	if off, err := f.Seek(3, io.SeekEnd); off != 5 || err != nil {
		return errf("Seek(3, end) = %d %v, want 5", off, err)
	}
	if fi, _ := f.Stat(); fi.Size() != 2 {
		return errf("seeking past the end changed the size to %d", fi.Size())
	}
	f.WriteString("c")
	return content(p, "ab\x00\x00\x00c")
}

func readAtEOF2(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "ab"); err != nil {
		return err
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	b := make([]byte, 8)
	if n, err := f.Read(b); n != 2 || err != nil {
		return errf("first read = %d %v, want 2 nil", n, err)
	}
	if n, err := f.Read(b); n != 0 || err != io.EOF {
		return errf("read at the end = %d %v, want 0 EOF", n, err)
	}
	if n, err := f.Read(b[:0]); n != 0 || err != nil {
		return errf("zero-length read = %d %v, want 0 nil", n, err)
	}
	return nil
}

// Two descriptors on one file see each other's writes at once.
func sharedPageCache(dir string) error {
	p := filepath.Join(dir, "a")
	w, err := os.Create(p)
	if err != nil {
		return err
	}
	defer w.Close()
	r, err := os.Open(p)
	if err != nil {
		return err
	}
	defer r.Close()
	w.WriteString("one")
	b := make([]byte, 10)
	if n, _ := r.Read(b); string(b[:n]) != "one" {
		return errf("reader saw %q, want \"one\"", b[:n])
	}
	w.WriteString("two")
	if n, _ := r.Read(b); string(b[:n]) != "two" {
		return errf("reader saw %q, want \"two\"", b[:n])
	}
	return nil
}

// ---- directories ----

func readDirSorted(dir string) error {
	for _, n := range []string{"c", "a", "B", "b", "_z"} {
		if err := write(filepath.Join(dir, n), n); err != nil {
			return err
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		return err
	}
	if err := os.Symlink("a", filepath.Join(dir, "l")); err != nil {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	want := []string{"B", "_z", "a", "b", "c", "d", "l"}
	if got := names(ents); !slices.Equal(got, want) {
		return errf("ReadDir = %v, want %v", got, want)
	}
	types := map[string]fs.FileMode{"a": 0, "d": fs.ModeDir, "l": fs.ModeSymlink}
	for _, e := range ents {
		if t, ok := types[e.Name()]; ok && e.Type() != t {
			return errf("%s: Type() = %v, want %v", e.Name(), e.Type(), t)
		}
	}
	info, err := ents[5].Info()
	if err != nil || !info.IsDir() {
		return errf("d.Info() = %v %v, want a directory", info, err)
	}
	return nil
}

// A directory larger than one readdir buffer lists every entry once.
func readDirMany(dir string) error {
	var want []string
	for i := 0; i < 400; i++ {
		n := fmt.Sprintf("file-with-a-rather-long-name-%04d", i)
		want = append(want, n)
		f, err := os.Create(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		f.Close()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if got := names(ents); !slices.Equal(got, want) {
		return errf("ReadDir listed %d entries, want %d in order", len(got), len(want))
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return err
	}
	sort.Strings(all)
	if !slices.Equal(all, want) {
		return errf("Readdirnames(-1) listed %d entries, want %d", len(all), len(want))
	}
	return nil
}

func readdirnamesBatches(dir string) error {
	want := []string{"a", "b", "c", "d", "e"}
	for _, n := range want {
		if err := write(filepath.Join(dir, n), ""); err != nil {
			return err
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	var all []string
	var sizes []int
	for {
		ns, err := f.Readdirnames(2)
		if err == io.EOF {
			if len(ns) != 0 {
				return errf("Readdirnames returned %v with io.EOF", ns)
			}
			break
		}
		if err != nil {
			return err
		}
		sizes = append(sizes, len(ns))
		all = append(all, ns...)
		if len(sizes) > 10 {
			return errf("Readdirnames(2) never returned io.EOF")
		}
	}
	if !slices.Equal(sizes, []int{2, 2, 1}) {
		return errf("Readdirnames(2) batch sizes = %v, want [2 2 1]", sizes)
	}
	sort.Strings(all)
	if !slices.Equal(all, want) {
		return errf("Readdirnames batches = %v, want %v", all, want)
	}
	// After io.EOF, n <= 0 returns an empty list and no error.
	if rest, err := f.Readdirnames(-1); len(rest) != 0 || err != nil {
		return errf("Readdirnames(-1) after EOF = %v %v, want [] nil", rest, err)
	}
	return nil
}

func readdirRewind(dir string) error {
	for _, n := range []string{"x", "y", "z"} {
		if err := write(filepath.Join(dir, n), ""); err != nil {
			return err
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	first, err := f.Readdirnames(-1)
	if err != nil || len(first) != 3 {
		return errf("first listing = %v %v", first, err)
	}
	if off, err := f.Seek(0, io.SeekStart); off != 0 || err != nil {
		return errf("Seek(0, start) on a directory = %d %v, want 0 nil", off, err)
	}
	second, err := f.Readdirnames(-1)
	if err != nil || len(second) != 3 {
		return errf("listing after rewinding = %v %v, want 3 names", second, err)
	}
	return nil
}

func readdirOnFile(dir string) error {
	p := filepath.Join(dir, "a")
	if err := write(p, "x"); err != nil {
		return err
	}
	_, err := os.ReadDir(p)
	return wantErrno("ReadDir of a file", err, syscall.ENOTDIR)
}

// ---- rename ----

func renameOverFile(dir string) error {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := write(a, "A"); err != nil {
		return err
	}
	if err := write(b, "B"); err != nil {
		return err
	}
	// An open descriptor on the replaced file keeps its old content.
	old, err := os.Open(b)
	if err != nil {
		return err
	}
	defer old.Close()
	if err := os.Rename(a, b); err != nil {
		return errf("rename over an existing file: %v", err)
	}
	if _, err := os.Stat(a); !errors.Is(err, fs.ErrNotExist) {
		return errf("old name still there: %v", err)
	}
	if got, _ := io.ReadAll(old); string(got) != "B" {
		return errf("descriptor on the replaced file reads %q, want \"B\"", got)
	}
	return content(b, "A")
}

// os.Rename refuses to replace a directory (EEXIST) on every Unix; the
// rename(2) system call replaces an empty one.
func renameDirOverEmptyDir(dir string) error {
	x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
	os.Mkdir(x, 0o755)
	os.Mkdir(y, 0o755)
	write(filepath.Join(x, "f"), "f")
	err := os.Rename(x, y)
	if e := wantErrno("os.Rename a dir over a dir", err, syscall.EEXIST); e != nil {
		return e
	}
	if err := syscall.Rename(x, y); err != nil {
		return errf("rename(2) a dir over an empty dir: %v", err)
	}
	if _, err := os.Stat(x); !errors.Is(err, fs.ErrNotExist) {
		return errf("old dir still there: %v", err)
	}
	return content(filepath.Join(y, "f"), "f")
}

func renameDirOverNonEmpty(dir string) error {
	x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
	os.Mkdir(x, 0o755)
	os.Mkdir(y, 0o755)
	write(filepath.Join(y, "keep"), "k")
	err := syscall.Rename(x, y)
	// POSIX allows EEXIST; Linux file systems give ENOTEMPTY.
	if e := wantErrno("rename(2) a dir over a non-empty dir", err, syscall.ENOTEMPTY); e != nil {
		return e
	}
	return content(filepath.Join(y, "keep"), "k")
}

func renameFileOverDir(dir string) error {
	f, d := filepath.Join(dir, "f"), filepath.Join(dir, "d")
	write(f, "f")
	os.Mkdir(d, 0o755)
	// os.Rename checks this itself and reports EEXIST; the kernel says EISDIR.
	err := os.Rename(f, d)
	if e := wantErrno("os.Rename a file over a dir", err, syscall.EEXIST); e != nil {
		return e
	}
	err = syscall.Rename(f, d)
	if e := wantErrno("rename(2) a file over a dir", err, syscall.EISDIR); e != nil {
		return e
	}
	return content(f, "f")
}

func renameDirOverFile(dir string) error {
	f, d := filepath.Join(dir, "f"), filepath.Join(dir, "d")
	write(f, "f")
	os.Mkdir(d, 0o755)
	err := os.Rename(d, f)
	if e := wantErrno("rename a dir over a file", err, syscall.ENOTDIR); e != nil {
		return e
	}
	return content(f, "f")
}

func renameIntoSelf(dir string) error {
	d := filepath.Join(dir, "d")
	os.MkdirAll(filepath.Join(d, "sub"), 0o755)
	err := os.Rename(d, filepath.Join(d, "sub", "d2"))
	return wantErrno("rename a dir into its own subdir", err, syscall.EINVAL)
}

func renameMissing(dir string) error {
	err := os.Rename(filepath.Join(dir, "nope"), filepath.Join(dir, "x"))
	if e := wantErr("rename a missing file", err, fs.ErrNotExist, syscall.ENOENT); e != nil {
		return e
	}
	write(filepath.Join(dir, "a"), "a")
	err = os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "nodir", "a"))
	return wantErr("rename into a missing dir", err, syscall.ENOENT)
}

func renameSameFile(dir string) error {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(a, "a")
	if err := os.Rename(a, a); err != nil {
		return errf("rename a file onto itself: %v", err)
	}
	if err := os.Link(a, b); err != nil {
		return err
	}
	// Renaming onto another link of the same file does nothing at all.
	if err := os.Rename(a, b); err != nil {
		return errf("rename onto a hard link of itself: %v", err)
	}
	if err := content(a, "a"); err != nil {
		return errf("both names must remain: %v", err)
	}
	return content(b, "a")
}

// ---- remove, mkdir ----

func removeNonEmptyDir(dir string) error {
	d := filepath.Join(dir, "d")
	os.Mkdir(d, 0o755)
	write(filepath.Join(d, "f"), "")
	err := os.Remove(d)
	if e := wantErrno("remove a non-empty dir", err, syscall.ENOTEMPTY); e != nil {
		return e
	}
	err = syscall.Rmdir(filepath.Join(d, "f"))
	if e := wantErrno("rmdir a file", err, syscall.ENOTDIR); e != nil {
		return e
	}
	err = syscall.Unlink(d)
	if e := wantErrno("unlink a dir", err, syscall.EISDIR); e != nil {
		return e
	}
	os.Remove(filepath.Join(d, "f"))
	if err := os.Remove(d); err != nil {
		return errf("remove the emptied dir: %v", err)
	}
	return nil
}

func removeMissing(dir string) error {
	err := os.Remove(filepath.Join(dir, "nope"))
	return wantErr("remove a missing file", err, fs.ErrNotExist, syscall.ENOENT)
}

func removeAll(dir string) error {
	root := filepath.Join(dir, "tree")
	for _, p := range []string{"a/b/c", "a/d", "e"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			return err
		}
	}
	for i := 0; i < 50; i++ {
		write(filepath.Join(root, "a/b/c", fmt.Sprint(i)), "x")
	}
	write(filepath.Join(root, "a/f"), "x")
	os.Symlink("../e", filepath.Join(root, "a/link"))
	// A symlink to outside the tree must be removed, not followed.
	outside := filepath.Join(dir, "outside")
	write(outside, "keep")
	os.Symlink("../../outside", filepath.Join(root, "e/out"))
	if err := os.RemoveAll(root); err != nil {
		return errf("RemoveAll: %v", err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		return errf("tree still there after RemoveAll: %v", err)
	}
	if err := os.RemoveAll(root); err != nil {
		return errf("RemoveAll of a missing path = %v, want nil", err)
	}
	if err := os.RemoveAll(outside + "/."); err == nil {
		return errf("RemoveAll(path/.) succeeded, want EINVAL")
	}
	return content(outside, "keep")
}

func mkdirExisting(dir string) error {
	err := os.Mkdir(dir, 0o755)
	if e := wantErr("mkdir an existing dir", err, fs.ErrExist, syscall.EEXIST); e != nil {
		return e
	}
	write(filepath.Join(dir, "f"), "")
	err = os.Mkdir(filepath.Join(dir, "f"), 0o755)
	return wantErr("mkdir over a file", err, syscall.EEXIST)
}

func mkdirMissingParent(dir string) error {
	err := os.Mkdir(filepath.Join(dir, "a", "b"), 0o755)
	return wantErr("mkdir with a missing parent", err, fs.ErrNotExist, syscall.ENOENT)
}

func mkdirAll(dir string) error {
	p := filepath.Join(dir, "p", "q", "r")
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return errf("MkdirAll of an existing path = %v, want nil", err)
	}
	if err := os.MkdirAll(p+"/", 0o755); err != nil {
		return errf("MkdirAll with a trailing slash = %v, want nil", err)
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return errf("stat after MkdirAll = %v %v", fi, err)
	}
	return nil
}

func mkdirAllThroughFile(dir string) error {
	f := filepath.Join(dir, "f")
	write(f, "")
	err := os.MkdirAll(filepath.Join(f, "x", "y"), 0o755)
	if e := wantErrno("MkdirAll below a file", err, syscall.ENOTDIR); e != nil {
		return e
	}
	err = os.MkdirAll(f, 0o755)
	return wantErrno("MkdirAll of a file", err, syscall.ENOTDIR)
}

// ---- symlinks ----

func symlinkBasics(dir string) error {
	t, l := filepath.Join(dir, "target"), filepath.Join(dir, "link")
	if err := write(t, "hello"); err != nil {
		return err
	}
	if err := os.Symlink("target", l); err != nil {
		return err
	}
	if got, err := os.Readlink(l); got != "target" || err != nil {
		return errf("Readlink = %q %v, want \"target\"", got, err)
	}
	li, err := os.Lstat(l)
	if err != nil {
		return err
	}
	if li.Mode()&fs.ModeSymlink == 0 || li.Mode().IsRegular() {
		return errf("Lstat mode = %v, want a symlink", li.Mode())
	}
	if li.Size() != int64(len("target")) {
		return errf("Lstat size = %d, want %d (the target's length)", li.Size(), len("target"))
	}
	si, err := os.Stat(l)
	if err != nil {
		return err
	}
	if !si.Mode().IsRegular() || si.Size() != 5 || si.Name() != "link" {
		return errf("Stat through the link = %v %d %q, want a regular file of 5 bytes named link", si.Mode(), si.Size(), si.Name())
	}
	ti, _ := os.Stat(t)
	if !os.SameFile(si, ti) || os.SameFile(li, ti) {
		return errf("SameFile(stat link, target) = %v, SameFile(lstat link, target) = %v; want true, false",
			os.SameFile(si, ti), os.SameFile(li, ti))
	}
	if err := content(l, "hello"); err != nil {
		return err
	}
	// Removing the link leaves the target.
	if err := os.Remove(l); err != nil {
		return err
	}
	return content(t, "hello")
}

func symlinkDangling(dir string) error {
	l := filepath.Join(dir, "link")
	if err := os.Symlink("nowhere", l); err != nil {
		return err
	}
	_, err := os.Stat(l)
	if e := wantErr("stat a dangling link", err, fs.ErrNotExist); e != nil {
		return e
	}
	if fi, err := os.Lstat(l); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return errf("Lstat a dangling link = %v %v, want a symlink", fi, err)
	}
	_, err = os.Open(l)
	return wantErr("open a dangling link", err, fs.ErrNotExist)
}

func symlinkToDir(dir string) error {
	d, l := filepath.Join(dir, "d"), filepath.Join(dir, "ld")
	os.Mkdir(d, 0o755)
	write(filepath.Join(d, "f"), "in d")
	if err := os.Symlink("d", l); err != nil {
		return err
	}
	ents, err := os.ReadDir(l)
	if err != nil || !slices.Equal(names(ents), []string{"f"}) {
		return errf("ReadDir through a dir link = %v %v, want [f]", names(ents), err)
	}
	if err := content(filepath.Join(l, "f"), "in d"); err != nil {
		return err
	}
	if fi, err := os.Stat(l + "/"); err != nil || !fi.IsDir() {
		return errf("Stat(link/) = %v %v, want a dir", fi, err)
	}
	// Removing "link/" names the directory, which is not empty... Remove
	// of the link itself removes only the link.
	if err := os.Remove(l); err != nil {
		return errf("remove a dir symlink: %v", err)
	}
	return content(filepath.Join(d, "f"), "in d")
}

func symlinkLoop(dir string) error {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.Symlink("b", a)
	os.Symlink("a", b)
	_, err := os.Stat(a)
	if e := wantErrno("stat a symlink loop", err, syscall.ELOOP); e != nil {
		return e
	}
	_, err = os.Open(filepath.Join(a, "x"))
	return wantErrno("open through a symlink loop", err, syscall.ELOOP)
}

func symlinkLongTarget(dir string) error {
	target := strings.Repeat("long-component/", 20) + "end"
	l := filepath.Join(dir, "link")
	if err := os.Symlink(target, l); err != nil {
		return err
	}
	got, err := os.Readlink(l)
	if err != nil || got != target {
		return errf("Readlink of a %d-byte target = %d bytes %v", len(target), len(got), err)
	}
	return nil
}

func symlinkExisting(dir string) error {
	p := filepath.Join(dir, "a")
	write(p, "")
	err := os.Symlink("x", p)
	return wantErr("symlink over an existing name", err, fs.ErrExist, syscall.EEXIST)
}

func readlinkNotSymlink(dir string) error {
	p := filepath.Join(dir, "a")
	write(p, "")
	_, err := os.Readlink(p)
	if e := wantErrno("readlink a regular file", err, syscall.EINVAL); e != nil {
		return e
	}
	_, err = os.Readlink(filepath.Join(dir, "missing"))
	return wantErr("readlink a missing file", err, fs.ErrNotExist)
}

// ---- stat ----

func statSizesModes(dir string) error {
	p := filepath.Join(dir, "f")
	if err := write(p, strings.Repeat("x", 1234)); err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.Size() != 1234 || !fi.Mode().IsRegular() || fi.IsDir() || fi.Name() != "f" {
		return errf("file: size %d mode %v name %q, want 1234 regular \"f\"", fi.Size(), fi.Mode(), fi.Name())
	}
	// WASI has no permission bits; Go's wasip1 port reports 0600 for files
	// and 0700 for directories. Linux with umask 022 gives 0644 and 0755.
	// Both have the owner's read and write bits.
	if fi.Mode().Perm()&0o600 != 0o600 || fi.Mode().Type() != 0 {
		return errf("file mode = %v, want owner rw and no type bits", fi.Mode())
	}
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !di.IsDir() || di.Mode().Type() != fs.ModeDir || di.Mode().Perm()&0o700 != 0o700 || di.Mode().IsRegular() {
		return errf("dir mode = %v, want drwx for the owner", di.Mode())
	}
	e := filepath.Join(dir, "empty")
	write(e, "")
	if fi, _ := os.Stat(e); fi.Size() != 0 {
		return errf("empty file size = %d", fi.Size())
	}
	return nil
}

func statTrailingSlash(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "")
	_, err := os.Stat(p + "/")
	if e := wantErrno("stat file/", err, syscall.ENOTDIR); e != nil {
		return e
	}
	_, err = os.Open(p + "/")
	if e := wantErrno("open file/", err, syscall.ENOTDIR); e != nil {
		return e
	}
	if fi, err := os.Stat(dir + "/"); err != nil || !fi.IsDir() {
		return errf("stat dir/ = %v %v", fi, err)
	}
	return nil
}

func fileStat(dir string) error {
	p := filepath.Join(dir, "f")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	f.WriteString("12345")
	fi, err := f.Stat()
	if err != nil || fi.Size() != 5 || !fi.Mode().IsRegular() || fi.Name() != "f" {
		return errf("f.Stat() = %v %v, want 5-byte regular file \"f\"", fi, err)
	}
	pi, _ := os.Stat(p)
	if !os.SameFile(fi, pi) {
		return errf("f.Stat() and os.Stat() are not the same file")
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if di, err := d.Stat(); err != nil || !di.IsDir() {
		return errf("dir f.Stat() = %v %v, want a dir", di, err)
	}
	return nil
}

func dirNlink(dir string) error {
	for _, s := range []string{"a", "b", "c"} {
		os.Mkdir(filepath.Join(dir, s), 0o755)
	}
	write(filepath.Join(dir, "f"), "")
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if n := nlink(fi); n != 5 {
		return errf("nlink of a dir with 3 subdirs = %d, want 5", n)
	}
	fi, _ = os.Stat(filepath.Join(dir, "a"))
	if n := nlink(fi); n != 2 {
		return errf("nlink of an empty dir = %d, want 2", n)
	}
	return nil
}

func chtimesModtime(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "x")
	mt := time.Date(2020, 1, 2, 3, 4, 5, 123456789, time.UTC)
	at := time.Date(2021, 6, 7, 8, 9, 10, 0, time.UTC)
	if err := os.Chtimes(p, at, mt); err != nil {
		return err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.ModTime().Equal(mt) {
		return errf("ModTime = %v, want %v", fi.ModTime().UTC(), mt)
	}
	// A zero time leaves that time alone.
	mt2 := time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(p, time.Time{}, mt2); err != nil {
		return err
	}
	fi, _ = os.Stat(p)
	if !fi.ModTime().Equal(mt2) {
		return errf("ModTime after the second Chtimes = %v, want %v", fi.ModTime().UTC(), mt2)
	}
	if err := os.Chtimes(p, at, time.Time{}); err != nil {
		return err
	}
	fi, _ = os.Stat(p)
	if !fi.ModTime().Equal(mt2) {
		return errf("Chtimes with a zero mtime changed ModTime to %v", fi.ModTime().UTC())
	}
	err = os.Chtimes(filepath.Join(dir, "missing"), at, mt)
	return wantErr("Chtimes on a missing file", err, fs.ErrNotExist)
}

// Writing a file sets its modification time to about now.
func mtimeOnWrite(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "x")
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(p, old, old)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	f.WriteString("y")
	f.Close()
	fi, _ := os.Stat(p)
	if d := time.Since(fi.ModTime()); d < -time.Second || d > time.Minute {
		return errf("ModTime after a write = %v, now is %v", fi.ModTime().UTC(), time.Now().UTC())
	}
	return nil
}

// ---- walking ----

func makeTree(root string) error {
	for _, p := range []string{"b/y", "a/z", "a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			return err
		}
	}
	for _, p := range []string{"b/y/1", "a/z/2", "a/a.txt", "a/B.txt", "top", "c/x"} {
		if err := write(filepath.Join(root, p), p); err != nil {
			return err
		}
	}
	return nil
}

var treeOrder = []string{".", "a", "a/B.txt", "a/a.txt", "a/b", "a/z", "a/z/2", "b", "b/y", "b/y/1", "c", "c/x", "top"}

func walkDirOrder(dir string) error {
	root := filepath.Join(dir, "tree")
	if err := makeTree(root); err != nil {
		return err
	}
	var got []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	if !slices.Equal(got, treeOrder) {
		return errf("WalkDir order = %v, want %v", got, treeOrder)
	}
	// SkipDir prunes a directory.
	got = nil
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, path)
		if rel == "a" {
			return filepath.SkipDir
		}
		got = append(got, filepath.ToSlash(rel))
		return nil
	})
	want := []string{".", "b", "b/y", "b/y/1", "c", "c/x", "top"}
	if !slices.Equal(got, want) {
		return errf("WalkDir with SkipDir = %v, want %v", got, want)
	}
	// filepath.Walk visits in the same order, with Lstat infos.
	got = nil
	filepath.Walk(root, func(path string, info fs.FileInfo, err error) error {
		rel, _ := filepath.Rel(root, path)
		got = append(got, filepath.ToSlash(rel))
		return err
	})
	if !slices.Equal(got, treeOrder) {
		return errf("Walk order = %v, want %v", got, treeOrder)
	}
	return nil
}

func fsWalkDirDirFS(dir string) error {
	root := filepath.Join(dir, "tree")
	if err := makeTree(root); err != nil {
		return err
	}
	var got []string
	err := fs.WalkDir(os.DirFS(root), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		got = append(got, path)
		return nil
	})
	if err != nil {
		return err
	}
	if !slices.Equal(got, treeOrder) {
		return errf("fs.WalkDir order = %v, want %v", got, treeOrder)
	}
	matches, err := fs.Glob(os.DirFS(root), "a/*.txt")
	if err != nil || !slices.Equal(matches, []string{"a/B.txt", "a/a.txt"}) {
		return errf("fs.Glob(a/*.txt) = %v %v", matches, err)
	}
	return nil
}

func dirFSReadFile(dir string) error {
	root := filepath.Join(dir, "tree")
	if err := makeTree(root); err != nil {
		return err
	}
	fsys := os.DirFS(root)
	b, err := fs.ReadFile(fsys, "a/z/2")
	if err != nil || string(b) != "a/z/2" {
		return errf("fs.ReadFile = %q %v", b, err)
	}
	_, err = fs.ReadFile(fsys, "../outside")
	if e := wantErr("fs.ReadFile(../outside)", err, fs.ErrInvalid); e != nil {
		return e
	}
	fi, err := fs.Stat(fsys, "b/y")
	if err != nil || !fi.IsDir() {
		return errf("fs.Stat(b/y) = %v %v", fi, err)
	}
	_, err = fs.Stat(fsys, "nope")
	return wantErr("fs.Stat(nope)", err, fs.ErrNotExist)
}

// ---- content ----

func ioCopyFiles(dir string) error {
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := bytes.Repeat([]byte("0123456789abcdef"), 70000) // 1.1 MB
	if err := os.WriteFile(src, data, 0o644); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	in.Seek(16, io.SeekStart)
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	out.WriteString("head")
	n, err := io.Copy(out, in)
	if err != nil || n != int64(len(data)-16) {
		return errf("io.Copy = %d %v, want %d", n, err, len(data)-16)
	}
	got, _ := os.ReadFile(dst)
	if !bytes.Equal(got, append([]byte("head"), data[16:]...)) {
		return errf("copied content differs (%d bytes)", len(got))
	}
	// CopyN from a section.
	out2, _ := os.Create(filepath.Join(dir, "dst2"))
	defer out2.Close()
	if n, err := io.Copy(out2, io.NewSectionReader(in, 32, 100)); n != 100 || err != nil {
		return errf("io.Copy of a section = %d %v", n, err)
	}
	return content(filepath.Join(dir, "dst2"), string(data[32:132]))
}

func readFileWriteFile(dir string) error {
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("a longer first version"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(p, []byte("short"), 0o644); err != nil {
		return err
	}
	if err := content(p, "short"); err != nil {
		return errf("WriteFile must truncate: %v", err)
	}
	_, err := os.ReadFile(filepath.Join(dir, "missing"))
	if e := wantErr("ReadFile of a missing file", err, fs.ErrNotExist); e != nil {
		return e
	}
	_, err = os.ReadFile(dir)
	return wantErrno("ReadFile of a directory", err, syscall.EISDIR)
}

func bigFileChunks(dir string) error {
	p := filepath.Join(dir, "big")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	const size = 6<<20 + 12345
	h := sha256.New()
	chunk := make([]byte, 64<<10+7)
	for written := 0; written < size; {
		n := min(len(chunk), size-written)
		for i := range chunk[:n] {
			chunk[i] = byte((written + i) * 7 >> 3)
		}
		if _, err := f.Write(chunk[:n]); err != nil {
			return err
		}
		h.Write(chunk[:n])
		written += n
	}
	if err := f.Close(); err != nil {
		return err
	}
	want := h.Sum(nil)
	fi, _ := os.Stat(p)
	if fi.Size() != size {
		return errf("size = %d, want %d", fi.Size(), size)
	}
	r, err := os.Open(p)
	if err != nil {
		return err
	}
	defer r.Close()
	h.Reset()
	buf := make([]byte, 10000)
	total := 0
	for {
		n, err := r.Read(buf)
		h.Write(buf[:n])
		total += n
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if total != size || !bytes.Equal(h.Sum(nil), want) {
		return errf("read back %d bytes with a different digest", total)
	}
	// A read in the middle with ReadAt.
	b := make([]byte, 3)
	off := int64(5<<20 + 3)
	r.ReadAt(b, off)
	for i := range b {
		if b[i] != byte((off+int64(i))*7>>3) {
			return errf("ReadAt(%d) = %v", off, b)
		}
	}
	return nil
}

// ---- errors ----

func errENOENT(dir string) error {
	_, err := os.Open(filepath.Join(dir, "missing"))
	if e := wantErr("open a missing file", err, fs.ErrNotExist, syscall.ENOENT); e != nil {
		return e
	}
	if !os.IsNotExist(err) {
		return errf("os.IsNotExist(%v) = false", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe.Op != "open" || pe.Path != filepath.Join(dir, "missing") {
		return errf("error %#v, want *fs.PathError{Op: open, Path: %s}", err, filepath.Join(dir, "missing"))
	}
	_, err = os.Stat(filepath.Join(dir, "missing", "x"))
	if e := wantErr("stat below a missing dir", err, syscall.ENOENT); e != nil {
		return e
	}
	_, err = os.Create(filepath.Join(dir, "missing", "x"))
	return wantErr("create below a missing dir", err, syscall.ENOENT)
}

func errENOTDIR(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "")
	_, err := os.Open(filepath.Join(p, "x"))
	if e := wantErrno("open file/x", err, syscall.ENOTDIR); e != nil {
		return e
	}
	_, err = os.Stat(filepath.Join(p, "x"))
	if e := wantErrno("stat file/x", err, syscall.ENOTDIR); e != nil {
		return e
	}
	err = os.Mkdir(filepath.Join(p, "x"), 0o755)
	return wantErrno("mkdir file/x", err, syscall.ENOTDIR)
}

func errEISDIROpenWrite(dir string) error {
	for _, flag := range []int{os.O_WRONLY, os.O_RDWR, os.O_WRONLY | os.O_TRUNC, os.O_CREATE | os.O_WRONLY} {
		_, err := os.OpenFile(dir, flag, 0o644)
		if e := wantErrno(fmt.Sprintf("open a dir with flags %#x", flag), err, syscall.EISDIR); e != nil {
			return e
		}
	}
	_, err := os.Create(dir)
	return wantErrno("create over a dir", err, syscall.EISDIR)
}

func errEISDIRReadDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Read(make([]byte, 10))
	if e := wantErrno("read a directory", err, syscall.EISDIR); e != nil {
		return e
	}
	_, err = f.Write([]byte("x"))
	return wantErrno("write a directory opened read-only", err, syscall.EBADF)
}

func errEBADFWriteReadonly(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "x")
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Write([]byte("y"))
	if e := wantErrno("write a read-only file", err, syscall.EBADF); e != nil {
		return e
	}
	_, err = f.WriteAt([]byte("y"), 0)
	if e := wantErrno("pwrite a read-only file", err, syscall.EBADF); e != nil {
		return e
	}
	return content(p, "x")
}

func errEBADFReadWriteonly(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "x")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.Read(make([]byte, 1))
	if e := wantErrno("read a write-only file", err, syscall.EBADF); e != nil {
		return e
	}
	_, err = f.ReadAt(make([]byte, 1), 0)
	return wantErrno("pread a write-only file", err, syscall.EBADF)
}

func closedFile(dir string) error {
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := f.Close(); !errors.Is(err, os.ErrClosed) {
		return errf("second Close = %v, want os.ErrClosed", err)
	}
	_, err = f.Write([]byte("x"))
	return wantErr("write after close", err, os.ErrClosed)
}

func syncFileAndDir(dir string) error {
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		return err
	}
	f.WriteString("data")
	if err := f.Sync(); err != nil {
		return errf("file Sync: %v", err)
	}
	f.Close()
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return errf("dir Sync: %v", err)
	}
	ro, err := os.Open(filepath.Join(dir, "f"))
	if err != nil {
		return err
	}
	defer ro.Close()
	if err := ro.Sync(); err != nil {
		return errf("Sync of a read-only file: %v", err)
	}
	return nil
}

// ---- paths ----

func getwdRelative(dir string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if !filepath.IsAbs(wd) {
		return errf("Getwd = %q, want an absolute path", wd)
	}
	rel := filepath.Join(dir, "rel")
	write(rel, "r")
	if err := content(filepath.Join(wd, rel), "r"); err != nil {
		return errf("wd-relative and absolute paths differ: %v", err)
	}
	if err := content("./"+rel, "r"); err != nil {
		return err
	}
	// Chdir moves relative lookups; Getwd follows.
	if err := os.Chdir(dir); err != nil {
		return err
	}
	defer os.Chdir(wd)
	if err := content("rel", "r"); err != nil {
		return errf("after Chdir: %v", err)
	}
	if nwd, _ := os.Getwd(); nwd != filepath.Join(wd, dir) {
		return errf("Getwd after Chdir = %q, want %q", nwd, filepath.Join(wd, dir))
	}
	err = os.Chdir("rel")
	return wantErrno("chdir to a file", err, syscall.ENOTDIR)
}

func absolutePaths(dir string) error {
	abs, err := filepath.Abs(filepath.Join(dir, "f"))
	if err != nil {
		return err
	}
	if !filepath.IsAbs(abs) {
		return errf("Abs = %q", abs)
	}
	if err := write(abs, "abs"); err != nil {
		return err
	}
	if err := content(filepath.Join(dir, "f"), "abs"); err != nil {
		return err
	}
	// Extra slashes are harmless.
	if err := content(strings.Replace(abs, "/", "//", -1), "abs"); err != nil {
		return err
	}
	// "/.." is "/".
	ri, err := os.Stat("/..")
	if err != nil || !ri.IsDir() {
		return errf("stat /.. = %v %v", ri, err)
	}
	r, _ := os.Stat("/")
	if !os.SameFile(ri, r) {
		return errf("/.. is not /")
	}
	return nil
}

func dotAndDotdot(dir string) error {
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755)
	write(filepath.Join(dir, "f"), "f")
	for _, p := range []string{
		dir + "/./f",
		dir + "/a/../f",
		dir + "/a/b/../../f",
		dir + "/a/./b/./../.././f",
	} {
		if err := content(p, "f"); err != nil {
			return err
		}
	}
	fi, err := os.Stat(dir + "/a/b/..")
	if err != nil || fi.Name() != ".." || !fi.IsDir() {
		return errf("stat a/b/.. = %v %v", fi, err)
	}
	ai, _ := os.Stat(filepath.Join(dir, "a"))
	if !os.SameFile(fi, ai) {
		return errf("a/b/.. is not a")
	}
	err = os.Remove(dir + "/a/.")
	if err == nil {
		return errf("remove dir/. succeeded")
	}
	return nil
}

func createTemp(dir string) error {
	f, err := os.CreateTemp(dir, "tmp-*.txt")
	if err != nil {
		return err
	}
	defer f.Close()
	name := filepath.Base(f.Name())
	if !strings.HasPrefix(name, "tmp-") || !strings.HasSuffix(name, ".txt") || len(name) <= len("tmp-.txt") {
		return errf("CreateTemp name = %q, want tmp-<random>.txt", name)
	}
	if filepath.Dir(f.Name()) != dir {
		return errf("CreateTemp dir = %q, want %q", filepath.Dir(f.Name()), dir)
	}
	f.WriteString("t")
	g, err := os.CreateTemp(dir, "tmp-*.txt")
	if err != nil {
		return err
	}
	defer g.Close()
	if g.Name() == f.Name() {
		return errf("two CreateTemp calls gave the same name %q", f.Name())
	}
	_, err = os.CreateTemp(filepath.Join(dir, "missing"), "x")
	if e := wantErr("CreateTemp in a missing dir", err, fs.ErrNotExist); e != nil {
		return e
	}
	return content(f.Name(), "t")
}

func mkdirTemp(dir string) error {
	d, err := os.MkdirTemp(dir, "work-")
	if err != nil {
		return err
	}
	fi, err := os.Stat(d)
	if err != nil || !fi.IsDir() || !strings.HasPrefix(filepath.Base(d), "work-") {
		return errf("MkdirTemp = %q, stat %v %v", d, fi, err)
	}
	d2, _ := os.MkdirTemp(dir, "work-")
	if d2 == d {
		return errf("two MkdirTemp calls gave %q", d)
	}
	return nil
}

// ---- links ----

func hardLinkNlink(dir string) error {
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write(a, "one")
	if err := os.Link(a, b); err != nil {
		return err
	}
	ai, _ := os.Stat(a)
	bi, _ := os.Stat(b)
	if nlink(ai) != 2 || nlink(bi) != 2 || !os.SameFile(ai, bi) {
		return errf("after Link: nlink %d %d SameFile %v, want 2 2 true", nlink(ai), nlink(bi), os.SameFile(ai, bi))
	}
	f, _ := os.OpenFile(b, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("+two")
	f.Close()
	if err := content(a, "one+two"); err != nil {
		return errf("a write through one link: %v", err)
	}
	os.Remove(a)
	bi, _ = os.Stat(b)
	if nlink(bi) != 1 {
		return errf("nlink after removing a link = %d, want 1", nlink(bi))
	}
	return content(b, "one+two")
}

func hardLinkErrors(dir string) error {
	a := filepath.Join(dir, "a")
	write(a, "")
	write(filepath.Join(dir, "b"), "")
	err := os.Link(a, filepath.Join(dir, "b"))
	if e := wantErr("link over an existing name", err, fs.ErrExist); e != nil {
		return e
	}
	err = os.Link(filepath.Join(dir, "missing"), filepath.Join(dir, "c"))
	if e := wantErr("link a missing file", err, fs.ErrNotExist); e != nil {
		return e
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	err = os.Link(filepath.Join(dir, "d"), filepath.Join(dir, "d2"))
	if e := wantErrno("link a directory", err, syscall.EPERM); e != nil {
		return e
	}
	// Link does not follow a symlink: the new name is a symlink too.
	os.Symlink("a", filepath.Join(dir, "sl"))
	if err := os.Link(filepath.Join(dir, "sl"), filepath.Join(dir, "sl2")); err != nil {
		return err
	}
	fi, err := os.Lstat(filepath.Join(dir, "sl2"))
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return errf("link of a symlink = %v %v, want a symlink", fi, err)
	}
	return nil
}

func unlinkOpenFile(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "still here")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Remove(p); err != nil {
		return err
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		return errf("stat after unlink = %v, want not exist", err)
	}
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "still here" {
		return errf("read after unlink = %q %v", b, err)
	}
	if _, err := f.WriteString("!"); err != nil {
		return errf("write after unlink: %v", err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() != 11 || nlink(fi) != 0 {
		return errf("fstat after unlink = size %d nlink %d %v, want 11 0", fi.Size(), nlink(fi), err)
	}
	// The name is free for a new file.
	write(p, "new")
	f.Seek(0, io.SeekStart)
	b, _ = io.ReadAll(f)
	if string(b) != "still here!" {
		return errf("old descriptor reads %q after the name was reused", b)
	}
	return content(p, "new")
}

// Descriptors are reused: many open/close cycles do not run out.
func manyOpenClose(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "x")
	for i := 0; i < 3000; i++ {
		f, err := os.Open(p)
		if err != nil {
			return errf("open #%d: %v", i, err)
		}
		f.Close()
	}
	// Many at once.
	var files []*os.File
	for i := 0; i < 200; i++ {
		f, err := os.Open(p)
		if err != nil {
			return errf("open #%d of many: %v", i, err)
		}
		files = append(files, f)
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func osRoot(dir string) error {
	os.MkdirAll(filepath.Join(dir, "r", "sub"), 0o755)
	write(filepath.Join(dir, "r", "sub", "f"), "rooted")
	write(filepath.Join(dir, "secret"), "s")
	root, err := os.OpenRoot(filepath.Join(dir, "r"))
	if err != nil {
		return err
	}
	defer root.Close()
	f, err := root.Open("sub/f")
	if err != nil {
		return errf("root.Open(sub/f): %v", err)
	}
	b, _ := io.ReadAll(f)
	f.Close()
	if string(b) != "rooted" {
		return errf("root.Open(sub/f) read %q", b)
	}
	if _, err := root.Open("../secret"); err == nil {
		return errf("root.Open(../secret) escaped the root")
	}
	if err := root.Mkdir("new", 0o755); err != nil {
		return err
	}
	g, err := root.Create("new/g")
	if err != nil {
		return err
	}
	g.WriteString("g")
	g.Close()
	return content(filepath.Join(dir, "r", "new", "g"), "g")
}

// ---- more edges ----

func openNofollow(dir string) error {
	t, l := filepath.Join(dir, "t"), filepath.Join(dir, "l")
	write(t, "t")
	os.Symlink("t", l)
	_, err := os.OpenFile(l, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if e := wantErrno("O_NOFOLLOW on a symlink", err, syscall.ELOOP); e != nil {
		return e
	}
	f, err := os.OpenFile(t, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return errf("O_NOFOLLOW on a regular file: %v", err)
	}
	return f.Close()
}

// Linux truncates on O_TRUNC even when the file is opened read-only.
func openRdonlyTrunc(dir string) error {
	p := filepath.Join(dir, "f")
	write(p, "data")
	f, err := os.OpenFile(p, os.O_RDONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	f.Close()
	return content(p, "")
}

func trailingSlashOps(dir string) error {
	f := filepath.Join(dir, "f")
	write(f, "f")
	os.Symlink("f", filepath.Join(dir, "lf"))
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	for _, c := range []struct {
		what string
		err  error
		want syscall.Errno
	}{
		{"create new/", func() error {
			_, err := os.OpenFile(filepath.Join(dir, "new")+"/", os.O_CREATE|os.O_WRONLY, 0o644)
			return err
		}(), syscall.EISDIR},
		{"rename file to file/", os.Rename(f, f+"/"), syscall.ENOTDIR},
		{"remove file/", os.Remove(f + "/"), syscall.ENOTDIR},
		{"symlink to new/", os.Symlink("f", filepath.Join(dir, "sl")+"/"), syscall.ENOENT},
		{"link to new/", os.Link(f, filepath.Join(dir, "hl")+"/"), syscall.ENOENT},
		{"readlink link-to-file/", func() error { _, err := os.Readlink(filepath.Join(dir, "lf") + "/"); return err }(), syscall.ENOTDIR},
	} {
		if e := wantErrno(c.what, c.err, c.want); e != nil {
			return e
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "nd")+"/", 0o755); err != nil {
		return errf("mkdir new/: %v", err)
	}
	if err := os.Rename(filepath.Join(dir, "d"), filepath.Join(dir, "d2")+"/"); err != nil {
		return errf("rename dir to new/: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "d2")); err != nil || !fi.IsDir() {
		return errf("stat d2 after rename = %v %v", fi, err)
	}
	return content(f, "f")
}

func nameTooLong(dir string) error {
	long := strings.Repeat("n", 256)
	_, err := os.Create(filepath.Join(dir, long))
	if e := wantErrno("create a 256-byte name", err, syscall.ENAMETOOLONG); e != nil {
		return e
	}
	_, err = os.Stat(filepath.Join(dir, long))
	if e := wantErrno("stat a 256-byte name", err, syscall.ENAMETOOLONG); e != nil {
		return e
	}
	ok := strings.Repeat("n", 255)
	if err := write(filepath.Join(dir, ok), "x"); err != nil {
		return errf("create a 255-byte name: %v", err)
	}
	return content(filepath.Join(dir, ok), "x")
}

func oddNames(dir string) error {
	want := []string{" lead space", "-dash", "UPPER", "new\nline", "quote\"s", "tab\there", "ünïcødé", "日本語"}
	for _, n := range want {
		if err := write(filepath.Join(dir, n), n); err != nil {
			return errf("create %q: %v", n, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	got := names(ents)
	sorted := slices.Clone(want)
	sort.Strings(sorted)
	if !slices.Equal(got, sorted) {
		return errf("ReadDir = %q, want %q", got, sorted)
	}
	for _, n := range want {
		if err := content(filepath.Join(dir, n), n); err != nil {
			return err
		}
	}
	return nil
}

// A directory removed while open: fstat says nlink 0, listing it fails
// with ENOENT, nothing can be created in it, but ".." still resolves.
func removedDirFd(dir string) error {
	d := filepath.Join(dir, "d")
	os.Mkdir(d, 0o755)
	write(filepath.Join(dir, "sibling"), "s")
	f, err := os.Open(d)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.Remove(d); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil || nlink(fi) != 0 || !fi.IsDir() {
		return errf("fstat of a removed dir = nlink %d %v, want 0", nlink(fi), err)
	}
	_, err = f.Readdirnames(-1)
	if e := wantErrno("list a removed dir", err, syscall.ENOENT); e != nil {
		return e
	}
	_, err = syscall.Openat(int(f.Fd()), "x", os.O_CREATE|os.O_WRONLY, 0o644)
	if e := wantErrno("create in a removed dir", err, syscall.ENOENT); e != nil {
		return e
	}
	fd, err := syscall.Openat(int(f.Fd()), "../sibling", os.O_RDONLY, 0)
	if err != nil {
		return errf("open ../sibling from a removed dir: %v", err)
	}
	s := os.NewFile(uintptr(fd), "sibling")
	b, _ := io.ReadAll(s)
	s.Close()
	if string(b) != "s" {
		return errf("../sibling from a removed dir reads %q", b)
	}
	return nil
}

func dirMtimeOnCreate(dir string) error {
	d := filepath.Join(dir, "d")
	os.Mkdir(d, 0o755)
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(d, old, old); err != nil {
		return err
	}
	write(filepath.Join(d, "f"), "")
	fi, _ := os.Stat(d)
	if !fi.ModTime().After(old) {
		return errf("dir ModTime after creating an entry = %v, want later than %v", fi.ModTime().UTC(), old)
	}
	os.Chtimes(d, old, old)
	os.Remove(filepath.Join(d, "f"))
	fi, _ = os.Stat(d)
	if !fi.ModTime().After(old) {
		return errf("dir ModTime after removing an entry = %v, want later than %v", fi.ModTime().UTC(), old)
	}
	return nil
}

func sparseLargeOffset(dir string) error {
	p := filepath.Join(dir, "sparse")
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	defer f.Close()
	const off = 5 << 30
	if _, err := f.WriteAt([]byte("end"), off); err != nil {
		return errf("WriteAt(5 GiB): %v", err)
	}
	fi, _ := f.Stat()
	if fi.Size() != off+3 {
		return errf("size = %d, want %d", fi.Size(), off+3)
	}
	b := make([]byte, 4)
	if n, err := f.ReadAt(b, 1<<30); n != 4 || err != nil || !bytes.Equal(b, make([]byte, 4)) {
		return errf("ReadAt in the hole = %v %d %v, want zeros", b, n, err)
	}
	if n, err := f.ReadAt(b, off); n != 3 || err != io.EOF || string(b[:3]) != "end" {
		return errf("ReadAt(5 GiB) = %q %d %v", b[:n], n, err)
	}
	if end, err := f.Seek(0, io.SeekEnd); end != off+3 || err != nil {
		return errf("Seek(0, end) = %d %v", end, err)
	}
	return f.Truncate(0)
}

// os.TempDir is /tmp on Linux, and it exists.
func tempDirDefault(dir string) error {
	f, err := os.CreateTemp("", "fsops-*")
	if err != nil {
		return errf("CreateTemp in os.TempDir() (%s): %v", os.TempDir(), err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	d, err := os.MkdirTemp("", "fsops-*")
	if err != nil {
		return errf("MkdirTemp in os.TempDir() (%s): %v", os.TempDir(), err)
	}
	return os.Remove(d)
}

// f.Readdir gives Lstat infos: sizes, and symlinks as symlinks.
func readdirInfos(dir string) error {
	write(filepath.Join(dir, "f"), "12345")
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.Symlink("f", filepath.Join(dir, "l"))
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	infos, err := f.Readdir(-1)
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, fi := range infos {
		got[fi.Name()] = fmt.Sprintf("%v %d", fi.Mode().Type(), fi.Size())
	}
	want := map[string]string{"f": "---------- 5", "d": fmt.Sprintf("%v", fs.ModeDir) + " ", "l": fmt.Sprintf("%v 1", fs.ModeSymlink)}
	if len(got) != 3 || got["f"] != want["f"] || !strings.HasPrefix(got["d"], want["d"]) || got["l"] != want["l"] {
		return errf("Readdir = %v, want f %q, d %q..., l %q", got, want["f"], want["d"], want["l"])
	}
	return nil
}

// RemoveAll of a directory larger than its batch of 1024 names.
func removeAllLarge(dir string) error {
	root := filepath.Join(dir, "big")
	os.Mkdir(root, 0o755)
	for i := 0; i < 2500; i++ {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%05d", i)))
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := os.RemoveAll(root); err != nil {
		return errf("RemoveAll: %v", err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		return errf("dir still there: %v", err)
	}
	return nil
}

func copyFS(dir string) error {
	src := filepath.Join(dir, "src")
	if err := makeTree(src); err != nil {
		return err
	}
	dst := filepath.Join(dir, "dst")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		return errf("CopyFS: %v", err)
	}
	var got []string
	fs.WalkDir(os.DirFS(dst), ".", func(p string, d fs.DirEntry, err error) error {
		got = append(got, p)
		return err
	})
	if !slices.Equal(got, treeOrder) {
		return errf("copied tree = %v, want %v", got, treeOrder)
	}
	if err := content(filepath.Join(dst, "a/z/2"), "a/z/2"); err != nil {
		return err
	}
	// CopyFS does not overwrite.
	err := os.CopyFS(dst, os.DirFS(src))
	return wantErr("CopyFS over existing files", err, fs.ErrExist)
}

func symlinkAbsoluteTarget(dir string) error {
	abs, err := filepath.Abs(filepath.Join(dir, "target"))
	if err != nil {
		return err
	}
	write(abs, "abs")
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	l := filepath.Join(sub, "link")
	if err := os.Symlink(abs, l); err != nil {
		return err
	}
	if got, _ := os.Readlink(l); got != abs {
		return errf("Readlink = %q, want %q", got, abs)
	}
	// A relative target resolves from the link's directory, not the cwd.
	rel := filepath.Join(sub, "rel")
	os.Symlink("../target", rel)
	if err := content(rel, "abs"); err != nil {
		return err
	}
	return content(l, "abs")
}
