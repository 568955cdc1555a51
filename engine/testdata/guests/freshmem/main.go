// freshmem grows its memory by a seeded 1 to 12 MiB, checks that the new
// memory reads zero, as Go's runtime takes it to be, and dirties it. A
// start that reuses the instance of an earlier incarnation must clear what
// that incarnation grew into.
package main

import (
	"fmt"
	"math/rand/v2"
)

func main() {
	mib := 1 + rand.IntN(12)
	b := make([]byte, mib<<20)
	dirty := 0
	for _, c := range b {
		if c != 0 {
			dirty++
		}
	}
	for i := range b {
		b[i] = 0xa5
	}
	fmt.Printf("grew %d MiB, %d bytes not zero\n", mib, dirty)
}
