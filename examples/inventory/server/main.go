// Command server is a transactional store of lists over TCP, durable in a
// log: the inventory of a shop, where each key is an item and its list the
// orders that reserved it. A transaction is one request of micro-operations
// that read a list or append to one; the server runs transactions one at a
// time, writes their appends to the log, fsyncs it, applies them and
// answers. When it starts it replays the log, and cuts off a torn tail.
//
// Protocol, one line each way:
//
//	TXN <mop>;<mop>;...  ->  OK [<list>] [<list>] ...  (one list per read, in order)
//	anything else        ->  ERR <message>
//
// where a mop is "r <key>" or "append <key> <value>", and a list is its
// elements separated by spaces.
//
// -records=per-key writes each append of a transaction as a log record of
// its own, and fsyncs once at the end. A crash before that fsync may keep
// the first records and not the rest (torn_writes), and the replay then
// applies part of the transaction: the bug this example exists to show.
// -records=per-txn writes the transaction's appends as one record, which
// the replay applies whole or, torn, not at all.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// mop is one micro-operation.
type mop struct {
	read       bool
	key, value int
}

type store struct {
	mu     sync.Mutex
	log    *os.File
	lists  map[int][]int
	perTxn bool
}

// record is a log line: a checksum of the payload, then the payload, "append
// K V" for one append or "txn K V K V ..." for all of a transaction's.
func record(payload string) []byte {
	return fmt.Appendf(nil, "%08x %s\n", crc32.ChecksumIEEE([]byte(payload)), payload)
}

// apply applies a record's payload to lists, or reports that it is not
// one.
func apply(lists map[int][]int, payload string) bool {
	f := strings.Fields(payload)
	if len(f) < 3 || (f[0] != "append" && f[0] != "txn") || len(f)%2 != 1 {
		return false
	}
	var kv []int
	for _, x := range f[1:] {
		n, err := strconv.Atoi(x)
		if err != nil {
			return false
		}
		kv = append(kv, n)
	}
	for i := 0; i < len(kv); i += 2 {
		lists[kv[i]] = append(lists[kv[i]], kv[i+1])
	}
	return true
}

// open replays dir/inventory.log and cuts off what follows its last whole
// record.
func open(dir string, perTxn bool) (*store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "inventory.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	// A new file survives a crash once its directory is fsynced.
	if err := syncDir(dir); err != nil {
		return nil, err
	}
	buf, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	s := &store{log: f, lists: map[int][]int{}, perTxn: perTxn}
	good, records := 0, 0
	for {
		i := bytes.IndexByte(buf[good:], '\n')
		if i < 0 {
			break
		}
		line := string(buf[good : good+i])
		sum, payload, ok := strings.Cut(line, " ")
		if !ok || sum != fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(payload))) || !apply(s.lists, payload) {
			break
		}
		good += i + 1
		records++
	}
	if good < len(buf) {
		if err := f.Truncate(int64(good)); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		return nil, err
	}
	log.Printf("replayed %d records, cut %d bytes of torn tail", records, len(buf)-good)
	return s, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// run runs a transaction: its reads see the committed lists and its own
// earlier appends; its appends are durable before it returns.
func (s *store) run(mops []mop) ([][]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var reads [][]int
	own := map[int][]int{}
	var appends []mop
	for _, m := range mops {
		if m.read {
			reads = append(reads, append(append([]int(nil), s.lists[m.key]...), own[m.key]...))
			continue
		}
		own[m.key] = append(own[m.key], m.value)
		appends = append(appends, m)
	}
	if len(appends) == 0 {
		return reads, nil
	}
	if s.perTxn {
		payload := "txn"
		for _, m := range appends {
			payload += fmt.Sprintf(" %d %d", m.key, m.value)
		}
		if _, err := s.log.Write(record(payload)); err != nil {
			return nil, err
		}
	} else {
		for _, m := range appends {
			if _, err := s.log.Write(record(fmt.Sprintf("append %d %d", m.key, m.value))); err != nil {
				return nil, err
			}
		}
	}
	if err := s.log.Sync(); err != nil {
		return nil, err
	}
	for _, m := range appends {
		s.lists[m.key] = append(s.lists[m.key], m.value)
	}
	return reads, nil
}

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data", "directory that holds inventory.log")
	records := flag.String("records", "per-txn", "how a transaction's appends go to the log: per-txn (one record) or per-key (one record each)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *records != "per-txn" && *records != "per-key" {
		fmt.Fprintf(os.Stderr, "server: -records is %q; use per-txn or per-key\n", *records)
		os.Exit(2)
	}
	s, err := open(*dir, *records == "per-txn")
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, records %s", ln.Addr(), *records)
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
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		reply := handle(s, sc.Text())
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func handle(s *store, req string) string {
	body, ok := strings.CutPrefix(req, "TXN ")
	if !ok {
		return "ERR want TXN <mop>;<mop>;..."
	}
	var mops []mop
	for _, t := range strings.Split(body, ";") {
		f := strings.Fields(t)
		var n []int
		for _, x := range f[min(1, len(f)):] {
			v, err := strconv.Atoi(x)
			if err != nil {
				return fmt.Sprintf("ERR %q is not an integer", x)
			}
			n = append(n, v)
		}
		switch {
		case len(f) == 2 && f[0] == "r":
			mops = append(mops, mop{read: true, key: n[0]})
		case len(f) == 3 && f[0] == "append":
			mops = append(mops, mop{key: n[0], value: n[1]})
		default:
			return fmt.Sprintf("ERR %q: want \"r K\" or \"append K V\"", t)
		}
	}
	reads, err := s.run(mops)
	if err != nil {
		// What reached the disk is unknown: exit, and let the restart
		// replay what it kept.
		log.Fatalf("%v; exiting", err)
	}
	var b strings.Builder
	b.WriteString("OK")
	for _, r := range reads {
		b.WriteString(" [")
		for i, v := range r {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.Itoa(v))
		}
		b.WriteByte(']')
	}
	return b.String()
}
