// node prints and sleeps three times: the trivial world of the prototype's
// throughput figure.
package main

import (
	"fmt"
	"math/rand/v2"
	"time"
)

func main() {
	for i := 0; i < 3; i++ {
		fmt.Println("tick", i)
		time.Sleep(500*time.Millisecond + time.Duration(rand.IntN(1000))*time.Millisecond)
	}
}
