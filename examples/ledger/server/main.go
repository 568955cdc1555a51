// Command server is a transactional store of account ledgers over TCP: each
// key is an account, its value the list of the entries (withdrawals) booked
// on it. Transactions are interactive, one at a time on a connection, and
// run under multi-version concurrency control: each reads the snapshot of
// committed data taken when it began, plus its own writes.
//
// Protocol, one line each way:
//
//	BEGIN             ->  OK
//	READ <key>        ->  LIST <v1> <v2> ...   (LIST alone for an empty list)
//	APPEND <key> <v>  ->  OK
//	COMMIT            ->  OK | CONFLICT        (CONFLICT: aborted, nothing written)
//	ABORT             ->  OK
//	anything else     ->  ERR <message>
//
// A connection that closes aborts its transaction.
//
// -isolation=snapshot checks at commit only the keys the transaction wrote:
// if another transaction committed a write to one of them since this one
// began, it aborts (first committer wins). That is snapshot isolation, and
// it lets two transactions that read the same two accounts and each write a
// different one both commit: write skew, the bug this example exists to
// show. -isolation=serializable also checks the keys it read, so a
// transaction commits only if everything it read is still current: it is
// then as if it ran alone at its commit.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// version is a key's value as one commit left it.
type version struct {
	ts   int64 // the commit's timestamp
	list []int
}

type store struct {
	mu           sync.Mutex
	ts           int64 // the last commit's timestamp
	keys         map[int][]version
	serializable bool
}

// txn is a transaction in progress: the snapshot it reads, the keys it
// read, and its writes, kept to itself until it commits.
type txn struct {
	start  int64
	read   map[int]bool
	writes map[int][]int
}

func (s *store) begin() *txn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &txn{start: s.ts, read: map[int]bool{}, writes: map[int][]int{}}
}

// latest is key's newest version at or before ts.
func (s *store) latest(key int, ts int64) version {
	vs := s.keys[key]
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].ts <= ts {
			return vs[i]
		}
	}
	return version{}
}

func (s *store) read(t *txn, key int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.read[key] = true
	l := append([]int(nil), s.latest(key, t.start).list...)
	return append(l, t.writes[key]...)
}

// commit installs t's writes as one new version of each key it wrote, or
// reports a conflict.
func (s *store) commit(t *txn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := func(key int) bool { return s.latest(key, s.ts).ts > t.start }
	for key := range t.writes {
		if changed(key) {
			return false
		}
	}
	if s.serializable {
		for key := range t.read {
			if changed(key) {
				return false
			}
		}
	}
	if len(t.writes) == 0 {
		return true
	}
	s.ts++
	for key, vs := range t.writes {
		l := append(append([]int(nil), s.latest(key, s.ts).list...), vs...)
		s.keys[key] = append(s.keys[key], version{s.ts, l})
	}
	return true
}

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	isolation := flag.String("isolation", "serializable", "snapshot (check write-write conflicts only) or serializable (check what was read too)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *isolation != "snapshot" && *isolation != "serializable" {
		fmt.Fprintf(os.Stderr, "server: -isolation is %q; use snapshot or serializable\n", *isolation)
		os.Exit(2)
	}
	s := &store{keys: map[int][]version{}, serializable: *isolation == "serializable"}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, isolation %s", ln.Addr(), *isolation)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(s, c)
	}
}

func serve(s *store, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	var t *txn // the connection's transaction, nil between transactions
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		reply := "ERR empty request"
		if len(f) > 0 {
			reply = handle(s, &t, f)
		}
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func handle(s *store, t **txn, f []string) string {
	args := make([]int, len(f)-1)
	for i, a := range f[1:] {
		n, err := strconv.Atoi(a)
		if err != nil {
			return fmt.Sprintf("ERR %q is not an integer", a)
		}
		args[i] = n
	}
	if f[0] != "BEGIN" && *t == nil {
		return "ERR no transaction: BEGIN first"
	}
	switch {
	case f[0] == "BEGIN" && len(args) == 0:
		*t = s.begin()
		return "OK"
	case f[0] == "READ" && len(args) == 1:
		var b strings.Builder
		b.WriteString("LIST")
		for _, v := range s.read(*t, args[0]) {
			fmt.Fprintf(&b, " %d", v)
		}
		return b.String()
	case f[0] == "APPEND" && len(args) == 2:
		(*t).writes[args[0]] = append((*t).writes[args[0]], args[1])
		return "OK"
	case f[0] == "COMMIT" && len(args) == 0:
		ok := s.commit(*t)
		*t = nil
		if !ok {
			return "CONFLICT"
		}
		return "OK"
	case f[0] == "ABORT" && len(args) == 0:
		*t = nil
		return "OK"
	}
	return "ERR unknown request " + strings.Join(f, " ")
}
