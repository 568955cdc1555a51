// clockwatch sleeps -every for -n rounds and prints, each round, the wall
// clock (ms past 2025-01-01, as the node reads it), the monotonic time since
// it started, and how long the sleep took by the monotonic clock: what a
// program sees of clock skew, clock jumps and slowdowns.
package main

import (
	"flag"
	"fmt"
	"time"
)

func main() {
	n := flag.Int("n", 5, "rounds")
	every := flag.Duration("every", 100*time.Millisecond, "sleep per round")
	flag.Parse()
	epoch := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	for i := 0; i < *n; i++ {
		before := time.Now()
		time.Sleep(*every)
		now := time.Now()
		fmt.Printf("round %d wall=%dms mono=%dms slept=%dms\n", i,
			now.Round(0).Sub(epoch).Milliseconds(), now.Sub(start).Milliseconds(), now.Sub(before).Milliseconds())
	}
}
