// server appends each line it receives to a file and acknowledges it before
// any fsync: the bug. With -sync-after-ack it syncs the file right after
// the acknowledgement, so only a crash in the moment between the two loses
// an acknowledged write, and most crashes miss that moment.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
)

func main() {
	syncAfterAck := flag.Bool("sync-after-ack", false, "fsync each record right after acknowledging it")
	flag.Parse()
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
				if !*syncAfterAck {
					f.Close()
					fmt.Fprintln(c, "OK")
					continue
				}
				fmt.Fprintln(c, "OK")
				f.Sync()
				f.Close()
			}
		}()
	}
}
