// spin never yields: the watchdog must stop it.
package main

import "fmt"

func main() {
	fmt.Println("spinning")
	x := 0
	for {
		x++
		if x == -1 {
			break
		}
	}
	fmt.Println(x)
}
