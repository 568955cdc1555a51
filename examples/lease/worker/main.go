// worker takes the lease, works under it every -every while it believes it
// still holds it, then lets it lapse and asks again. How it decides the
// lease is still valid is the point: by default it compares its wall clock
// with the expiry the server sent, which is only right if both machines'
// clocks agree; with -monotonic it counts the lease's length from the moment
// it asked, on its own monotonic clock, which no clock step can move.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	server := flag.String("server", "lock:7000", "lease server")
	name := flag.String("name", "w", "worker name")
	every := flag.Duration("every", 50*time.Millisecond, "work period")
	margin := flag.Duration("margin", 100*time.Millisecond, "stop this long before the lease ends")
	monotonic := flag.Bool("monotonic", false, "time the lease on the monotonic clock")
	flag.Parse()
	var c net.Conn
	var err error
	for i := 0; i < 100; i++ {
		if c, err = net.Dial("tcp", *server); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		fmt.Println("worker: cannot reach the lease server:", err)
		os.Exit(1)
	}
	r := bufio.NewReader(c)
	call := func(line string) []string {
		fmt.Fprintln(c, line)
		ans, err := r.ReadString('\n')
		if err != nil {
			fmt.Println("worker:", err)
			os.Exit(1)
		}
		return strings.Fields(ans)
	}
	for {
		asked := time.Now()
		ans := call("ACQUIRE " + *name)
		if ans[0] != "OK" {
			time.Sleep(*every)
			continue
		}
		ttl, _ := strconv.ParseInt(ans[1], 10, 64)
		expiry, _ := strconv.ParseInt(ans[2], 10, 64)
		valid := func() bool {
			if *monotonic {
				return time.Since(asked) < time.Duration(ttl)-*margin
			}
			return time.Now().UnixNano() < expiry-margin.Nanoseconds() // trusts the wall clock
		}
		for valid() {
			if a := call("WORK " + *name); a[0] != "DONE" {
				fmt.Printf("worker %s: the server says my lease had ended\n", *name)
			}
			time.Sleep(*every)
		}
		time.Sleep(*every) // let the lease lapse, give the other worker a chance
	}
}
