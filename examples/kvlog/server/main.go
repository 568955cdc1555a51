// Command server is a key-value store over TCP that appends every PUT to a log file
// and replays the log when it starts.
//
// Protocol, one line each way:
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// -ack=after-sync fsyncs each record before answering OK. -ack=before-sync answers OK at
// once and fsyncs on a timer (group commit), so a crash in between loses writes the
// client was told were stored: that is the bug this example exists to show.
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
	"time"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data", "directory that holds kv.log")
	ack := flag.String("ack", "after-sync", "when to answer a PUT: after-sync (fsync, then OK) or before-sync (OK at once, fsync on a timer)")
	syncEvery := flag.Duration("sync-every", 200*time.Millisecond, "fsync interval for -ack=before-sync")
	checksum := flag.Bool("checksum", true, "verify each record's checksum on replay")
	rereads := flag.Int("reread", 0, "when replay stops before the end of the log, read it again, up to this many times, until three reads agree")
	onSyncErr := flag.String("fsync-error", "exit", "after a failed fsync: exit (restart and replay what the disk kept) or retry (the fsyncgate bug)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *ack != "after-sync" && *ack != "before-sync" {
		fmt.Fprintf(os.Stderr, "server: -ack is %q; use after-sync or before-sync\n", *ack)
		os.Exit(2)
	}

	fatal := func(err error) {
		log.Fatalf("%v; exiting so that a restart replays only what the disk kept", err)
	}
	if *onSyncErr != "exit" && *onSyncErr != "retry" {
		fmt.Fprintf(os.Stderr, "server: -fsync-error is %q; use exit or retry\n", *onSyncErr)
		os.Exit(2)
	}
	opt := options{syncEachPut: *ack == "after-sync", checksum: *checksum, rereads: *rereads}
	if *onSyncErr == "retry" {
		opt.retrySync = 3
	}
	s, cut, err := openStoreWith(*dir, opt)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("replayed %d keys from %s, cut %d bytes of torn tail", len(s.data), s.path, cut)
	if *ack == "before-sync" {
		go s.flushEvery(*syncEvery, fatal)
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, ack %s", ln.Addr(), *ack)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(s, c, fatal)
	}
}

func serve(s *store, c net.Conn, fatal func(error)) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if _, err := io.WriteString(c, handle(s, sc.Text(), fatal)+"\n"); err != nil {
			return
		}
	}
}

func handle(s *store, line string, fatal func(error)) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		if err := s.put(f[1], f[2]); err != nil {
			fatal(err)
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
