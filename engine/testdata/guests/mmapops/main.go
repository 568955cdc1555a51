// mmapops drives seedfall's mmap, munmap, msync, mprotect and flock host
// functions directly (the compat overlay's syscall shim is not needed):
//
//	-mode ops    coherence of mappings with the page cache, private
//	             mappings, flock between two opens, and the error cases;
//	             prints "ok ..." or "FAIL ..." per check and exits 1 on a
//	             failure.
//	-mode crash  the first incarnation maps a 16-page file writably, keeps
//	             page 0 with msync(MS_SYNC) and page 1 with fsync, stores a
//	             marker into pages 2-15 without syncing, takes an exclusive
//	             flock and waits to be crashed; later ones report which
//	             pages survived and whether the lock is free (with
//	             -fail-if-kept, exit 1 if an unsynced page survived).
//	-mode exit   the first incarnation stores into a writable mapping and
//	             exits with status 3 without unmapping; later ones report
//	             what the file holds.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"
)

//go:wasmimport seedfall mmap
func sfMmap(fd int32, off int64, length int32, prot int32, flags int32, addr unsafe.Pointer) int32

//go:wasmimport seedfall munmap
func sfMunmap(addr unsafe.Pointer, length int32) int32

//go:wasmimport seedfall msync
func sfMsync(addr unsafe.Pointer, length int32, flags int32) int32

//go:wasmimport seedfall mprotect
func sfMprotect(addr unsafe.Pointer, length int32, prot int32) int32

//go:wasmimport seedfall flock
func sfFlock(fd int32, how int32) int32

const (
	protRead   = 1
	protWrite  = 2
	mapShared  = 1
	mapPrivate = 2
	msAsync    = 1
	msSync     = 4
	lockSh     = 1
	lockEx     = 2
	lockNb     = 4
	lockUn     = 8
	page       = 4096
)

var alive [][]byte // mapped buffers stay reachable until the end

func mmap(fd uintptr, off int64, n, prot, flags int) ([]byte, error) {
	b := make([]byte, max(n, 1))[:n]
	if e := sfMmap(int32(fd), off, int32(n), int32(prot), int32(flags), unsafe.Pointer(unsafe.SliceData(b[:cap(b)]))); e != 0 {
		return nil, syscall.Errno(e)
	}
	alive = append(alive, b)
	return b, nil
}

func ptr(b []byte) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(b)) }

func munmap(b []byte) error       { return errno(sfMunmap(ptr(b), int32(len(b)))) }
func msync(b []byte, f int) error { return errno(sfMsync(ptr(b), int32(len(b)), int32(f))) }
func mprotect(b []byte, p int) error {
	return errno(sfMprotect(ptr(b), int32(len(b)), int32(p)))
}
func flock(f *os.File, how int) error { return errno(sfFlock(int32(f.Fd()), int32(how))) }

func errno(e int32) error {
	if e == 0 {
		return nil
	}
	return syscall.Errno(e)
}

var checks, failed int

func check(name string, good bool, detail ...any) {
	checks++
	if good {
		fmt.Println("ok", name)
		return
	}
	failed++
	fmt.Println("FAIL", name, fmt.Sprint(detail...))
}

// is checks that err is want (nil for success).
func is(name string, err, want error) {
	check(name, err == want, "got ", err, ", want ", want)
}

func must[T any](v T, err error) T {
	if err != nil {
		fmt.Println("FAIL setup:", err)
		os.Exit(1)
	}
	return v
}

func main() {
	mode := flag.String("mode", "ops", "ops, crash or exit")
	flag.BoolVar(&failIfKept, "fail-if-kept", false, "crash: exit 1 when an unsynced page survived a crash")
	flag.Parse()
	switch *mode {
	case "ops":
		ops()
		fmt.Printf("%d checks, %d failed\n", checks, failed)
		if failed > 0 {
			os.Exit(1)
		}
	case "crash":
		crash()
	case "exit":
		exit()
	}
}

