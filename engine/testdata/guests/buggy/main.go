// buggy has two buggify sites and prints each firing; with -setup it sleeps
// that long, then calls sim.SetupComplete.
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	n := flag.Int("n", 200, "hits of each site")
	setup := flag.Duration("setup", 0, "sleep this long, then call sim.SetupComplete")
	every := flag.Duration("every", time.Millisecond, "sleep between hits")
	flag.Parse()
	if *setup > 0 {
		time.Sleep(*setup)
		sim.SetupComplete()
	}
	a, b := 0, 0
	for i := 1; i <= *n; i++ {
		if sim.Buggify() {
			a++
			fmt.Println("site a fired at hit", i)
		}
		if sim.BuggifyWithProb(0.5) {
			b++
			fmt.Println("site b fired at hit", i)
		}
		time.Sleep(*every)
	}
	fmt.Println("fired", a, b)
}
