// Command racyorder shows the order in which two CPU-bound goroutines make
// progress: each records its letter after every chunk of work, and main
// prints the sequence. Nothing blocks, so without preemption the first
// goroutine finishes before the second starts.
package main

import (
	"fmt"
	"strings"
	"sync"
)

const chunks = 20

var (
	mu    sync.Mutex
	order strings.Builder
)

//go:noinline
func step(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

func run(letter string, wg *sync.WaitGroup) {
	defer wg.Done()
	x := uint64(0)
	for c := 0; c < chunks; c++ {
		for i := 0; i < 5000; i++ {
			x = step(x)
		}
		mu.Lock()
		order.WriteString(letter)
		mu.Unlock()
	}
	_ = x
}

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go run("A", &wg)
	go run("B", &wg)
	wg.Wait()
	fmt.Println("order", order.String())
}
