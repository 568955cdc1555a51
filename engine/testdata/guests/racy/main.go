// Command racy has a real data race: two goroutines increment a shared
// counter with an unsynchronized read-modify-write that makes a call in
// between. It exits 1 when an update was lost, which only happens when a
// goroutine is preempted inside that window.
package main

import (
	"fmt"
	"os"
	"sync"
)

const perWorker = 50000

var counter int

//go:noinline
func mix(v int) int { return v ^ 0x5a5a }

//go:noinline
func work(v int) int { return mix(mix(v)) }

func worker(wg *sync.WaitGroup) {
	defer wg.Done()
	for i := 0; i < perWorker; i++ {
		v := counter
		v = work(v) // a preemption here loses the other goroutine's updates
		counter = v + 1
	}
}

func main() {
	var wg sync.WaitGroup
	wg.Add(2)
	go worker(&wg)
	go worker(&wg)
	wg.Wait()
	fmt.Println("counter", counter)
	if counter != 2*perWorker {
		fmt.Printf("lost %d updates\n", 2*perWorker-counter)
		os.Exit(1)
	}
}
