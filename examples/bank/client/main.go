// Command client is bank's workload. Several workers, each on its own connection, send
// transfers between a few accounts at once; then the client reads every balance back.
// Each acknowledged transfer must have been applied exactly once, whatever the order:
// every account must hold its opening balance plus what the acknowledged transfers
// moved into it, minus what they moved out, and the total must not have changed. It
// exits 1 if either check fails.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "server:7000", "server address")
	workers := flag.Int("workers", 8, "transfers at once, each worker on its own connection")
	transfers := flag.Int("transfers", 40, "transfers per worker")
	accounts := flag.Int("accounts", 4, "number of accounts, as the server's -accounts")
	initial := flag.Int64("initial", 1000, "opening balance of each account, as the server's -initial")
	largest := flag.Int64("max", 100, "largest amount of one transfer")
	timeout := flag.Duration("timeout", 5*time.Second, "time limit for one request")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")
	if *accounts < 2 {
		log.Fatalf("-accounts is %d; a transfer needs 2", *accounts)
	}

	// moved[w][a] is what worker w's acknowledged transfers added to account a.
	moved := make([][]int64, *workers)
	refused := make([]int, *workers)
	var wg sync.WaitGroup
	for w := range *workers {
		moved[w] = make([]int64, *accounts)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := dial(*addr, *timeout)
			defer cl.conn.Close()
			rng := rand.New(rand.NewPCG(1, uint64(w))) // the same transfers in every run
			for range *transfers {
				from := rng.IntN(*accounts)
				to := (from + 1 + rng.IntN(*accounts-1)) % *accounts
				amount := 1 + rng.Int64N(*largest)
				reply := cl.request(fmt.Sprintf("TRANSFER %d %d %d", from, to, amount))
				switch {
				case strings.HasPrefix(reply, "OK "):
					moved[w][from] -= amount
					moved[w][to] += amount
				case reply == "REFUSED insufficient funds":
					refused[w]++
				default:
					log.Fatalf("FAIL: TRANSFER %d %d %d: unexpected reply %q", from, to, amount, reply)
				}
			}
		}()
	}
	wg.Wait()

	cl := dial(*addr, *timeout)
	var total, wantTotal int64
	wrong := 0
	for a := range *accounts {
		want := *initial
		for w := range moved {
			want += moved[w][a]
		}
		reply := cl.request(fmt.Sprintf("BALANCE %d", a))
		got, err := strconv.ParseInt(strings.TrimPrefix(reply, "BALANCE "), 10, 64)
		if err != nil || !strings.HasPrefix(reply, "BALANCE ") {
			log.Fatalf("FAIL: BALANCE %d: unexpected reply %q", a, reply)
		}
		if got != want {
			wrong++
			log.Printf("account %d holds %d, want %d", a, got, want)
		}
		total += got
		wantTotal += *initial
	}
	n, nrefused := *workers**transfers, 0
	for _, r := range refused {
		nrefused += r
	}
	switch {
	case total != wantTotal:
		log.Printf("FAIL: the accounts hold %d in all after %d transfers (%d refused), want %d: a transfer overwrote another's update", total, n, nrefused, wantTotal)
		os.Exit(1)
	case wrong > 0:
		log.Printf("FAIL: %d of %d accounts hold the wrong balance after %d transfers (%d refused), though the total is right", wrong, *accounts, n, nrefused)
		os.Exit(1)
	}
	fmt.Printf("ok: %d transfers, %d refused, every balance as expected, total %d\n", n, nrefused, total)
}

// client sends one request line at a time. The bank world has no network faults, so
// any error fails the run.
type client struct {
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration
}

func dial(addr string, timeout time.Duration) *client {
	var c net.Conn
	var err error
	// The server may not be listening yet when the run starts.
	for start := time.Now(); time.Since(start) < timeout; time.Sleep(20 * time.Millisecond) {
		if c, err = net.DialTimeout("tcp", addr, timeout); err == nil {
			return &client{conn: c, r: bufio.NewReader(c), timeout: timeout}
		}
	}
	log.Fatalf("FAIL: dial %s: %v", addr, err)
	return nil
}

func (cl *client) request(req string) string {
	if err := cl.conn.SetDeadline(time.Now().Add(cl.timeout)); err != nil {
		log.Fatalf("FAIL: %s: %v", req, err)
	}
	if _, err := io.WriteString(cl.conn, req+"\n"); err != nil {
		log.Fatalf("FAIL: %s: %v", req, err)
	}
	line, err := cl.r.ReadString('\n')
	if err != nil {
		log.Fatalf("FAIL: %s: %v", req, err)
	}
	return strings.TrimSuffix(line, "\n")
}
