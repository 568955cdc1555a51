// sleeper prints a line every -every for -n rounds, with goroutines racing
// through channels, so the seeded interleaving shows in the output.
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"time"
)

func main() {
	n := flag.Int("n", 5, "rounds")
	every := flag.Duration("every", 100*time.Millisecond, "period")
	code := flag.Int("exit", 0, "exit status")
	flag.Parse()
	var wg sync.WaitGroup
	ch := make(chan string, 100)
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < *n; i++ {
				time.Sleep(*every)
				ch <- fmt.Sprintf("g%d.%d", g, i)
			}
		}(g)
	}
	go func() { wg.Wait(); close(ch) }()
	for s := range ch {
		fmt.Println(os.Getenv("SEEDFALL_NODE"), s)
	}
	os.Exit(*code)
}
