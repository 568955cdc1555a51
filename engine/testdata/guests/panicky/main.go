// panicky panics after a while.
package main

import (
	"fmt"
	"time"
)

func main() {
	fmt.Println("about to fail")
	time.Sleep(10 * time.Millisecond)
	var m map[string]int
	m["boom"] = 1
}
