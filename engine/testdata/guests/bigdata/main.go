// bigdata has 32 MiB of static data, so its initial memory is larger than
// the smallest memory_limit.
package main

import (
	"fmt"
	"os"
)

var table [32 << 20]byte

func main() {
	table[len(os.Args)] = 1
	fmt.Println("started", table[1])
}
