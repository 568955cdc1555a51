// node is one replica of a small replicated key-value store. The primary
// takes every write, acknowledges it, and streams it to the backup in the
// background; the backup applies that stream and serves reads, to take load
// off the primary. Both answer a line protocol on :7000:
//
//	PUT key value  ->  OK
//	GET key        ->  VALUE value | NONE
//
// Replication runs primary -> backup on :7001, one "PUT key value" line per
// write, in order, with no reply: asynchronous, so a write the primary has
// acknowledged may not have reached the backup yet, and the backup applies
// what it received in batches.
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

type store struct {
	mu   sync.Mutex
	data map[string]string
}

func (s *store) put(k, v string) {
	s.mu.Lock()
	s.data[k] = v
	s.mu.Unlock()
}

func (s *store) get(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.data[k]
	return v, ok
}

func main() {
	role := flag.String("role", "primary", "primary or backup")
	backup := flag.String("backup", "backup:7001", "primary: where the backup takes the replication stream")
	flag.Parse()
	s := &store{data: map[string]string{}}
	var repl chan string
	switch *role {
	case "primary":
		repl = make(chan string, 1024)
		go replicate(*backup, repl)
	case "backup":
		go receive(s)
	default:
		log.Fatalf("-role %q: want primary or backup", *role)
	}
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("%s listening on :7000", *role)
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, s, repl)
	}
}

// serve answers one client connection.
func serve(c net.Conn, s *store, repl chan<- string) {
	defer c.Close()
	r := bufio.NewScanner(c)
	for r.Scan() {
		f := strings.SplitN(r.Text(), " ", 3)
		var reply string
		switch {
		case len(f) == 3 && f[0] == "PUT" && repl != nil:
			s.put(f[1], f[2])
			repl <- r.Text() // shipped later: the client hears OK first
			reply = "OK"
		case len(f) == 2 && f[0] == "GET":
			if v, ok := s.get(f[1]); ok {
				reply = "VALUE " + v
			} else {
				reply = "NONE"
			}
		default:
			reply = "ERR bad request"
		}
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

// replicate streams the primary's writes to the backup, in order.
func replicate(addr string, repl <-chan string) {
	var c net.Conn
	for {
		var err error
		if c, err = net.Dial("tcp", addr); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	w := bufio.NewWriter(c)
	for line := range repl {
		fmt.Fprintln(w, line)
		if len(repl) == 0 {
			if err := w.Flush(); err != nil {
				log.Fatalf("replication to %s: %v", addr, err)
			}
		}
	}
}

// receive applies the primary's stream on the backup, in batches every
// 10ms, in order: one lock round per batch instead of one per write.
func receive(s *store) {
	l, err := net.Listen("tcp", ":7001")
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	var pending [][2]string
	go func() {
		for range time.Tick(10 * time.Millisecond) {
			mu.Lock()
			batch := pending
			pending = nil
			mu.Unlock()
			for _, kv := range batch {
				s.put(kv[0], kv[1])
			}
		}
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			log.Fatal(err)
		}
		r := bufio.NewScanner(c)
		for r.Scan() {
			if f := strings.SplitN(r.Text(), " ", 3); len(f) == 3 && f[0] == "PUT" {
				mu.Lock()
				pending = append(pending, [2]string{f[1], f[2]})
				mu.Unlock()
			}
		}
		c.Close()
	}
}
