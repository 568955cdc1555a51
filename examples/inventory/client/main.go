// client is the workload of the inventory example. Workers place orders
// concurrently, each in one transaction that writes two records: the order
// (key 2n, for order n) and the reservation of its stock (key 2n+1), as
// appends of n to those lists. After each order, and after any request
// whose answer never came, a worker audits the recent orders: it reads both
// records of each of the last few orders in one transaction. Every
// transaction is recorded with sim.Txn (Elle's list-append), so that
// seedfall checks the whole history for the isolation anomalies the world
// forbids, such as an audit that sees an order without its reservation.
//
// The client checks nothing itself, and keeps going when the server is
// down: it dials again until it answers. A transaction whose request went
// out but whose answer never came is left open, its outcome unknown.
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

type conn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
}

// connect dials until the server answers.
func (c *conn) connect() {
	for c.c == nil {
		nc, err := net.DialTimeout("tcp", c.addr, time.Second)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		c.c, c.r = nc, bufio.NewReader(nc)
	}
}

// run sends a transaction and returns its reads' lists; an error means its
// outcome is unknown, and closes the connection.
func (c *conn) run(mops []string, reads int) ([][]int, error) {
	c.c.SetDeadline(time.Now().Add(2 * time.Second))
	_, err := fmt.Fprintf(c.c, "TXN %s\n", strings.Join(mops, ";"))
	var line string
	if err == nil {
		line, err = c.r.ReadString('\n')
	}
	if err != nil {
		c.c.Close()
		c.c = nil
		return nil, err
	}
	body, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "OK")
	if !ok {
		log.Fatalf("TXN %s: %s", strings.Join(mops, ";"), line)
	}
	var lists [][]int
	for _, l := range strings.Split(body, "]")[:reads] {
		var list []int
		for _, f := range strings.Fields(strings.TrimLeft(l, " [")) {
			v, err := strconv.Atoi(f)
			if err != nil {
				log.Fatalf("TXN %s: %s", strings.Join(mops, ";"), line)
			}
			list = append(list, v)
		}
		lists = append(lists, list)
	}
	return lists, nil
}

// op is a micro-operation as sim records it and as the server reads it.
type op struct {
	mop  sim.Mop
	text string
}

func readList(key int) op { return op{sim.ReadList(key), fmt.Sprintf("r %d", key)} }

func appendTo(key, v int) op { return op{sim.Append(key, v), fmt.Sprintf("append %d %d", key, v)} }

// txn records and runs a transaction; false means its outcome is unknown.
func (c *conn) txn(ops []op) bool {
	var mops []sim.Mop
	var text []string
	reads := 0
	for _, o := range ops {
		mops, text = append(mops, o.mop), append(text, o.text)
		if strings.HasPrefix(o.text, "r ") {
			reads++
		}
	}
	c.connect()
	t := sim.Txn(mops...)
	lists, err := c.run(text, reads)
	if err != nil {
		return false // left open: the server may have committed it before the connection broke
	}
	var rs []sim.ReadResult
	for _, l := range lists {
		rs = append(rs, sim.List(l...))
	}
	t.Ok(rs...)
	return true
}

func main() {
	addr := flag.String("addr", "server:7000", "the store's address")
	workers := flag.Int("workers", 3, "concurrent workers, each with its own connection")
	orders := flag.Int("orders", 30, "orders each worker places")
	recent := flag.Int("recent", 6, "orders an audit reads: the last ones placed")
	pause := flag.Duration("pause", 20*time.Millisecond, "most time between a worker's transactions")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("client: ")

	var mu sync.Mutex
	next := 0 // the next order's number
	placed, audits, unknown := 0, 0, 0
	count := func(ok bool, p *int) {
		mu.Lock()
		defer mu.Unlock()
		if ok {
			*p++
		} else {
			unknown++
		}
	}
	var wg sync.WaitGroup
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &conn{addr: *addr}
			audit := func() bool {
				mu.Lock()
				last := next
				mu.Unlock()
				var ops []op
				for n := max(0, last-*recent); n < last; n++ {
					ops = append(ops, readList(2*n), readList(2*n+1))
				}
				if len(ops) == 0 {
					return true
				}
				ok := c.txn(ops)
				count(ok, &audits)
				return ok
			}
			for i := 0; i < *orders; i++ {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				ok := c.txn([]op{appendTo(2*n, n), appendTo(2*n+1, n)})
				count(ok, &placed)
				// Audit after each order; after a lost answer, until one
				// comes back.
				for !audit() {
				}
				if *pause > 0 {
					time.Sleep(rand.N(*pause))
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("ok: %d orders placed, %d audits, %d transactions with unknown outcome\n", placed, audits, unknown)
}
