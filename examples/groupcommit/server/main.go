// Command server is a key-value store over TCP whose log is made durable by group
// commit: every PUT appends its record to the log and waits, and one syncer goroutine
// fsyncs the log again and again, acknowledging with each fsync every record it covered.
// The appenders keep writing while an fsync runs, so one fsync serves many PUTs.
//
// Protocol, one line each way, as in kvlog:
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// -durable-end says which end of the log an fsync made durable. after-sync, the bug,
// takes the end as it is when the fsync returns, so a record appended while the fsync
// ran is acknowledged though the fsync may not have covered it. before-sync, the fix,
// takes the end as it was when the fsync started.
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
	end := flag.String("durable-end", "before-sync", "which end of the log an fsync made durable: before-sync (where the log ended when the fsync started) or after-sync (where it ends when the fsync returns: the bug)")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *end != "before-sync" && *end != "after-sync" {
		fmt.Fprintf(os.Stderr, "server: -durable-end is %q; use before-sync or after-sync\n", *end)
		os.Exit(2)
	}

	w, err := openWAL(*dir)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("replayed %d keys from %s, cut %d bytes of torn tail", len(w.data), w.path, w.cut)
	go func() {
		log.Fatalf("%v; exiting so that a restart replays only what the disk kept", w.syncLoop(*end == "after-sync"))
	}()

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s, durable-end %s", ln.Addr(), *end)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(w, c)
	}
}

func serve(w *wal, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if _, err := io.WriteString(c, handle(w, sc.Text())+"\n"); err != nil {
			return
		}
	}
}

func handle(w *wal, line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		if err := w.put(f[1], f[2]); err != nil {
			// A short write leaves a torn record in the middle of the log, and a failed
			// fsync may have dropped pages that reads still return: exit, and the
			// restart replays what the disk really kept.
			log.Fatalf("%v; exiting so that a restart replays only what the disk kept", err)
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		if v, ok := w.get(f[1]); ok {
			return "VALUE " + v
		}
		return "NOTFOUND"
	}
	return "ERR expected PUT <key> <value> or GET <key>"
}
