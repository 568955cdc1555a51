// echoserver echoes lines back over TCP, and says who connected.
package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
)

func main() {
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening on", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			os.Exit(1)
		}
		fmt.Println("accepted", c.RemoteAddr(), "on", c.LocalAddr())
		go func(c net.Conn) {
			defer c.Close()
			r := bufio.NewScanner(c)
			for r.Scan() {
				fmt.Fprintf(c, "echo %s\n", r.Text())
			}
			fmt.Println("closed by", c.RemoteAddr(), r.Err())
		}(c)
	}
}
