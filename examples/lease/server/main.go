// server grants one lease at a time over TCP and judges, by its own
// monotonic clock, every piece of work done under it. Lines in, lines out:
//
//	ACQUIRE w     -> OK <ttl ns> <expiry, ns of the server's wall clock> | BUSY
//	WORK w        -> DONE | LATE   (LATE: w does not hold a live lease: a violation)
//	STATUS        -> STATUS <works> <violations>
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"time"
)

type lease struct {
	mu         sync.Mutex
	ttl        time.Duration
	holder     string
	expiry     time.Time // monotonic: the server's own wall clock may jump
	works      int
	violations int
}

func main() {
	listen := flag.String("listen", ":7000", "address")
	ttl := flag.Duration("ttl", time.Second, "lease length")
	flag.Parse()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	ls := &lease{ttl: *ttl}
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go ls.serve(c)
	}
}

func (ls *lease) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewScanner(c)
	for r.Scan() {
		f := strings.Fields(r.Text())
		if len(f) == 0 {
			continue
		}
		fmt.Fprintln(c, ls.handle(f))
	}
}

func (ls *lease) handle(f []string) string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	now := time.Now()
	live := ls.holder != "" && now.Before(ls.expiry)
	switch {
	case f[0] == "ACQUIRE" && len(f) == 2:
		if live && ls.holder != f[1] {
			return "BUSY"
		}
		ls.holder, ls.expiry = f[1], now.Add(ls.ttl)
		return fmt.Sprintf("OK %d %d", ls.ttl.Nanoseconds(), ls.expiry.UnixNano())
	case f[0] == "WORK" && len(f) == 2:
		if !live || ls.holder != f[1] {
			ls.violations++
			if ls.holder != f[1] {
				fmt.Printf("server: VIOLATION: %s works while %s holds the lease\n", f[1], ls.holder)
			} else {
				fmt.Printf("server: VIOLATION: %s works %v after its lease ended\n", f[1], now.Sub(ls.expiry))
			}
			return "LATE"
		}
		ls.works++
		return "DONE"
	case f[0] == "STATUS":
		return fmt.Sprintf("STATUS %d %d", ls.works, ls.violations)
	}
	return "ERR"
}
