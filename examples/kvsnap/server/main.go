// Command server is a key-value store over TCP in kvlog's line protocol that appends
// every PUT to a log, fsyncs it before answering, and keeps the log short in one of two
// ways, each with a bug on a path that runs only now and then (see checkpoint.go).
//
// Protocol, one line each way:
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
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
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data", "directory that holds kv.log and kv.snap")
	ckptEvery := flag.Int64("checkpoint-every", 0, "write every key to kv.snap and empty the log when the log reaches this many bytes; 0: never")
	ckptOrder := flag.String("checkpoint-order", "snapshot-first", "in a checkpoint, fsync the snapshot before emptying the log (snapshot-first) or after (log-first: the bug)")
	rewrite := flag.String("rewrite-on-start", "", "after replay, rewrite the log with one record per key: inplace (the bug) or rename (through a new file); empty: never")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *ckptOrder != "snapshot-first" && *ckptOrder != "log-first" {
		fmt.Fprintf(os.Stderr, "server: -checkpoint-order is %q; use snapshot-first or log-first\n", *ckptOrder)
		os.Exit(2)
	}
	if *rewrite != "" && *rewrite != "inplace" && *rewrite != "rename" {
		fmt.Fprintf(os.Stderr, "server: -rewrite-on-start is %q; use inplace, rename or nothing\n", *rewrite)
		os.Exit(2)
	}
	s, cut, err := openStore(*dir, checkpointing{every: *ckptEvery, logFirst: *ckptOrder == "log-first"}, *rewrite)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("replayed %d keys from %s, cut %d bytes of torn tail", len(s.data), s.path, cut)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	mode := "checkpoint-order " + *ckptOrder
	if *rewrite != "" {
		mode = "rewrite-on-start " + *rewrite
	}
	log.Printf("listening on %s, %s", ln.Addr(), mode)
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
	for sc.Scan() {
		if _, err := io.WriteString(c, handle(s, sc.Text())+"\n"); err != nil {
			return
		}
	}
}

func handle(s *store, line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		if err := s.put(f[1], f[2]); err != nil {
			log.Fatalf("%v; exiting so that a restart replays only what the disk kept", err)
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		if v, ok := s.get(f[1]); ok {
			return "VALUE " + v
		}
		return "NOTFOUND"
	}
	return "ERR expected PUT <key> <value> or GET <key>"
}
