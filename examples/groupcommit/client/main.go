// Command client is groupcommit's workload: kvclient's checks, with several writers at
// once, so that PUTs arrive while the server's syncer is in an fsync. Each of -workers
// writers has its own connection and writes its own keys; every write the server
// acknowledged is read back at the end, and the client exits 1 if one is missing or
// wrong. The server is crashed and restarted on purpose while this runs, so refused
// dials and broken connections are expected and retried.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	retryDelay     = 20 * time.Millisecond  // between attempts while the server is down
	attemptTimeout = 500 * time.Millisecond // a connection that stays silent this long is dead
)

func main() {
	addr := flag.String("addr", "server:7000", "server address")
	workers := flag.Int("workers", 6, "writers at once, each on its own connection")
	ops := flag.Int("ops", 40, "writes per writer")
	pause := flag.Duration("pause", 10*time.Millisecond, "pause between one writer's writes")
	opTimeout := flag.Duration("op-timeout", 3*time.Second, "how long to keep retrying one request")
	timeout := flag.Duration("timeout", 15*time.Second, "time limit for the whole run")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")
	end := time.Now().Add(*timeout)

	// Write phase. A write without an OK may or may not have been applied, so it is
	// neither counted nor checked.
	acked := make([][]int, *workers) // by writer, the ops the server acknowledged
	var wg sync.WaitGroup
	for w := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &client{addr: *addr, end: end}
			defer cl.close()
			for i := 1; i <= *ops; i++ {
				key, value := name(w, i)
				req := "PUT " + key + " " + value
				reply, err := cl.request(req, *opTimeout)
				switch {
				case err != nil:
					log.Printf("%s has an unknown outcome: %v", req, err)
				case reply != "OK":
					log.Printf("%s was not acknowledged: %s", req, reply)
				default:
					acked[w] = append(acked[w], i)
				}
				time.Sleep(*pause)
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, a := range acked {
		total += len(a)
	}
	if total == 0 {
		log.Fatalf("FAIL: none of %d writes was acknowledged, so nothing could be checked", *workers**ops)
	}

	// Check phase: every acknowledged write must still be there.
	cl := &client{addr: *addr, end: end}
	lost := 0
	for w, ops := range acked {
		for _, i := range ops {
			key, value := name(w, i)
			reply, err := cl.request("GET "+key, *opTimeout)
			if err != nil {
				log.Fatalf("FAIL: could not read %s back: %v", key, err)
			}
			if reply != "VALUE "+value {
				lost++
				log.Printf("lost acknowledged write %s=%s: GET %s returned %q", key, value, key, reply)
			}
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged writes lost", lost, total)
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d writes acknowledged, %d with unknown outcome, all %d read back intact\n",
		total, *workers**ops, *workers**ops-total, total)
}

// name is the key and value of writer w's op i: w1k7=v7.
func name(w, i int) (key, value string) {
	return fmt.Sprintf("w%dk%d", w, i), fmt.Sprintf("v%d", i)
}

// client sends one request line at a time and reconnects whenever the connection fails.
type client struct {
	addr string
	end  time.Time // the whole run must be over by then
	conn net.Conn
	r    *bufio.Reader
}

// request sends req and returns the server's reply line. It redials and resends until a
// reply arrives, budget has passed, or the run's time limit is reached.
func (cl *client) request(req string, budget time.Duration) (string, error) {
	stop := time.Now().Add(budget)
	if cl.end.Before(stop) {
		stop = cl.end
	}
	failures := 0
	var last error
	for time.Now().Before(stop) {
		reply, err := cl.try(req, stop)
		if err == nil {
			if failures > 0 {
				log.Printf("%s: answered on attempt %d (last error: %v)", req, failures+1, last)
			}
			return reply, nil
		}
		cl.close()
		failures++
		last = err
		time.Sleep(retryDelay)
	}
	if !time.Now().Before(cl.end) {
		log.Fatalf("FAIL: gave up during %s: the run's time limit passed (last error: %v); is the server running at %s?", req, last, cl.addr)
	}
	return "", fmt.Errorf("no reply in %v after %d attempts (last: %v)", budget, failures, last)
}

func (cl *client) try(req string, stop time.Time) (string, error) {
	deadline := time.Now().Add(attemptTimeout)
	if stop.Before(deadline) {
		deadline = stop
	}
	if cl.conn == nil {
		c, err := net.DialTimeout("tcp", cl.addr, time.Until(deadline))
		if err != nil {
			return "", err
		}
		cl.conn, cl.r = c, bufio.NewReader(c)
	}
	if err := cl.conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(cl.conn, req+"\n"); err != nil {
		return "", err
	}
	line, err := cl.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (cl *client) close() {
	if cl.conn != nil {
		cl.conn.Close()
		cl.conn, cl.r = nil, nil
	}
}
