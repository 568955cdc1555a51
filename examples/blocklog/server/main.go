// Command server is a key-value store over TCP whose log is cut into fixed-size blocks,
// in the format of LevelDB's write-ahead log: a record that does not fit in what is left
// of a block is split into fragments, and a block's last few bytes, too few for a
// fragment header, are padding. It appends and fsyncs each PUT's record before answering,
// and replays the log when it starts.
//
// Protocol, one line each way, as in kvlog:
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// -trailer says how the reader tells a block's trailer from a fragment. exact, the fix,
// skips the rest of a block only when fewer bytes than a header are left, as the writer
// pads. inclusive, the bug, skips it when a header's worth or less is left: when a record
// ends exactly one header short of a block's end, the writer puts the next record's empty
// first fragment in those bytes, the reader skips it, and replay stops at the orphaned
// rest of that record, cutting off every record after it.
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
	dir := flag.String("dir", "data", "directory that holds wal.log")
	block := flag.Int("block", 32768, "block size of the log in bytes")
	trailer := flag.String("trailer", "exact", "when the reader skips the rest of a block: exact (fewer bytes than a header left) or inclusive (a header's worth or less: the bug)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *trailer != "exact" && *trailer != "inclusive" {
		fmt.Fprintf(os.Stderr, "server: -trailer is %q; use exact or inclusive\n", *trailer)
		os.Exit(2)
	}
	if *block <= 2*headerSize {
		fmt.Fprintf(os.Stderr, "server: -block is %d; it must be more than %d bytes\n", *block, 2*headerSize)
		os.Exit(2)
	}
	s, cut, err := openStore(*dir, *block, *trailer == "inclusive")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("replayed %d records, %d keys from %s, cut %d bytes", s.records, len(s.data), s.path, cut)

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, trailer %s", ln.Addr(), *trailer)
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
