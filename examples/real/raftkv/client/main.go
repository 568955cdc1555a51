// Command client checks the raftkv cluster. It writes distinct keys through
// whichever node is the leader (following the "try" hints of the others),
// reads each acknowledged key back at once, and at the end reads every
// acknowledged key again. An acknowledged write that a read does not return
// is a lost write (or a stale read): the run fails.
//
// A write without an OK (a timeout, an error, a cut connection) has an
// unknown outcome and is not checked. Each key is written once, so any
// answer other than its value, or NOTFOUND, is wrong.
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
	attemptTimeout = 1500 * time.Millisecond // above the nodes' 1s raft timeouts
)

func main() {
	nodes := flag.String("nodes", "n1:7000,n2:7000,n3:7000", "the nodes' client addresses")
	ops := flag.Int("ops", 60, "number of writes")
	pause := flag.Duration("pause", 25*time.Millisecond, "pause between writes")
	opTimeout := flag.Duration("op-timeout", 5*time.Second, "how long to keep retrying one request")
	timeout := flag.Duration("timeout", 40*time.Second, "time limit for the whole run")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	cl := &client{addrs: strings.Split(*nodes, ","), conns: map[string]*conn{}, end: time.Now().Add(*timeout)}

	var acked []int
	for i := 1; i <= *ops; i++ {
		key, value := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		reply, err := cl.request("PUT "+key+" "+value, *opTimeout)
		switch {
		case err != nil:
			log.Printf("PUT %s has an unknown outcome: %v", key, err)
		case reply != "OK":
			log.Printf("PUT %s has an unknown outcome: %s", key, reply)
		default:
			acked = append(acked, i)
			// Read it back at once, from whichever node leads now.
			if reply, err := cl.request("GET "+key, *opTimeout); err != nil {
				log.Printf("GET %s right after its PUT: no answer: %v", key, err)
			} else if reply != "VALUE "+value {
				log.Fatalf("FAIL: stale or lost: GET %s right after PUT %s %s was acknowledged returned %q (from %s)", key, key, value, reply, cl.addrs[cl.cur])
			}
		}
		time.Sleep(*pause)
	}
	if len(acked) == 0 {
		log.Fatalf("FAIL: none of %d writes was acknowledged, so nothing could be checked", *ops)
	}

	lost := 0
	for _, i := range acked {
		key, value := fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i)
		reply, err := cl.request("GET "+key, *opTimeout)
		if err != nil {
			log.Fatalf("FAIL: could not read %s back: %v", key, err)
		}
		if reply != "VALUE "+value {
			lost++
			log.Printf("lost acknowledged write %s=%s: GET %s returned %q (from %s)", key, value, key, reply, cl.addrs[cl.cur])
		}
	}
	if lost > 0 {
		log.Printf("FAIL: %d of %d acknowledged writes lost", lost, len(acked))
		os.Exit(1)
	}
	fmt.Printf("ok: %d of %d writes acknowledged, %d with unknown outcome, all %d read back intact\n",
		len(acked), *ops, *ops-len(acked), len(acked))
}

type conn struct {
	c net.Conn
	r *bufio.Reader
}

type client struct {
	addrs []string
	cur   int // the node believed to lead
	conns map[string]*conn
	end   time.Time
}

// request sends req to the node believed to lead until one answers with
// something other than "ERR not leader" or a raft error, moving to the
// node a "try" hint names or else to the next one.
func (cl *client) request(req string, budget time.Duration) (string, error) {
	stop := time.Now().Add(budget)
	if cl.end.Before(stop) {
		stop = cl.end
	}
	var last error
	for time.Now().Before(stop) {
		addr := cl.addrs[cl.cur]
		reply, err := cl.try(addr, req, stop)
		switch {
		case err != nil:
			cl.drop(addr)
			last = fmt.Errorf("%s: %v", addr, err)
			cl.cur = (cl.cur + 1) % len(cl.addrs)
		case strings.HasPrefix(reply, "ERR "):
			last = fmt.Errorf("%s: %s", addr, reply)
			cl.cur = (cl.cur + 1) % len(cl.addrs)
			if _, hint, ok := strings.Cut(reply, ", try "); ok {
				for i, a := range cl.addrs {
					if a == hint {
						cl.cur = i
					}
				}
			}
		default:
			return reply, nil
		}
		time.Sleep(retryDelay)
	}
	if !time.Now().Before(cl.end) {
		log.Fatalf("FAIL: gave up during %s: the run's time limit passed (last error: %v)", req, last)
	}
	return "", fmt.Errorf("no answer in %v (last: %v)", budget, last)
}

func (cl *client) try(addr, req string, stop time.Time) (string, error) {
	deadline := time.Now().Add(attemptTimeout)
	if stop.Before(deadline) {
		deadline = stop
	}
	c := cl.conns[addr]
	if c == nil {
		nc, err := net.DialTimeout("tcp", addr, time.Until(deadline))
		if err != nil {
			return "", err
		}
		c = &conn{nc, bufio.NewReader(nc)}
		cl.conns[addr] = c
	}
	if err := c.c.SetDeadline(deadline); err != nil {
		return "", err
	}
	if _, err := io.WriteString(c.c, req+"\n"); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (cl *client) drop(addr string) {
	if c := cl.conns[addr]; c != nil {
		c.c.Close()
		delete(cl.conns, addr)
	}
}
