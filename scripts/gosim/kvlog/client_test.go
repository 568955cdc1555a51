//go:build sim

package kvlog

// The workload of examples/kvclient/main.go, with its flags turned into
// ClientParams. Where kvclient exits 1 (log.Fatalf, or os.Exit(1) after the
// check), Client returns an error instead: the test fails the seed with it.

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"time"
)

const (
	retryDelay     = 20 * time.Millisecond  // between attempts while the server is down
	attemptTimeout = 500 * time.Millisecond // a connection that stays silent this long is dead
)

// ClientParams are the flags of examples/kvclient.
type ClientParams struct {
	Addr      string        // -addr
	Ops       int           // -ops
	Pause     time.Duration // -pause
	OpTimeout time.Duration // -op-timeout
	Timeout   time.Duration // -timeout
}

// DefaultClientParams are the flags' defaults, but for Addr: gosim has IP
// addresses and no host names.
func DefaultClientParams() ClientParams {
	return ClientParams{
		Addr:      "10.0.0.1:7000",
		Ops:       60,
		Pause:     25 * time.Millisecond,
		OpTimeout: 3 * time.Second,
		Timeout:   15 * time.Second,
	}
}

// failure is what kvclient's log.Fatalf becomes: Client recovers it and returns it.
type failure struct{ err error }

func failf(format string, args ...any) {
	panic(failure{fmt.Errorf(format, args...)})
}

// Client is kvclient's main. It returns the line kvclient prints on success, or
// the reason kvclient would exit 1.
func Client(p ClientParams) (summary string, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = f.err
		}
	}()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	cl := &client{addr: p.Addr, end: time.Now().Add(p.Timeout)}

	// Write phase. An op without an OK may or may not have been applied, so it is
	// neither counted nor checked.
	var acked []int
	for i := 1; i <= p.Ops; i++ {
		req := fmt.Sprintf("PUT k%d v%d", i, i)
		reply, err := cl.request(req, p.OpTimeout)
		switch {
		case err != nil:
			log.Printf("op %d: %s has an unknown outcome: %v", i, req, err)
		case reply != "OK":
			log.Printf("op %d: %s was not acknowledged: %s", i, req, reply)
		default:
			acked = append(acked, i)
		}
		time.Sleep(p.Pause)
	}
	if len(acked) == 0 {
		failf("FAIL: none of %d writes was acknowledged, so nothing could be checked", p.Ops)
	}

	// Check phase: every acknowledged write must still be there.
	lost := 0
	for _, i := range acked {
		key, value := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		reply, err := cl.request("GET "+key, p.OpTimeout)
		if err != nil {
			failf("FAIL: could not read %s back: %v", key, err)
		}
		if reply != "VALUE "+value {
			lost++
			log.Printf("lost acknowledged write %s=%s (acked at op %d): GET %s returned %q", key, value, i, key, reply)
		}
	}
	if lost > 0 {
		return "", fmt.Errorf("FAIL: %d of %d acknowledged writes lost", lost, len(acked))
	}
	return fmt.Sprintf("ok: %d of %d writes acknowledged, %d with unknown outcome, all %d read back intact",
		len(acked), p.Ops, p.Ops-len(acked), len(acked)), nil
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
		failf("FAIL: gave up during %s: the run's time limit passed (last error: %v); is the server running at %s?", req, last, cl.addr)
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
