// tiny is the smallest useful node: it prints, sleeps three times, exits.
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
