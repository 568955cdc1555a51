// server appends each line it receives to a file and acknowledges it before
// any fsync: the bug.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
)

func main() {
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		panic(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			panic(err)
		}
		go func() {
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				line := sc.Text()
				if line == "COUNT" {
					b, _ := os.ReadFile("log")
					fmt.Fprintln(c, strings.Count(string(b), "\n"))
					continue
				}
				f, _ := os.OpenFile("log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				f.WriteString(line + "\n")
				f.Close()
				fmt.Fprintln(c, "OK")
			}
		}()
	}
}
