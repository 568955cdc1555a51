// Command client is the checking workload of the etcdraft cluster. It writes
// distinct keys, each to the next member in turn (moving on to another member
// when one does not answer), remembers which writes a member acknowledged
// with OK, then reads every acknowledged key back through the raft log and
// exits 1 if one is missing or wrong. Reads are retried until they get an
// answer: run it under liveness.within, so that the faults stop and the
// cluster must come back to answer them. Members are crashed, restarted and cut
// off from each other while this runs, so errors and timeouts are expected:
// a write without an OK has an unknown outcome and is not checked.
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
	"time"
)

const (
	retryDelay     = 20 * time.Millisecond
	attemptTimeout = 2500 * time.Millisecond // a member answers ERR timeout after 2s
)

func main() {
	nodes := flag.String("nodes", "n1:7000,n2:7000,n3:7000", "members' client addresses")
	ops := flag.Int("ops", 80, "number of writes")
	pause := flag.Duration("pause", 30*time.Millisecond, "pause between writes")
	opTimeout := flag.Duration("op-timeout", 6*time.Second, "how long to keep trying one write")
	timeout := flag.Duration("timeout", 60*time.Second, "time limit for the whole run; reads retry until then")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	cl := &client{end: time.Now().Add(*timeout)}
	for _, a := range strings.Split(*nodes, ",") {
		cl.members = append(cl.members, &member{addr: a})
	}

	var acked []int
	for i := 1; i <= *ops; i++ {
		req := fmt.Sprintf("PUT k%d v%d", i, i)
		reply, who, err := cl.request(req, i, *opTimeout, func(r string) bool { return r == "OK" })
		switch {
		case err != nil:
			log.Printf("op %d: %s has an unknown outcome: %v", i, req, err)
		default:
			log.Printf("op %d: %s acknowledged by %s", i, req, who)
			acked = append(acked, i)
		}
		_ = reply
		time.Sleep(*pause)
	}
	if len(acked) == 0 {
		log.Fatalf("FAIL: none of %d writes was acknowledged, so nothing could be checked", *ops)
	}

	lost := 0
	for n, i := range acked {
		key, value := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		answered := func(r string) bool { return r == "NOTFOUND" || strings.HasPrefix(r, "VALUE ") }
		// A read has no budget of its own: the cluster may be down for a
		// while, and only an answer can say whether the write survived.
		reply, who, err := cl.request("GET "+key, n, time.Until(cl.end), answered)
		if err != nil {
			log.Fatalf("FAIL: could not read %s back: %v", key, err)
		}
		if reply != "VALUE "+value {
			lost++
			log.Printf("lost acknowledged write %s=%s (op %d): GET %s at %s returned %q", key, value, i, key, who, reply)
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged writes lost", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d writes acknowledged, %d with unknown outcome, all %d read back intact\n",
		len(acked), *ops, *ops-len(acked), len(acked))
}

type client struct {
	members []*member
	end     time.Time
}

type member struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

// request sends req to members in turn, starting with the one start picks,
// until one gives a reply done accepts.
func (cl *client) request(req string, start int, budget time.Duration, done func(string) bool) (string, string, error) {
	stop := time.Now().Add(budget)
	if cl.end.Before(stop) {
		stop = cl.end
	}
	var last error
	for k := start; time.Now().Before(stop); k++ {
		m := cl.members[k%len(cl.members)]
		reply, err := m.try(req, stop)
		if err == nil && done(reply) {
			return reply, m.addr, nil
		}
		if err == nil {
			err = fmt.Errorf("%s answered %q", m.addr, reply)
		} else {
			m.close()
			err = fmt.Errorf("%s: %v", m.addr, err)
		}
		last = err
		time.Sleep(retryDelay)
	}
	if !time.Now().Before(cl.end) {
		log.Fatalf("FAIL: gave up during %s: the run's time limit passed (last error: %v)", req, last)
	}
	return "", "", fmt.Errorf("no answer in %v (last: %v)", budget, last)
}

func (m *member) try(req string, stop time.Time) (string, error) {
	deadline := time.Now().Add(attemptTimeout)
	if stop.Before(deadline) {
		deadline = stop
	}
	if m.conn == nil {
		c, err := net.DialTimeout("tcp", m.addr, time.Until(deadline))
		if err != nil {
			return "", err
		}
		m.conn, m.r = c, bufio.NewReader(c)
	}
	if err := m.conn.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(m.conn, req+"\n"); err != nil {
		return "", err
	}
	line, err := m.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (m *member) close() {
	if m.conn != nil {
		m.conn.Close()
		m.conn, m.r = nil, nil
	}
}
