// txn records hand-written transaction histories with sim.Txn, one per
// -mode, so that tests know the verdict each must get.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func tick() { time.Sleep(10 * time.Millisecond) }

func main() {
	mode := flag.String("mode", "serial", "which history to record")
	flag.Parse()
	switch *mode {
	case "serial":
		// Goroutines take turns: every transaction sees the ones before.
		var mu sync.Mutex
		var list []int
		var wg sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 4; i++ {
					mu.Lock()
					v := g*100 + i
					t := sim.Txn(sim.ReadList(1), sim.Append(1, v))
					tick()
					t.Ok(sim.List(list...))
					list = append(list, v)
					mu.Unlock()
					tick()
				}
			}()
		}
		wg.Wait()
		r := sim.Txn(sim.Write(1, 1), sim.Read(1))
		tick()
		r.Ok(sim.Value(1))
		r = sim.Txn(sim.Read(1), sim.Read(2))
		r.Ok(sim.Value(1), sim.None())
	case "skew":
		// Two withdrawals from one snapshot, each from the account the
		// other did not touch: write skew.
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t := sim.Txn(sim.ReadList(1), sim.ReadList(2), sim.Append(1+g, 10+g))
				tick()
				t.Ok(sim.List(), sim.List())
			}()
		}
		wg.Wait()
		t := sim.Txn(sim.ReadList(1), sim.ReadList(2))
		tick()
		t.Ok(sim.List(10), sim.List(11))
	case "half":
		// The first life begins a transaction of two appends and dies
		// before it commits; the second reads one of them.
		if _, err := os.Stat("lived"); err != nil {
			f, _ := os.Create("lived")
			f.Sync()
			f.Close()
			sim.Txn(sim.Append(1, 1), sim.Append(2, 1))
			sim.Txn(sim.ReadList(1))
			time.Sleep(time.Hour)
		}
		t := sim.Txn(sim.ReadList(1), sim.ReadList(2))
		tick()
		t.Ok(sim.List(1), sim.List())
	case "aborted-read":
		t := sim.Txn(sim.Write(1, 5))
		tick()
		t.Fail()
		t = sim.Txn(sim.Read(1), sim.Write(2, 1))
		tick()
		t.Ok(sim.Value(5))
		t = sim.Txn(sim.Read(2))
		tick()
		t.Ok(sim.Value(1))
	case "twice":
		sim.Txn(sim.Append(1, 7)).Ok()
		sim.Txn(sim.Append(1, 7))
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", *mode)
		os.Exit(1)
	}
	fmt.Println("recorded", *mode)
}
