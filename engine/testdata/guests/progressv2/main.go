// progressv2 is progress's upgrade: the same count, saying "v2".
package main

import (
	"flag"
	"time"

	"guests/progress/count"
)

func main() {
	n := flag.Int("n", 10, "steps")
	every := flag.Duration("every", 100*time.Millisecond, "time per step")
	flag.Parse()
	count.Run("v2", *n, *every, nil)
}
