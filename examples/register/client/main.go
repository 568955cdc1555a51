// client is a workload for the register example. A writer puts increasing
// values to a few keys on the primary; a reader reads them, from the
// replica -reads names, and checks what a client alone can check: a key
// never goes back to an older value. Both record every operation with
// sim.Put and sim.Get, so that seedfall can check the whole history for
// linearizability, which is what catches a stale read.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/sim"
)

const keys = 3

type conn struct {
	c net.Conn
	r *bufio.Reader
}

func dial(addr string) *conn {
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			return &conn{c, bufio.NewReader(c)}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *conn) call(req string) string {
	if _, err := fmt.Fprintln(c.c, req); err != nil {
		log.Fatalf("%s: %v", req, err)
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		log.Fatalf("%s: %v", req, err)
	}
	return strings.TrimSuffix(line, "\n")
}

func main() {
	mode := flag.String("mode", "write", "write or read")
	n := flag.Int("n", 100, "operations to make")
	reads := flag.String("reads", "backup", "the replica reads go to: backup or primary")
	flag.Parse()
	switch *mode {
	case "write":
		c := dial("primary:7000")
		for i := 1; i <= *n; i++ {
			k, v := "k"+strconv.Itoa(rand.IntN(keys)), strconv.Itoa(i)
			op := sim.Put(k, v)
			if got := c.call("PUT " + k + " " + v); got != "OK" {
				log.Fatalf("PUT %s %s: %s", k, v, got)
			}
			op.Ok()
			time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
		}
	case "read":
		c := dial(*reads + ":7000")
		last := map[string]int{}
		for i := 0; i < *n; i++ {
			k := "k" + strconv.Itoa(rand.IntN(keys))
			op := sim.Get(k)
			got := c.call("GET " + k)
			switch {
			case got == "NONE":
				op.Ok("", false)
				if last[k] > 0 {
					fmt.Fprintf(os.Stderr, "%s went from %d back to nothing\n", k, last[k])
					os.Exit(1)
				}
			case strings.HasPrefix(got, "VALUE "):
				v := strings.TrimPrefix(got, "VALUE ")
				op.Ok(v, true)
				x, _ := strconv.Atoi(v)
				if x < last[k] {
					fmt.Fprintf(os.Stderr, "%s went back from %d to %d\n", k, last[k], x)
					os.Exit(1)
				}
				last[k] = x
			default:
				log.Fatalf("GET %s: %s", k, got)
			}
			time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
		}
	default:
		log.Fatalf("-mode %q: want write or read", *mode)
	}
	fmt.Printf("%s: %d operations\n", *mode, *n)
}
