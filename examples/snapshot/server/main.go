// Command server is a small register service over TCP that persists its whole state on
// every write: it writes state.tmp, fsyncs it, renames it over state.json, and only then
// answers OK.
//
// Protocol, one line each way:
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// Without -syncdir the directory is never fsynced, so the rename is not durable when the
// client hears OK: that is the bug this example exists to show. With -syncdir the
// directory is fsynced after the rename, before the answer.
package main

import (
	"bufio"
	"flag"
	"io"
	"log"
	"net"
	"strings"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", ".", "directory that holds state.json")
	syncDir := flag.Bool("syncdir", false, "fsync the directory after renaming state.json into place")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")

	s, err := openStore(*dir, *syncDir)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("loaded version %d with %d registers", s.cur.Version, len(s.cur.Registers))

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, syncdir %v", ln.Addr(), *syncDir)
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
		if err := s.set(f[1], f[2]); err != nil {
			// After a failed write or fsync the disk may hold less than the page
			// cache shows; a restart reloads what it really kept.
			log.Fatalf("%v; exiting so that a restart reloads only what the disk kept", err)
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
