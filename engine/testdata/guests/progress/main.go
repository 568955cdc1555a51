// progress counts to -n, one step every -every, keeping its count in a
// synced file so that an incarnation after a crash resumes where the last
// one left off. With -quiet it first calls sim.QuietFor(-quiet).
package main

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"time"

	"guests/progress/count"

	"github.com/seedfall/seedfall/sim"
)

func main() {
	n := flag.Int("n", 10, "steps")
	every := flag.Duration("every", 100*time.Millisecond, "time per step")
	quiet := flag.Duration("quiet", 0, "call sim.QuietFor with this first")
	random := flag.Bool("rand", false, "print a number from crypto/rand after each step")
	flag.Parse()
	if *quiet > 0 {
		sim.QuietFor(*quiet)
	}
	var each func(int)
	if *random {
		each = func(int) {
			var b [4]byte
			rand.Read(b[:])
			fmt.Println("rand", binary.LittleEndian.Uint32(b[:]))
		}
	}
	count.Run("v1", *n, *every, each)
}
