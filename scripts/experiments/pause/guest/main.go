// Command pausebench is the guest of scripts/experiments/pause: "sleeps N"
// sleeps 1ms N times, so that a host can time the waits.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] != "sleeps" {
		fmt.Fprintln(os.Stderr, "usage: pausebench sleeps N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("slept", n, "times in", time.Since(start))
}
