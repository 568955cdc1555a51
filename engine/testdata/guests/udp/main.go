// udp exercises UDP sockets between nodes. With -role server it answers
// every datagram on :9000 with "ack <datagram>" and counts what it hears.
// The client checks ListenPacket/WriteTo/ReadFrom, DialUDP/Write/Read and
// read deadlines, then sends -n numbered datagrams and reports how many
// answers came back and how many were duplicates.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	role := flag.String("role", "client", "server or client")
	n := flag.Int("n", 20, "datagrams the client sends in its count")
	gap := flag.Duration("gap", 10*time.Millisecond, "time between counted datagrams")
	flag.Parse()
	if *role == "server" {
		serve()
		return
	}
	if err := client(*n, *gap); err != nil {
		fmt.Println("FAIL", err)
		os.Exit(1)
	}
}

func serve() {
	pc, err := net.ListenPacket("udp", ":9000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	fmt.Println("listening on", pc.LocalAddr())
	buf := make([]byte, 2048)
	for {
		k, from, err := pc.ReadFrom(buf)
		if err != nil {
			fmt.Println("read:", err)
			os.Exit(1)
		}
		if _, err := pc.WriteTo(append([]byte("ack "), buf[:k]...), from); err != nil {
			fmt.Println("write:", err)
			os.Exit(1)
		}
	}
}

func client(n int, gap time.Duration) error {
	time.Sleep(5 * time.Millisecond) // let the server bind
	srv, err := net.ResolveUDPAddr("udp", "server:9000")
	if err != nil {
		return err
	}
	// An unconnected socket: WriteTo and ReadFrom.
	pc, err := net.ListenPacket("udp", ":0")
	if err != nil {
		return err
	}
	defer pc.Close()
	fmt.Println("packet conn on", pc.LocalAddr())
	buf := make([]byte, 2048)
	for try := 0; ; try++ {
		if _, err := pc.WriteTo([]byte("hello"), srv); err != nil {
			return fmt.Errorf("writeto: %v", err)
		}
		pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		k, from, err := pc.ReadFrom(buf)
		if err == nil {
			fmt.Printf("readfrom %s: %q\n", from, buf[:k])
			break
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) || try == 20 {
			return fmt.Errorf("readfrom: %v", err)
		}
	}
	// A read deadline with nothing to read times out.
	pc.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	start := time.Now()
	for {
		// Late or duplicated answers to hello may still come in.
		k, _, err := pc.ReadFrom(buf)
		if err == nil && string(buf[:k]) == "ack hello" {
			continue
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("read with nothing to read: %q, %v, want a timeout", buf[:k], err)
		}
		break
	}
	fmt.Println("deadline after", time.Since(start).Round(time.Millisecond))

	// A connected socket: Write and Read.
	c, err := net.DialUDP("udp", nil, srv)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Println("dialed", c.RemoteAddr(), "from", c.LocalAddr().(*net.UDPAddr).IP)
	got := map[string]int{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			k, err := c.Read(buf)
			if err != nil {
				return
			}
			got[string(buf[:k])]++
		}
	}()
	for i := 1; i <= n; i++ {
		if _, err := c.Write([]byte(fmt.Sprintf("m%d", i))); err != nil {
			return fmt.Errorf("write: %v", err)
		}
		time.Sleep(gap)
	}
	<-done
	dups := 0
	var seen []string
	for i := 1; i <= n; i++ {
		k := got[fmt.Sprintf("ack m%d", i)]
		if k > 0 {
			seen = append(seen, fmt.Sprint(i))
		}
		dups += max(k-1, 0)
	}
	fmt.Printf("sent %d got %d dups %d: %s\n", n, len(seen), dups, strings.Join(seen, " "))
	return nil
}
