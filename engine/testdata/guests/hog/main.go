// hog allocates without end and keeps all it allocated: its memory_limit
// must stop it. It writes every page it gets, so the host's memory really
// holds them, and sleeps a millisecond per chunk, so a run that stops it
// sooner ends sooner in virtual time.
package main

import (
	"flag"
	"fmt"
	"time"
)

func main() {
	chunk := flag.Int("chunk", 1<<20, "bytes per allocation")
	flag.Parse()
	var live [][]byte
	for total := 0; ; total += *chunk {
		if total%(64<<20) == 0 {
			fmt.Printf("holding %d MiB\n", total>>20)
		}
		b := make([]byte, *chunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		live = append(live, b)
		time.Sleep(time.Millisecond)
	}
}
