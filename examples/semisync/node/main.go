// Command node is one of the two replicas of a key-value store over TCP: a primary that
// serves clients from memory, and a backup that keeps every write on its disk. A write
// counts as durable once the backup has fsynced it, so the primary keeps no disk of its
// own: when it restarts after a crash it copies the backup's data before it serves.
//
// Protocol, one line each way, as in kvlog, on both replicas:
//
//	PUT <key> <value>   ->  OK | ERR <message>   (primary)
//	GET <key>           ->  VALUE <value> | NOTFOUND
//	REPL <key> <value>  ->  OK                   (backup: append, fsync, apply)
//	DUMP                ->  KV <key> <value> lines, then END (backup)
//	PING                ->  PONG
//
// The primary answers a PUT once the backup has it. -fallback says what it does when the
// backup does not answer within -ack-timeout. error, the fix, answers ERR: the write's
// outcome is unknown to the client, which does not count on it. alone, the bug (MySQL's
// semi-synchronous replication falls back the same way), applies the write, answers OK
// and queues it for the backup, which it probes until it answers, then sends the queue.
// A partition that cuts the backup off turns the primary into the only copy of what it
// acknowledges since; a crash of the primary before the partition heals throws that
// away, and the restarted primary copies the backup, which never had it.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	role := flag.String("role", "primary", "primary or backup")
	peer := flag.String("peer", "b:7000", "the backup's address, for the primary")
	dir := flag.String("dir", "data", "directory that holds the backup's kv.log")
	ackTimeout := flag.Duration("ack-timeout", 100*time.Millisecond, "how long the primary waits for the backup's answer to a write")
	fallback := flag.String("fallback", "error", "when the backup does not answer in time: error (answer ERR) or alone (acknowledge without it: the bug)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(*role + ": ")
	if *role != "primary" && *role != "backup" {
		fmt.Fprintf(os.Stderr, "node: -role is %q; use primary or backup\n", *role)
		os.Exit(2)
	}
	if *fallback != "error" && *fallback != "alone" {
		fmt.Fprintf(os.Stderr, "node: -fallback is %q; use error or alone\n", *fallback)
		os.Exit(2)
	}
	var h func(string, io.Writer) error
	if *role == "backup" {
		b, err := openBackup(*dir)
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("replayed %d keys from %s", len(b.data), b.log.Name())
		h = b.handle
	} else {
		p := &primary{peer: *peer, timeout: *ackTimeout, alone: *fallback == "alone"}
		p.copyBackup()
		if p.alone {
			go p.probe()
		}
		h = p.handle
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, %s, fallback %s", ln.Addr(), *role, *fallback)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c, h)
	}
}

func serve(c net.Conn, handle func(string, io.Writer) error) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	w := bufio.NewWriter(c)
	for sc.Scan() {
		if handle(sc.Text(), w) != nil || w.Flush() != nil {
			return
		}
	}
}

// backup appends every replicated write to its log and fsyncs it before answering.
type backup struct {
	mu   sync.Mutex
	log  *os.File
	data map[string]string
}

func openBackup(dir string) (*backup, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "kv.log")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := syncDir(d); err != nil {
			return nil, err
		}
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	data := map[string]string{}
	for rest := string(b); ; {
		line, more, ok := strings.Cut(rest, "\n")
		if !ok {
			break // no record, or the last one was never fsynced whole
		}
		if k, v, ok := strings.Cut(line, " "); ok {
			data[k] = v
		}
		rest = more
	}
	return &backup{log: f, data: data}, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (b *backup) handle(line string, w io.Writer) error {
	f := strings.Fields(line)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case len(f) == 3 && f[0] == "REPL":
		if _, err := fmt.Fprintf(b.log, "%s %s\n", f[1], f[2]); err != nil {
			log.Fatalf("append: %v", err)
		}
		if err := b.log.Sync(); err != nil {
			log.Fatalf("fsync: %v", err)
		}
		b.data[f[1]] = f[2]
		_, err := io.WriteString(w, "OK\n")
		return err
	case len(f) == 1 && f[0] == "DUMP":
		for k, v := range b.data {
			fmt.Fprintf(w, "KV %s %s\n", k, v)
		}
		_, err := io.WriteString(w, "END\n")
		return err
	case len(f) == 2 && f[0] == "GET":
		return answerGet(w, b.data, f[1])
	case len(f) == 1 && f[0] == "PING":
		_, err := io.WriteString(w, "PONG\n")
		return err
	}
	_, err := io.WriteString(w, "ERR unknown request\n")
	return err
}