func ops() {
	must(0, os.WriteFile("data", make([]byte, 3*page), 0o644))
	ro := must(os.Open("data"))
	rw := must(os.OpenFile("data", os.O_RDWR, 0))
	m, err := mmap(ro.Fd(), 0, 3*page, protRead, mapShared)
	is("mmap shared read-only", err, nil)

	// Writes through any fd are in the mapping at once.
	rw.WriteAt([]byte("hello"), page)
	check("pwrite visible through a read-only mapping", string(m[page:page+5]) == "hello", string(m[page:page+5]))
	rw.Seek(2*page+7, 0)
	rw.Write([]byte("seq"))
	check("write visible through a read-only mapping", string(m[2*page+7:2*page+10]) == "seq")
	rw.Truncate(page + 2)
	check("truncate zeroes the mapping past the end", string(m[page:page+5]) == "he\x00\x00\x00" && m[2*page+7] == 0)
	rw.Truncate(3 * page)

	// The mapping outlives its fd.
	ro2 := must(os.Open("data"))
	m2, err := mmap(ro2.Fd(), page, page, protRead, mapShared)
	is("mmap at an offset", err, nil)
	ro2.Close()
	rw.WriteAt([]byte("after close"), page+100)
	check("a mapping outlives its fd", string(m2[100:111]) == "after close")

	// Stores into a writable mapping are the file's content.
	w, err := mmap(rw.Fd(), 0, 2*page, protRead|protWrite, mapShared)
	is("mmap shared writable", err, nil)
	copy(w[10:], "stored")
	got := make([]byte, 16)
	other := must(os.Open("data"))
	other.ReadAt(got[:6], 10)
	check("store visible to pread through another fd", string(got[:6]) == "stored", string(got[:6]))
	check("store visible through another mapping", string(m[10:16]) == "stored", string(m[10:16]))
	copy(w[page+200:], "msync")
	is("msync MS_ASYNC", msync(w[page:], msAsync), nil)
	check("msync takes stores in", string(m[page+200:page+205]) == "msync")
	copy(w[300:], "before-ro")
	is("mprotect to read-only", mprotect(w, protRead), nil)
	other.ReadAt(got[:6], 300)
	check("mprotect takes stores in first", string(got[:6]) == "before", string(got[:6]))
	is("mprotect back to writable", mprotect(w, protRead|protWrite), nil)
	rw.WriteAt([]byte("W"), 10)
	check("pwrite visible through a writable mapping", w[10] == 'W')

	// Private mappings are copies.
	p, err := mmap(ro.Fd(), 0, page, protRead|protWrite, mapPrivate)
	is("mmap private writable on a read-only fd", err, nil)
	copy(p, "private")
	other.ReadAt(got[:7], 0)
	check("a private store stays private", string(got[:7]) != "private")
	rw.WriteAt([]byte("X"), 0)
	check("a private mapping does not follow the file", p[0] == 'p')
	is("munmap private", munmap(p), nil)

	// Errors.
	buf := make([]byte, page)
	_, err = mmap(999, 0, page, protRead, mapShared)
	is("mmap bad fd", err, syscall.EBADF)
	_, err = mmap(ro.Fd(), 100, page, protRead, mapShared)
	is("mmap unaligned offset", err, syscall.EINVAL)
	_, err = mmap(ro.Fd(), -page, page, protRead, mapShared)
	is("mmap negative offset", err, syscall.EINVAL)
	_, err = mmap(ro.Fd(), 0, 0, protRead, mapShared)
	is("mmap length 0", err, syscall.EINVAL)
	_, err = mmap(ro.Fd(), 0, page, protRead, mapShared|mapPrivate)
	is("mmap shared and private", err, syscall.EINVAL)
	_, err = mmap(ro.Fd(), 0, page, protRead, 0)
	is("mmap neither shared nor private", err, syscall.EINVAL)
	_, err = mmap(ro.Fd(), 0, page, protRead|protWrite, mapShared)
	is("mmap writable shared on a read-only fd", err, syscall.EACCES)
	wo := must(os.OpenFile("data", os.O_WRONLY, 0))
	_, err = mmap(wo.Fd(), 0, page, protRead, mapShared)
	is("mmap a write-only fd", err, syscall.EACCES)
	dir := must(os.Open("."))
	_, err = mmap(dir.Fd(), 0, page, protRead, mapShared)
	is("mmap a directory", err, syscall.ENODEV)
	is("mmap past memory", errno(sfMmap(int32(ro.Fd()), 0, 0x7fff_0000, protRead, mapShared, ptr(buf))), syscall.EFAULT)
	is("munmap with the wrong length", errno(sfMunmap(ptr(w), page)), syscall.EINVAL)
	is("munmap what is not mapped", munmap(buf), syscall.EINVAL)
	is("msync MS_SYNC|MS_ASYNC", msync(w, msSync|msAsync), syscall.EINVAL)
	is("msync what is not mapped", msync(buf, msSync), syscall.ENOMEM)
	is("msync past the mapping", errno(sfMsync(ptr(w), int32(len(w)+page), msAsync)), syscall.ENOMEM)
	is("mprotect writable on a read-only fd's mapping", mprotect(m, protRead|protWrite), syscall.EACCES)
	is("mprotect what is not mapped", mprotect(buf, protRead), syscall.ENOMEM)
	is("mprotect bad prot", mprotect(w, 0x100), syscall.EINVAL)
	is("flock bad fd", errno(sfFlock(999, lockEx)), syscall.EBADF)
	is("flock bad how", flock(ro, lockSh|lockEx), syscall.EINVAL)
	is("flock how 0", flock(ro, 0), syscall.EINVAL)

	is("munmap shared", munmap(m), nil)
	is("munmap twice", munmap(m), syscall.EINVAL)
	is("msync after munmap", msync(m, msAsync), syscall.ENOMEM)
	copy(w[500:], "unmap")
	is("munmap writable", munmap(w), nil)
	other.ReadAt(got[:5], 500)
	check("munmap takes stores in", string(got[:5]) == "unmap", string(got[:5]))
	munmap(m2)

	// flock belongs to the open file description.
	must(0, os.WriteFile("lock", nil, 0o644))
	a := must(os.Open("lock"))
	b := must(os.Open("lock"))
	is("flock a LOCK_EX", flock(a, lockEx), nil)
	is("flock b LOCK_SH|LOCK_NB against a's LOCK_EX", flock(b, lockSh|lockNb), syscall.EAGAIN)
	is("flock b LOCK_EX never blocks", flock(b, lockEx), syscall.EAGAIN)
	is("flock a LOCK_EX again", flock(a, lockEx), nil)
	is("flock a converts to LOCK_SH", flock(a, lockSh), nil)
	is("flock b LOCK_SH beside a's", flock(b, lockSh|lockNb), nil)
	is("flock a converting to LOCK_EX while b shares", flock(a, lockEx|lockNb), syscall.EAGAIN)
	is("flock b LOCK_UN", flock(b, lockUn), nil)
	is("flock a LOCK_EX after b unlocked", flock(a, lockEx|lockNb), nil)
	c := must(os.Open("lock"))
	is("flock c LOCK_SH against a", flock(c, lockSh|lockNb), syscall.EAGAIN)
	a.Close()
	is("flock c LOCK_SH after a closed", flock(c, lockSh|lockNb), nil)
	is("flock b LOCK_SH beside c", flock(b, lockSh), nil)
	is("flock on a directory", flock(dir, lockEx|lockNb), nil)
	b.Close()
	c.Close()
}

