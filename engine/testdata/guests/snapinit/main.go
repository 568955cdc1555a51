// snapinit does work in its package init, prints a line there and starts
// a timer, then in main prints what init computed, the order a map
// iterates in, and how long it waited for init's timer: what a start from
// a post-init snapshot must keep (the line, the sum, the timer's
// deadline counted from init) and vary by seed (the order).
package main

import (
	"fmt"
	"strings"
	"time"
)

var (
	table = build()
	timer = time.NewTimer(1500 * time.Millisecond)
)

func build() []uint64 {
	t := make([]uint64, 256)
	for i := range t {
		x := uint64(i)
		for k := 0; k < 8; k++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		t[i] = x
	}
	return t
}

func init() {
	fmt.Println("init: table ready")
}

func main() {
	var sum uint64
	for _, x := range table {
		sum += x
	}
	fmt.Printf("main: sum %x\n", sum)
	m := map[int]bool{}
	for i := 0; i < 16; i++ {
		m[i] = true
	}
	var order []string
	for k := range m {
		order = append(order, fmt.Sprint(k))
	}
	fmt.Println("order:", strings.Join(order, ","))
	start := time.Now()
	<-timer.C
	fmt.Printf("main: init's timer fired %v after main began\n", time.Since(start).Round(100*time.Millisecond))
}
