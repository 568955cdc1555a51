// connrace is a deposit server with a race between its per-connection
// handlers: each reads the balance, audits it (a call that computes) and
// writes it back plus the deposit, without a lock. A handler preempted
// inside that window while another handler is ready to run loses that
// handler's deposit: a race of depth 2, one preemption at the right call.
// With -locked the window holds a mutex: the fixed twin.
//
//	connrace server [-locked] [-window N]  serves "add N" and "total" lines on :7000;
//	                                       the audit makes about N counted calls
//	connrace client [-conns C] [-n N]      deposits 1 N times on each of C connections at
//	                                       once, then checks the total; exits 1 if one was lost
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

//go:noinline
func mix(v int) int { return v ^ 0x5a5a }

// round gives v back. Not being a leaf, it checks its stack on entry, so a
// preemption asked for inside it or inside mix takes effect here.
//
//go:noinline
func round(v int) int { return mix(mix(v)) }

// audit computes over v and gives it back unchanged, in about calls
// counted calls.
func audit(v, calls int) int {
	for i := 0; i < calls/3; i++ {
		v = round(v)
	}
	return v
}

var (
	balance int
	mu      sync.Mutex
)

func main() {
	if len(os.Args) < 2 {
		fmt.Println("usage: connrace server|client [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	locked := fs.Bool("locked", false, "server: hold a lock across the read-modify-write")
	window := fs.Int("window", 6000, "server: counted calls the audit makes, inside the window")
	conns := fs.Int("conns", 8, "client: connections")
	n := fs.Int("n", 2, "client: deposits per connection")
	fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "server":
		serve(*locked, *window)
	case "client":
		client(*conns, *n)
	}
}

func serve(locked bool, window int) {
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			os.Exit(1)
		}
		go handle(c, locked, window)
	}
}

func handle(c net.Conn, locked bool, window int) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSpace(line)
		if line == "total" {
			fmt.Fprintln(c, balance)
			continue
		}
		amount, err := strconv.Atoi(strings.TrimPrefix(line, "add "))
		if err != nil {
			fmt.Fprintln(c, "bad request")
			continue
		}
		if locked {
			mu.Lock()
		}
		v := balance
		v = audit(v, window) // a preemption here loses the deposits of the handlers that run meanwhile
		balance = v + amount
		if locked {
			mu.Unlock()
		}
		fmt.Fprintln(c, "ok")
	}
}

// dial connects to the server, retrying while it is not listening yet.
func dial() net.Conn {
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", "server:7000")
		if err == nil {
			return c
		}
		if i == 50 {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ask sends one line and reads the answer.
func ask(c net.Conn, r *bufio.Reader, line string) string {
	fmt.Fprintln(c, line)
	answer, err := r.ReadString('\n')
	if err != nil {
		fmt.Println("read:", err)
		os.Exit(1)
	}
	return strings.TrimSpace(answer)
}

func client(conns, n int) {
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial()
			defer c.Close()
			r := bufio.NewReader(c)
			for j := 0; j < n; j++ {
				if a := ask(c, r, "add 1"); a != "ok" {
					fmt.Println("deposit:", a)
					os.Exit(1)
				}
			}
		}()
	}
	wg.Wait()
	c := dial()
	total := ask(c, bufio.NewReader(c), "total")
	fmt.Println("total", total, "want", conns*n)
	if total != strconv.Itoa(conns*n) {
		fmt.Println("lost deposits")
		os.Exit(1)
	}
}
