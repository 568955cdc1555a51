// client is the workload of the ledger example: a bank whose customers
// each hold two accounts, which may be overdrawn alone but not together.
// Workers withdraw from random accounts concurrently: a withdrawal reads
// both accounts of its customer and books the entry only if their sum
// stays at 0 or more. It records every transaction with sim.Txn (Elle's
// list-append: an account is the list of its entries), so that seedfall
// checks the whole history for the isolation anomalies the world forbids.
// The client checks nothing itself: with one snapshot per transaction, no
// one client can see that two withdrawals that each kept the sum at 0 or
// more overdrew it together.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

const (
	opening = 50 // each account's balance before any entry
	amount  = 10 // each withdrawal
)

// conn is one worker's connection; a failed request closes it, and the
// next request dials again.
type conn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
}

func (c *conn) call(req string) (string, error) {
	if c.c == nil {
		nc, err := net.DialTimeout("tcp", c.addr, time.Second)
		if err != nil {
			return "", err
		}
		c.c, c.r = nc, bufio.NewReader(nc)
	}
	c.c.SetDeadline(time.Now().Add(time.Second))
	_, err := fmt.Fprintln(c.c, req)
	var line string
	if err == nil {
		line, err = c.r.ReadString('\n')
	}
	if err != nil {
		c.c.Close()
		c.c = nil
		return "", err
	}
	line = strings.TrimSuffix(line, "\n")
	if strings.HasPrefix(line, "ERR") {
		log.Fatalf("%s: %s", req, line)
	}
	return line, nil
}

// readList reads key's entries.
func (c *conn) readList(key int) ([]int, error) {
	line, err := c.call("READ " + strconv.Itoa(key))
	if err != nil {
		return nil, err
	}
	var l []int
	for _, f := range strings.Fields(strings.TrimPrefix(line, "LIST")) {
		v, err := strconv.Atoi(f)
		if err != nil {
			log.Fatalf("READ %d: %q", key, line)
		}
		l = append(l, v)
	}
	return l, nil
}

// tally counts how the transactions ended.
type tally struct {
	mu                                  sync.Mutex
	booked, refused, conflicts, unknown int
}

func (t *tally) add(p *int) {
	t.mu.Lock()
	*p++
	t.mu.Unlock()
}

// withdraw books one withdrawal of amount from account from, of the
// customer whose accounts are a and b, if their sum allows it. The entry's
// value is id, unique across the run.
func withdraw(c *conn, a, b, from, id int, n *tally) {
	t := sim.Txn(sim.ReadList(a), sim.ReadList(b), sim.Append(from, id))
	var la, lb []int
	_, err := c.call("BEGIN")
	if err == nil {
		la, err = c.readList(a)
	}
	if err == nil {
		lb, err = c.readList(b)
	}
	if err != nil {
		// The store aborts a transaction whose connection closes before
		// COMMIT: this one certainly did not commit.
		t.Fail()
		n.add(&n.conflicts)
		return
	}
	if 2*opening-amount*(len(la)+len(lb)+1) < 0 {
		if _, err := c.call("ABORT"); err == nil {
			t.Fail()
		}
		n.add(&n.refused)
		return
	}
	var reply string
	if _, err = c.call(fmt.Sprintf("APPEND %d %d", from, id)); err == nil {
		reply, err = c.call("COMMIT")
	}
	switch {
	case err != nil:
		n.add(&n.unknown) // the commit may or may not have happened
	case reply == "OK":
		t.Ok(sim.List(la...), sim.List(lb...))
		n.add(&n.booked)
	default:
		t.Fail()
		n.add(&n.conflicts)
	}
}

// audit reads every account in one transaction and reports the customers
// whose accounts are overdrawn together.
func audit(c *conn, customers int) (string, error) {
	var mops []sim.Mop
	for k := 0; k < 2*customers; k++ {
		mops = append(mops, sim.ReadList(k))
	}
	t := sim.Txn(mops...)
	if _, err := c.call("BEGIN"); err != nil {
		t.Fail()
		return "", err
	}
	var reads []sim.ReadResult
	var over []string
	for p := 0; p < customers; p++ {
		la, err := c.readList(2 * p)
		if err != nil {
			t.Fail()
			return "", err
		}
		lb, err := c.readList(2*p + 1)
		if err != nil {
			t.Fail()
			return "", err
		}
		reads = append(reads, sim.List(la...), sim.List(lb...))
		if sum := 2*opening - amount*(len(la)+len(lb)); sum < 0 {
			over = append(over, fmt.Sprintf("customer %d at %d", p, sum))
		}
	}
	if reply, err := c.call("COMMIT"); err != nil || reply != "OK" {
		return "", fmt.Errorf("COMMIT: %q %v", reply, err) // left open: it may have committed
	}
	t.Ok(reads...)
	if len(over) == 0 {
		return "no customer is overdrawn", nil
	}
	return "overdrawn together: " + strings.Join(over, ", "), nil
}

func main() {
	addr := flag.String("addr", "server:7000", "the store's address")
	workers := flag.Int("workers", 4, "concurrent workers, each with its own connection")
	txns := flag.Int("txns", 25, "withdrawals each worker attempts")
	customers := flag.Int("customers", 4, "customers, each with two accounts: keys 2c and 2c+1")
	pause := flag.Duration("pause", 5*time.Millisecond, "most time between a worker's transactions")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	var n tally
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &conn{addr: *addr}
			for i := 0; i < *txns; i++ {
				p := rand.IntN(*customers)
				from := 2*p + rand.IntN(2)
				withdraw(c, 2*p, 2*p+1, from, (w+1)*100000+i, &n)
				if *pause > 0 {
					time.Sleep(rand.N(*pause))
				}
			}
		}()
	}
	wg.Wait()
	c := &conn{addr: *addr}
	report, err := audit(c, *customers)
	for err != nil {
		time.Sleep(50 * time.Millisecond)
		report, err = audit(c, *customers)
	}
	fmt.Printf("ok: %d withdrawals booked, %d refused for funds, %d conflicts, %d with unknown outcome; %s\n",
		n.booked, n.refused, n.conflicts, n.unknown, report)
}
