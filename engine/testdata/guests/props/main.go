// props evaluates sim properties: a balance that -bad drives below zero
// at step -bad (Always), a Sometimes true only on even steps, a Reachable
// at the end, and with -unreachable an Unreachable at that step. It prints
// each step so tests see where the run stopped.
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	n := flag.Int("n", 5, "steps")
	bad := flag.Int("bad", 0, "at this step the balance goes negative (0: never)")
	unreachable := flag.Int("unreachable", 0, "at this step an Unreachable is reached (0: never)")
	never := flag.Bool("never", false, "evaluate the Sometimes with a condition that never holds")
	flag.Parse()
	balance := 10
	for i := 1; i <= *n; i++ {
		if i == *bad {
			balance = -5
		}
		sim.Always(balance >= 0, "balance never negative", map[string]any{"balance": balance, "step": i})
		sim.Sometimes(i%2 == 0 && !*never, "an even step", map[string]any{"step": i})
		sim.AlwaysOrUnreachable(i <= *n, "steps stay in range", nil)
		if i == *unreachable {
			sim.Unreachable("the forbidden branch", map[string]any{"step": i})
		}
		fmt.Println("step", i)
		time.Sleep(time.Millisecond)
	}
	sim.Reachable("the end", nil)
	if *n < 0 {
		sim.Reachable("a negative count", nil)
	}
	fmt.Println("done")
}
