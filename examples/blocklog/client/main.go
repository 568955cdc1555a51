// Command client is blocklog's workload: kvclient (../../kvclient) with values of random
// lengths, so that the log's records end at bytes the seed chooses. It writes distinct
// keys, remembers which writes the server acknowledged, reads every acknowledged key back
// and exits 1 if one is missing or wrong. The server is crashed and restarted on purpose
// while this runs, so refused dials and broken connections are expected and retried.
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
	"strings"
	"time"
)

const (
	retryDelay     = 20 * time.Millisecond  // between attempts while the server is down
	attemptTimeout = 500 * time.Millisecond // a connection that stays silent this long is dead
)

func main() {
	addr := flag.String("addr", "server:7000", "server address")
	ops := flag.Int("ops", 60, "number of writes")
	pause := flag.Duration("pause", 25*time.Millisecond, "pause between writes, so that crashes land among them")
	opTimeout := flag.Duration("op-timeout", 3*time.Second, "how long to keep retrying one request")
	timeout := flag.Duration("timeout", 15*time.Second, "time limit for the whole run")
	pad := flag.Int("pad", 0, "append a dash and from 0 to this many x's, a random number, to each value, so records vary in length")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	cl := &client{addr: *addr, end: time.Now().Add(*timeout)}

	// Write phase. An op without an OK may or may not have been applied, so it is
	// neither counted nor checked.
	var acked []int
	values := map[int]string{}
	for i := 1; i <= *ops; i++ {
		value := fmt.Sprintf("v%d", i)
		if *pad > 0 {
			value += "-" + strings.Repeat("x", rand.IntN(*pad+1))
		}
		values[i] = value
		req := fmt.Sprintf("PUT k%d %s", i, value)
		reply, err := cl.request(req, *opTimeout)
		switch {
		case err != nil:
			log.Printf("op %d: %s has an unknown outcome: %v", i, req, err)
		case reply != "OK":
			log.Printf("op %d: %s was not acknowledged: %s", i, req, reply)
		default:
			acked = append(acked, i)
		}
		time.Sleep(*pause)
	}
	if len(acked) == 0 {
		log.Fatalf("FAIL: none of %d writes was acknowledged, so nothing could be checked", *ops)
	}

	// Check phase: every acknowledged write must still be there.
	lost := 0
	for _, i := range acked {
		key, value := fmt.Sprintf("k%d", i), values[i]
		reply, err := cl.request("GET "+key, *opTimeout)
		if err != nil {
			log.Fatalf("FAIL: could not read %s back: %v", key, err)
		}
		if reply != "VALUE "+value {
			lost++
			log.Printf("lost acknowledged write %s=%s (acked at op %d): GET %s returned %q", key, value, i, key, reply)
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged writes lost", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d writes acknowledged, %d with unknown outcome, all %d read back intact\n",
		len(acked), *ops, *ops-len(acked), len(acked))
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
