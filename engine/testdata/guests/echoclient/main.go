// echoclient dials the echo server by name, retrying while it is down, and
// checks every echo. With -bulk it also pushes a large payload to test
// backpressure, and with -refused it first dials a port nobody listens on.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "server:7000", "server")
	n := flag.Int("n", 5, "messages")
	refused := flag.Bool("refused", false, "dial a closed port first")
	flag.Parse()
	if *refused {
		_, err := net.Dial("tcp", "server:7999")
		fmt.Println("dial closed port:", err)
		_, err = net.Dial("tcp", "nosuchhost:1")
		fmt.Println("dial unknown host:", err != nil)
	}
	var c net.Conn
	var err error
	for i := 0; i < 50; i++ {
		start := time.Now()
		c, err = net.DialTimeout("tcp", *addr, time.Second)
		if err == nil {
			fmt.Println("connected", c.LocalAddr(), "->", c.RemoteAddr(), "in", time.Since(start))
			break
		}
		fmt.Println("dial:", err)
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		os.Exit(1)
	}
	r := bufio.NewReader(c)
	for i := 0; i < *n; i++ {
		start := time.Now()
		fmt.Fprintf(c, "msg-%d\n", i)
		c.SetReadDeadline(time.Now().Add(time.Second))
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Println("read:", err)
			os.Exit(1)
		}
		if strings.TrimSpace(line) != fmt.Sprintf("echo msg-%d", i) {
			fmt.Println("bad echo:", line)
			os.Exit(1)
		}
		fmt.Println("echo", i, "rtt", time.Since(start))
	}
	// A read that times out must say so, not hang or fail otherwise.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = r.ReadByte()
	if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		fmt.Println("want a timeout, got", err)
		os.Exit(1)
	}
	fmt.Println("deadline ok")
	// Backpressure: a 4 MiB write must complete while the server echoes it back.
	payload := strings.Repeat("x", 1023) + "\n"
	done := make(chan error, 1)
	go func() {
		for i := 0; i < 4096; i++ {
			if _, err := io.WriteString(c, payload); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	c.SetReadDeadline(time.Time{})
	got := 0
	for got < 4096 {
		if _, err := r.ReadString('\n'); err != nil {
			fmt.Println("bulk read:", err)
			os.Exit(1)
		}
		got++
	}
	if err := <-done; err != nil {
		fmt.Println("bulk write:", err)
		os.Exit(1)
	}
	fmt.Println("bulk ok")
	c.Close()
}
