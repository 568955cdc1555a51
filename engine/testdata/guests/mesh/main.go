// mesh tells who can reach whom: every program binds UDP :9100, at 200ms
// sends its name to each of -peers, listens until 400ms, then prints
// "heard" and the names it heard, sorted, and exits after -linger.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	peers := flag.String("peers", "", "comma-separated names")
	linger := flag.Duration("linger", 0, "time to wait after printing, before exiting")
	flag.Parse()
	start := time.Now()
	me := os.Getenv("SEEDFALL_NODE")
	pc, err := net.ListenPacket("udp", ":9100")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	time.Sleep(200*time.Millisecond - time.Since(start))
	for _, p := range strings.Split(*peers, ",") {
		if p == me {
			continue
		}
		a, err := net.ResolveUDPAddr("udp", p+":9100")
		if err != nil {
			fmt.Println("resolve:", err)
			os.Exit(1)
		}
		pc.WriteTo([]byte(me), a)
	}
	pc.SetReadDeadline(start.Add(400 * time.Millisecond))
	var heard []string
	buf := make([]byte, 64)
	for {
		k, _, err := pc.ReadFrom(buf)
		if err != nil {
			break
		}
		heard = append(heard, string(buf[:k]))
	}
	slices.Sort(heard)
	fmt.Println(strings.TrimSpace("heard " + strings.Join(heard, " ")))
	time.Sleep(*linger)
}
