// chatter keeps a network busy the way services do. With -serve it runs an
// HTTP server on :8080 (/inc counts requests), a streaming server on :7100
// (after "from N" it sends N, N+1, ... one line every 5ms, like a gRPC
// server stream) and a UDP echo on :9000. Towards each of -peers it runs
// an HTTP client with keep-alive and a timeout, a streaming client that
// resumes where it stopped after a reset or a 1s silence, and a UDP pinger.
// With -rounds N > 0 each client stops after N answers (N stream lines
// times 10) and the program prints a summary and exits, unless it serves.
// A stream line out of order fails the program. -report prints the count
// of answers received so far at that interval.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	rounds   = flag.Int("rounds", 0, "answers each client waits for; 0 chats forever")
	messages atomic.Int64 // answers received: HTTP responses, stream lines, datagrams
)

func main() {
	serve := flag.Bool("serve", false, "run the servers")
	peers := flag.String("peers", "", "comma-separated peers to chat with")
	report := flag.Duration("report", 0, "print the answers received so far this often (0: never)")
	flag.Parse()
	if *report > 0 {
		go func() {
			for range time.Tick(*report) {
				fmt.Println("answers", messages.Load())
			}
		}()
	}
	if *serve {
		go serveHTTP()
		go serveStream()
		go serveUDP()
	}
	var wg sync.WaitGroup
	for _, p := range strings.Split(*peers, ",") {
		if p == "" {
			continue
		}
		wg.Add(3)
		go func() { defer wg.Done(); httpClient(p) }()
		go func() { defer wg.Done(); streamClient(p) }()
		go func() { defer wg.Done(); udpClient(p) }()
	}
	wg.Wait()
	fmt.Println("done,", messages.Load(), "answers")
	if *serve {
		select {}
	}
}

func serveHTTP() {
	var n atomic.Int64
	http.HandleFunc("/inc", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, n.Add(1))
	})
	if err := http.ListenAndServe(":8080", nil); err != nil {
		fmt.Println("http:", err)
		os.Exit(1)
	}
}

func serveStream() {
	l, err := net.Listen("tcp", ":7100")
	if err != nil {
		fmt.Println("stream listen:", err)
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
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return
			}
			n, _ := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "from "))
			for ; ; n++ {
				c.SetWriteDeadline(time.Now().Add(2 * time.Second))
				if _, err := fmt.Fprintln(c, n); err != nil {
					return
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
}

func serveUDP() {
	pc, err := net.ListenPacket("udp", ":9000")
	if err != nil {
		fmt.Println("udp listen:", err)
		os.Exit(1)
	}
	buf := make([]byte, 1500)
	for {
		k, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		pc.WriteTo(buf[:k], from)
	}
}

func enough(n int, times int) bool { return *rounds > 0 && n >= *rounds*times }

func httpClient(peer string) {
	c := &http.Client{Timeout: 300 * time.Millisecond}
	errs := 0
	for ok := 0; !enough(ok, 1); {
		resp, err := c.Get("http://" + peer + ":8080/inc")
		if err != nil {
			errs++
			time.Sleep(20 * time.Millisecond)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			ok++
			messages.Add(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("http %s: %d answers, %d errors\n", peer, *rounds, errs)
}

func streamClient(peer string) {
	next, resumes := 0, 0
	for !enough(next, 10) {
		c, err := net.DialTimeout("tcp", peer+":7100", 500*time.Millisecond)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		resumes++
		fmt.Fprintf(c, "from %d\n", next)
		r := bufio.NewReader(c)
		for !enough(next, 10) {
			c.SetReadDeadline(time.Now().Add(time.Second))
			line, err := r.ReadString('\n')
			if err != nil {
				break
			}
			if got, _ := strconv.Atoi(strings.TrimSpace(line)); got != next {
				fmt.Printf("FAIL stream %s: got %d, want %d\n", peer, got, next)
				os.Exit(1)
			}
			next++
			messages.Add(1)
		}
		c.Close()
	}
	fmt.Printf("stream %s: %d lines in order, %d connections\n", peer, next, resumes)
}

func udpClient(peer string) {
	c, err := net.Dial("udp", peer+":9000")
	if err != nil {
		fmt.Println("udp dial:", err)
		os.Exit(1)
	}
	defer c.Close()
	buf := make([]byte, 64)
	got := 0
	for i := 0; !enough(got, 1); i++ {
		c.Write([]byte(strconv.Itoa(i)))
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(buf); err == nil {
			got++
			messages.Add(1)
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("udp %s: %d answers\n", peer, got)
}
