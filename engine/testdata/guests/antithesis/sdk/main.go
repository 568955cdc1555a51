// sdk is a program written against the Antithesis Go SDK, not sim: under
// seedfall its assertions, lifecycle calls and random draws must behave as
// sim's. It runs -n steps; each evaluates an Always on a balance that -bad
// drives below zero at that step, a Sometimes true on even steps, rich
// assertions whose conditions hold, and with -unreachable an Unreachable
// at that step. -setup sleeps that long and calls lifecycle.SetupComplete;
// -event sends an event; -random prints the SDK's random draws.
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/antithesishq/antithesis-sdk-go/assert"
	"github.com/antithesishq/antithesis-sdk-go/lifecycle"
	"github.com/antithesishq/antithesis-sdk-go/random"
)

func main() {
	n := flag.Int("n", 5, "steps")
	bad := flag.Int("bad", 0, "at this step the balance goes negative (0: never)")
	unreachable := flag.Int("unreachable", 0, "at this step an Unreachable is reached (0: never)")
	setup := flag.Duration("setup", 0, "sleep this long, then call lifecycle.SetupComplete (0: never)")
	event := flag.Bool("event", false, "send an event after the steps")
	rnd := flag.Int("random", 0, "print this many random.GetRandom draws and a RandomChoice")
	sleep := flag.Duration("sleep", time.Millisecond, "sleep between steps")
	flag.Parse()
	if *setup > 0 {
		time.Sleep(*setup)
		lifecycle.SetupComplete(map[string]any{"after": setup.String()})
	}
	for i := 0; i < *rnd; i++ {
		fmt.Println("random", random.GetRandom())
	}
	if *rnd > 0 {
		c, _ := random.RandomChoice([]string{"red", "green", "blue", "cyan", "magenta"})
		fmt.Println("choice", c)
	}
	balance := 10
	for i := 1; i <= *n; i++ {
		if i == *bad {
			balance = -5
		}
		assert.Always(balance >= 0, "sdk balance never negative", map[string]any{"balance": balance, "step": i})
		assert.Sometimes(i%2 == 0, "sdk an even step", map[string]any{"step": i})
		assert.AlwaysOrUnreachable(i <= *n, "sdk steps stay in range", nil)
		assert.AlwaysGreaterThanOrEqualTo(balance, 0, "sdk balance at least zero", map[string]any{"step": i})
		assert.AlwaysLessThan(i, *n+1, "sdk step below the end", nil)
		assert.SometimesGreaterThan(i, 3, "sdk a late step", nil)
		assert.SometimesAll([]assert.NamedBool{{First: "even", Second: i%2 == 0}, {First: "late", Second: i > 2}}, "sdk even and late", nil)
		assert.AlwaysSome([]assert.NamedBool{{First: "odd", Second: i%2 == 1}, {First: "even", Second: i%2 == 0}}, "sdk odd or even", nil)
		if i == *unreachable {
			assert.Unreachable("sdk the forbidden branch", map[string]any{"step": i})
		}
		fmt.Println("step", i)
		time.Sleep(*sleep)
	}
	assert.Reachable("sdk the end", nil)
	if *n < 0 {
		assert.Reachable("sdk a negative count", nil)
		assert.Sometimes(true, "sdk never evaluated", nil)
	}
	if *event {
		assert.Reachable("sdk a \"quoted\" message", nil)
		lifecycle.SendEvent("sdk steps done", map[string]any{"steps": *n, "balance": balance, "note": "a \"quoted\", {braced} word", "nested": map[string]any{"b": 1, "a": []int{1, 2}}})
	}
	fmt.Println("done")
}