const crashPages = 16

var failIfKept bool

func crash() {
	if data, err := os.ReadFile("pages"); err == nil {
		var survived []int
		for i := 2; i < crashPages; i++ {
			if data[i*page+1] == 'M' {
				survived = append(survived, i*page)
			}
		}
		fmt.Printf("msync kept %v, fsync kept %v, unsynced survived %v\n", data[1] == 'S', data[page+1] == 'F', survived)
		if failIfKept && len(survived) > 0 {
			os.Exit(1)
		}
		l := must(os.Open("lock"))
		fmt.Println("flock after crash:", flock(l, lockEx|lockNb))
		time.Sleep(time.Hour)
	}
	f := must(os.Create("pages"))
	must(f.Write(make([]byte, crashPages*page)))
	must(0, f.Sync())
	must(0, os.WriteFile("lock", nil, 0o644))
	w := must(mmap(f.Fd(), 0, crashPages*page, protRead|protWrite, mapShared))
	w[1] = 'S'
	must(0, msync(w[:page], msSync))
	w[page+1] = 'F'
	must(0, f.Sync())
	for i := 2; i < crashPages; i++ {
		w[i*page+1] = 'M'
	}
	l := must(os.Open("lock"))
	must(0, flock(l, lockEx))
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

func exit() {
	if data, err := os.ReadFile("exit"); err == nil {
		fmt.Printf("after exit: %q\n", data[:6])
		time.Sleep(time.Hour)
	}
	f := must(os.Create("exit"))
	must(f.Write(make([]byte, page)))
	w := must(mmap(f.Fd(), 0, page, protRead|protWrite, mapShared))
	copy(w, "atexit")
	os.Exit(3)
}
