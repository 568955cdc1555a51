// hello prints what a program sees of its world: args, env, clocks,
// randomness and map order, so that a test can check each is seeded.
package main

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

func main() {
	fmt.Println("args", os.Args)
	fmt.Println("env", os.Getenv("SEEDFALL"), os.Getenv("SEEDFALL_NODE"), os.Getenv("EXTRA"))
	wd, _ := os.Getwd()
	fmt.Println("wd", wd)
	start := time.Now()
	fmt.Println("now", start.UTC().Format(time.RFC3339Nano))
	var b [8]byte
	crand.Read(b[:])
	fmt.Printf("crypto %x\n", b)
	fmt.Println("math", rand.IntN(1000000))
	m := map[int]bool{}
	for i := 0; i < 8; i++ {
		m[i] = true
	}
	order := ""
	for k := range m {
		order += fmt.Sprint(k)
	}
	fmt.Println("maporder", order)
	time.Sleep(1500 * time.Millisecond)
	fmt.Println("slept", time.Since(start))
	fmt.Fprintln(os.Stderr, "to stderr")
	fmt.Print("no newline at the end")
}
