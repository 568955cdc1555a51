// cpuwork is work that takes CPU time, to show how seedfall charges it.
//
//	cpuwork spin -for 50ms      busy-waits on time.Since, then says how long it took
//	cpuwork calls -n 1000000    makes n calls, then says when it finished
//	cpuwork server              a TCP server on :7000 whose handlers compute before they answer;
//	                            it reports the most handlers that were ever in progress at once
//	cpuwork client -n 8         sends n requests, one every 10µs, each on its own connection
//	cpuwork hog                 computes until another goroutine, which only a preemption
//	                            lets run, tells it to stop
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

//go:noinline
func step(v int) int { return v*31 + 7 }

// hogStep is not a leaf, so it checks its stack on entry, where a
// preemption lands (a leaf with a small frame does not).
//
//go:noinline
func hogStep(v int) int { return step(v) ^ step(v>>1) }

// compute makes n calls.
func compute(n int) int {
	v := 0
	for i := 0; i < n; i++ {
		v = step(v)
	}
	return v
}

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: cpuwork spin|calls|server|client [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	d := fs.Duration("for", 50*time.Millisecond, "spin: how long to busy-wait")
	n := fs.Int("n", 1000000, "calls: how many calls; client: how many requests")
	work := fs.Int("work", 20000, "server: calls per request")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "spin":
		start := time.Now()
		loops := 0
		for time.Since(start) < *d {
			loops++
		}
		fmt.Printf("spun for %v in %d loops\n", time.Since(start).Round(time.Millisecond), loops)
	case "calls":
		start := time.Now()
		v := compute(*n)
		fmt.Printf("made %d calls in %v (%d)\n", *n, time.Since(start), v&1)
	case "hog":
		var stop atomic.Bool
		go stop.Store(true)
		start, v := time.Now(), 0
		for !stop.Load() {
			v = hogStep(v)
		}
		fmt.Printf("preempted after %v (%d)\n", time.Since(start), v&1)
	case "server":
		serve(*work)
	case "client":
		client(*n)
	}
}

func serve(work int) {
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	var mu sync.Mutex
	active, most := 0, 0
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			os.Exit(1)
		}
		go func(c net.Conn) {
			defer c.Close()
			r := bufio.NewReader(c)
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			mu.Lock()
			active++
			if active > most {
				most = active
				fmt.Println("most in progress", most)
			}
			mu.Unlock()
			compute(work / 2)
			runtime.Gosched() // another handler that is ready may run here
			compute(work / 2)
			mu.Lock()
			active--
			mu.Unlock()
			fmt.Fprintln(c, "done")
		}(c)
	}
}

func client(n int) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", "server:7000")
			if err != nil {
				fmt.Println("dial:", err)
				os.Exit(1)
			}
			defer c.Close()
			fmt.Fprintln(c, "work")
			if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
				fmt.Println("read:", err)
				os.Exit(1)
			}
		}()
		time.Sleep(10 * time.Microsecond)
	}
	wg.Wait()
	fmt.Println("all answered")
}
