// hostcalls makes -n rounds of cheap host calls, one clock read and one
// one-byte file write each, and nothing else: the cost of a host call.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	n := flag.Int("n", 100000, "rounds")
	flag.Parse()
	f, err := os.Create("calls")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var last time.Time
	b := []byte{'x'}
	for i := 0; i < *n; i++ {
		last = time.Now()
		if _, err := f.WriteAt(b, int64(i%4096)); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	fmt.Println(*n, "rounds, last at", last.UTC().Format(time.RFC3339Nano))
}
