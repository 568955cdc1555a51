// history records hand-written operation histories with sim.Put, sim.Get
// and sim.Invoke, one per -mode, so that tests know the verdict each must
// get.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func tick() { time.Sleep(10 * time.Millisecond) }

func main() {
	mode := flag.String("mode", "linearizable", "which history to record")
	flag.Parse()
	switch *mode {
	case "linearizable":
		p := sim.Put("k", "a")
		tick()
		p.Ok()
		g := sim.Get("k")
		tick()
		g.Ok("a", true)
		// A put that failed never took effect: reading the old value is fine.
		f := sim.Put("k", "b")
		tick()
		f.Fail()
		g = sim.Get("k")
		g.Ok("a", true)
	case "stale":
		p := sim.Put("k", "v1")
		tick()
		p.Ok()
		p = sim.Put("k", "v2")
		tick()
		p.Ok()
		g := sim.Get("k")
		tick()
		g.Ok("v1", true) // what a replica that missed v2 would answer
	case "counter":
		sim.Invoke("counter", "add 2").Return("")
		tick()
		r := sim.Invoke("counter", "read")
		tick()
		r.Return("3")
	case "bad-output":
		sim.Invoke("counter", "read").Return("five")
	case "inflight":
		// The first life starts two puts and dies before either returns;
		// the second finds the key empty: the open puts may take effect
		// later, so that is linearizable.
		if _, err := os.Stat("lived"); err != nil {
			f, _ := os.Create("lived")
			f.Sync()
			f.Close()
			sim.Put("k", "x")
			sim.Put("k", "y")
			sim.Get("k") // an open read: dropped
			time.Sleep(time.Hour)
		}
		g := sim.Get("k")
		tick()
		g.Ok("", false)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", *mode)
		os.Exit(1)
	}
	fmt.Println("recorded", *mode)
}
