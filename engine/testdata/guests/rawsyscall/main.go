// Command rawsyscall makes system calls through syscall.Syscall directly,
// as pogreb's madvise does, and names RLIM_INFINITY: under compat_overlay
// both build, and the calls that mean something on the simulated disk
// succeed.
package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func main() {
	buf := make([]byte, 4096)
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), uintptr(syscall.MADV_RANDOM))
	fmt.Printf("madvise: errno %d\n", e)
	f, err := os.Create("f")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	f.WriteString("x")
	_, _, e = syscall.Syscall(syscall.SYS_FDATASYNC, f.Fd(), 0, 0)
	fmt.Printf("fdatasync: errno %d\n", e)
	_, _, e = syscall.Syscall6(12345, 0, 0, 0, 0, 0, 0)
	fmt.Printf("unknown: %v\n", e)
	var lim syscall.Rlimit
	err = syscall.Getrlimit(syscall.RLIMIT_AS, &lim)
	fmt.Printf("RLIMIT_AS %#x %v\n", lim.Cur, err)
}
