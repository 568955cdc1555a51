//go:build sim

package kvlog

// The server of examples/kvlog/server/main.go, with its flags turned into
// ServerParams. handle and serve are unchanged; Server is main without flag
// parsing, and since gosim does not implement os.Exit ("gosim not implemented"),
// exit stops the machine instead: log.Fatal(x) becomes fatalExit(x).

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"strings"
	"time"

	"github.com/jellevandenhooff/gosim"
)

// exit is os.Exit for a gosim machine: a stop, which (like a process exit) keeps
// the writes already made, unlike a crash.
func exit(code int) {
	log.Printf("exit %d", code)
	gosim.CurrentMachine().Stop()
	select {}
}

// fatalExit is log.Fatal.
func fatalExit(v ...any) {
	log.Print(v...)
	exit(1)
}

// ServerParams are the flags of examples/kvlog/server.
type ServerParams struct {
	Listen    string        // -listen
	Dir       string        // -dir
	Ack       string        // -ack: after-sync or before-sync
	SyncEvery time.Duration // -sync-every
	Checksum  bool          // -checksum
	Rereads   int           // -reread
	OnSyncErr string        // -fsync-error: exit or retry
}

// DefaultServerParams are the flags' defaults.
func DefaultServerParams() ServerParams {
	return ServerParams{
		Listen:    "10.0.0.1:7000", // gosim cannot listen on ":7000"
		Dir:       "data",
		Ack:       "after-sync",
		SyncEvery: 200 * time.Millisecond,
		Checksum:  true,
		OnSyncErr: "exit",
	}
}

// Server is the server's main.
func Server(p ServerParams) {
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if p.Ack != "after-sync" && p.Ack != "before-sync" {
		fmt.Fprintf(os.Stderr, "server: -ack is %q; use after-sync or before-sync\n", p.Ack)
		exit(2)
	}

	fatal := func(err error) {
		fatalExit(fmt.Sprintf("%v; exiting so that a restart replays only what the disk kept", err))
	}
	if p.OnSyncErr != "exit" && p.OnSyncErr != "retry" {
		fmt.Fprintf(os.Stderr, "server: -fsync-error is %q; use exit or retry\n", p.OnSyncErr)
		exit(2)
	}
	opt := options{syncEachPut: p.Ack == "after-sync", checksum: p.Checksum, rereads: p.Rereads}
	if p.OnSyncErr == "retry" {
		opt.retrySync = 3
	}
	s, cut, err := openStoreWith(p.Dir, opt)
	if err != nil {
		fatalExit(err)
	}
	log.Printf("replayed %d keys from %s, cut %d bytes of torn tail", len(s.data), s.path, cut)
	if p.Ack == "before-sync" {
		go s.flushEvery(p.SyncEvery, fatal)
	}

	ln, err := net.Listen("tcp", p.Listen)
	if err != nil {
		fatalExit(err)
	}
	log.Printf("listening on %s, ack %s", ln.Addr(), p.Ack)
	for {
		c, err := ln.Accept()
		if err != nil {
			fatalExit(err)
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
