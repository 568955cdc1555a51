// groupsync shows whether a goroutine runs while another waits on fsync:
// a syncer fsyncs a log while a writer appends to it, and each says when.
// At start it prints what an earlier incarnation left in the log.
//
// -how says how the syncer syncs: file (os.File.Sync), syscall
// (syscall.Fsync), fdatasync (syscall.Fdatasync) or msync (msync(MS_SYNC)
// of a shared mapping of the log); the last two need compat_overlay.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	how := flag.String("how", "file", "file, syscall, fdatasync or msync")
	flag.Parse()
	if b, err := os.ReadFile("log"); err == nil {
		fmt.Printf("found %q\n", bytes.TrimRight(b, "\x00")) // -how msync grows the log to a page
	}
	f, err := os.OpenFile("log", os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0o644)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if err := f.Sync(); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	d, _ := os.Open(".")
	d.Sync()
	sync := f.Sync
	switch *how {
	case "syscall":
		sync = func() error { return syscall.Fsync(int(f.Fd())) }
	case "fdatasync":
		sync = func() error { return syscall.Fdatasync(int(f.Fd())) }
	case "msync":
		// The mapping covers the first page; msync(MS_SYNC) makes the
		// file's data durable as fdatasync does.
		f.Truncate(4096)
		m, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		sync = func() error { return syscall.Msync(m, syscall.MS_SYNC) }
	}
	start := time.Now()
	var syncing atomic.Bool
	done := make(chan bool)
	go func() {
		f.WriteString("before\n")
		syncing.Store(true)
		fmt.Printf("fsync starts at %v\n", time.Since(start).Round(time.Microsecond))
		err := sync()
		syncing.Store(false)
		fmt.Printf("fsync returns at %v: %v\n", time.Since(start).Round(time.Microsecond), err)
		done <- true
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			fmt.Println("writer wrote", i, "records during the fsync")
			time.Sleep(10 * time.Millisecond) // time for a crash to land after the fsync
			return
		default:
		}
		if syncing.Load() {
			f.WriteString(fmt.Sprintf("during %d\n", i))
			fmt.Printf("write %d at %v while the fsync is in flight\n", i, time.Since(start).Round(time.Microsecond))
		}
		time.Sleep(time.Millisecond)
	}
}
