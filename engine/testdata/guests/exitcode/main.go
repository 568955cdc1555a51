// exitcode exits with the status given in its first argument after a sleep.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	code, _ := strconv.Atoi(os.Args[1])
	time.Sleep(50 * time.Millisecond)
	fmt.Println("exiting with", code)
	os.Exit(code)
}
