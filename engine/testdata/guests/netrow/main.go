// netrow shows what a program sees of a network fault. With -role server it
// echoes lines on TCP :7000 and datagrams on UDP :9000. The client connects
// at once, then at 150ms, all at the same time: sends a datagram and waits
// up to 350ms for its answer; dials a new connection with a 1s timeout; and
// sends a line on the old connection, reads with a 100ms deadline, then
// waits for the answer. It prints what each saw and when, in milliseconds
// after 150ms.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	role := flag.String("role", "client", "server or client")
	flag.Parse()
	if *role == "server" {
		serve()
		return
	}
	client()
}

func serve() {
	pc, err := net.ListenPacket("udp", ":9000")
	if err != nil {
		fmt.Println("listen udp:", err)
		os.Exit(1)
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			k, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			pc.WriteTo(buf[:k], from)
		}
	}()
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
		go func() {
			defer c.Close()
			s := bufio.NewScanner(c)
			for s.Scan() {
				fmt.Fprintln(c, s.Text())
			}
		}()
	}
}

func what(err error) string {
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	}
	return err.Error()
}

func client() {
	start := time.Now()
	c, err := net.Dial("tcp", "server:7000")
	if err != nil {
		fmt.Println("FAIL dial:", err)
		os.Exit(1)
	}
	r := bufio.NewReader(c)
	fmt.Fprintln(c, "hi")
	if _, err := r.ReadString('\n'); err != nil {
		fmt.Println("FAIL first exchange:", err)
		os.Exit(1)
	}
	time.Sleep(150*time.Millisecond - time.Since(start))
	t0 := time.Now()
	ms := func() int64 { return time.Since(t0).Milliseconds() }
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		u, err := net.Dial("udp", "server:9000")
		if err != nil {
			say("udp: %v", err)
			return
		}
		defer u.Close()
		u.Write([]byte("ping"))
		u.SetReadDeadline(t0.Add(350 * time.Millisecond))
		buf := make([]byte, 64)
		if _, err := u.Read(buf); err != nil {
			say("udp: lost (%s)", what(err))
			return
		}
		say("udp: answered after %dms", ms())
	}()
	go func() {
		defer wg.Done()
		d, err := net.DialTimeout("tcp", "server:7000", time.Second)
		if err != nil {
			say("dial: %s after %dms", what(err), ms())
			return
		}
		d.Close()
		say("dial: ok after %dms", ms())
	}()
	go func() {
		defer wg.Done()
		if _, err := fmt.Fprintln(c, "held"); err != nil {
			say("write: %s", what(err))
			return
		}
		c.SetReadDeadline(t0.Add(100 * time.Millisecond))
		_, err := r.ReadString('\n')
		if err != nil {
			say("first read: %s after %dms", what(err), ms())
			c.SetReadDeadline(time.Time{})
			_, err = r.ReadString('\n')
		}
		if err != nil {
			say("read: %s after %dms", what(err), ms())
			return
		}
		say("reply after %dms", ms())
	}()
	wg.Wait()
}
