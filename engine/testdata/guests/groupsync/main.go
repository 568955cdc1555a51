// groupsync shows whether a goroutine runs while another waits on fsync:
// a syncer fsyncs a log while a writer appends to it, and each says when.
// At start it prints what an earlier incarnation left in the log.
package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

func main() {
	if b, err := os.ReadFile("log"); err == nil {
		fmt.Printf("found %q\n", b)
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
	start := time.Now()
	var syncing atomic.Bool
	done := make(chan bool)
	go func() {
		f.WriteString("before\n")
		syncing.Store(true)
		fmt.Printf("fsync starts at %v\n", time.Since(start).Round(time.Microsecond))
		err := f.Sync()
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
