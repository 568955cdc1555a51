// checker lets the workers run for -after, then asks the lease server how
// much work was done and how much of it was done without a live lease.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	server := flag.String("server", "lock:7000", "lease server")
	after := flag.Duration("after", 5*time.Second, "how long the workers run")
	flag.Parse()
	time.Sleep(*after)
	c, err := net.Dial("tcp", *server)
	if err != nil {
		fmt.Println("checker:", err)
		os.Exit(1)
	}
	fmt.Fprintln(c, "STATUS")
	var works, violations int
	if _, err := fmt.Fscanf(bufio.NewReader(c), "STATUS %d %d\n", &works, &violations); err != nil {
		fmt.Println("checker:", err)
		os.Exit(1)
	}
	fmt.Printf("checker: %d works, %d without a live lease\n", works, violations)
	switch {
	case violations > 0:
		fmt.Println("checker: FAIL: a worker worked after its lease had ended")
		os.Exit(1)
	case works == 0:
		fmt.Println("checker: FAIL: no work was done")
		os.Exit(1)
	}
}