func answerGet(w io.Writer, data map[string]string, key string) error {
	if v, ok := data[key]; ok {
		_, err := fmt.Fprintf(w, "VALUE %s\n", v)
		return err
	}
	_, err := io.WriteString(w, "NOTFOUND\n")
	return err
}

// primary serves clients from memory and replicates every write to the backup.
type primary struct {
	peer    string
	timeout time.Duration
	alone   bool

	mu     sync.Mutex // held across a write's replication, so writes reach the backup in order
	data   map[string]string
	conn   net.Conn // to the backup; nil until dialed, and after an error
	r      *bufio.Reader
	behind [][2]string // with -fallback=alone: writes acknowledged without the backup, oldest first
}

// copyBackup fills the primary's memory with the backup's data, trying until the
// backup answers: the backup has every write that was acknowledged.
func (p *primary) copyBackup() {
	for {
		data, err := p.dump()
		if err == nil {
			p.data = data
			log.Printf("copied %d keys from the backup", len(data))
			return
		}
		log.Printf("copy from the backup: %v; retrying", err)
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *primary) dump() (map[string]string, error) {
	c, err := net.DialTimeout("tcp", p.peer, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "DUMP\n"); err != nil {
		return nil, err
	}
	data := map[string]string{}
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		f := strings.Fields(line)
		if len(f) == 1 && f[0] == "END" {
			return data, nil
		}
		if len(f) != 3 || f[0] != "KV" {
			return nil, fmt.Errorf("backup answered DUMP with %q", line)
		}
		data[f[1]] = f[2]
	}
}

// call sends one request to the backup and returns its answer, redialing after an
// error (the backup may be restarting) until the answer is p.timeout late. The caller
// holds p.mu.
func (p *primary) call(req string) (string, error) {
	deadline := time.Now().Add(p.timeout)
	for {
		ans, err := p.try(req, deadline)
		if err == nil || !time.Now().Before(deadline) {
			return ans, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *primary) try(req string, deadline time.Time) (string, error) {
	if p.conn == nil {
		c, err := net.DialTimeout("tcp", p.peer, time.Until(deadline))
		if err != nil {
			return "", err
		}
		p.conn, p.r = c, bufio.NewReader(c)
	}
	p.conn.SetDeadline(deadline)
	_, err := io.WriteString(p.conn, req+"\n")
	var line string
	if err == nil {
		line, err = p.r.ReadString('\n')
	}
	if err != nil {
		p.conn.Close()
		p.conn, p.r = nil, nil
		return "", err
	}
	return strings.TrimSuffix(line, "\n"), nil
}

func (p *primary) replicate(key, value string) error {
	switch ans, err := p.call("REPL " + key + " " + value); {
	case err != nil:
		return err
	case ans != "OK":
		return errors.New("backup answered " + ans)
	}
	return nil
}

func (p *primary) handle(line string, w io.Writer) error {
	f := strings.Fields(line)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case len(f) == 3 && f[0] == "PUT":
		key, value := f[1], f[2]
		var err error
		if len(p.behind) > 0 {
			err = errors.New("the backup is behind")
		} else {
			err = p.replicate(key, value)
		}
		switch {
		case err == nil:
		case p.alone:
			// The bug: from here on this write is only in the primary's memory.
			if len(p.behind) == 0 {
				log.Printf("backup does not answer (%v): acknowledging writes alone", err)
			}
			p.behind = append(p.behind, [2]string{key, value})
		default:
			_, err := fmt.Fprintf(w, "ERR backup does not answer: %v\n", err)
			return err
		}
		p.data[key] = value
		_, err = io.WriteString(w, "OK\n")
		return err
	case len(f) == 2 && f[0] == "GET":
		return answerGet(w, p.data, f[1])
	case len(f) == 1 && f[0] == "PING":
		_, err := io.WriteString(w, "PONG\n")
		return err
	}
	_, err := io.WriteString(w, "ERR unknown request\n")
	return err
}

// probe sends the writes acknowledged alone to the backup once it answers again.
func (p *primary) probe() {
	for range time.Tick(50 * time.Millisecond) {
		p.mu.Lock()
		for len(p.behind) > 0 {
			kv := p.behind[0]
			if p.replicate(kv[0], kv[1]) != nil {
				break
			}
			p.behind = p.behind[1:]
			if len(p.behind) == 0 {
				log.Printf("the backup caught up")
			}
		}
		p.mu.Unlock()
	}
}
