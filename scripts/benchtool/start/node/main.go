// node prints one line and exits: a world of it costs one start of a Go
// program, plus the run around it.
package main

import "fmt"

func main() { fmt.Println("started") }
