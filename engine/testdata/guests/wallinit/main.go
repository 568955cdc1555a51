// wallinit reads the wall clock in a package variable: its init cannot be
// a snapshot that every start shares, so it starts cold each time.
package main

import (
	"fmt"
	"time"
)

var booted = time.Now().UTC()

func main() {
	fmt.Println("booted at", booted.Format(time.RFC3339Nano))
}
