// Command pebblekv is a key-value server over TCP that keeps its data in a
// Pebble database (github.com/cockroachdb/pebble), used as Pebble's README
// shows: pebble.Open, db.Set, db.Get.
//
// Protocol, one line each way (the one examples/kvclient speaks):
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// -durability=sync writes each PUT with pebble.Sync: the WAL is fsynced
// before Set returns, and only then does the client hear OK.
// -durability=nosync writes with pebble.NoSync, as a server tuned for
// throughput would, and still answers OK: the write sits in the WAL's page
// cache until something else syncs it, so a crash in between loses writes
// the client was told were stored. That is the bug this example exists to
// show.
//
// -sync-parent (the default) creates the database directory and fsyncs its
// parent before pebble.Open. Pebble v1.1's Open creates the directory with
// a bare MkdirAll and never syncs the parent, so under strict POSIX
// directory semantics (strict_dirs) a crash can take the whole directory,
// with every WAL fsynced into it, away. Pebble v2 syncs the parents itself.
// -sync-parent=false leaves it to Pebble, which seedfall.mkdir.json shows.
//
// -check-lock checks, after opening, that Pebble's LOCK file refuses a
// second lock (through the flock of seedfall's compat_overlay).
//
// -flush-every N flushes the memtable to an sstable after every N writes,
// as a periodic checkpoint would; with the small L0 threshold set below it
// makes Pebble write sstables, compact them and rotate its MANIFEST while
// the node crashes, not only append to the WAL.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data", "directory of the Pebble database")
	durability := flag.String("durability", "sync", "how a PUT is written before its OK: sync (pebble.Sync) or nosync (pebble.NoSync)")
	flushEvery := flag.Int("flush-every", 0, "flush the memtable after every N writes (0: only when it is full)")
	syncParent := flag.Bool("sync-parent", true, "create the database directory and fsync its parents before pebble.Open")
	checkLock := flag.Bool("check-lock", false, "after opening, check that another open file of the database's LOCK cannot take the lock")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("pebblekv: ")

	var opts *pebble.WriteOptions
	switch *durability {
	case "sync":
		opts = pebble.Sync
	case "nosync":
		opts = pebble.NoSync
	default:
		fmt.Fprintf(os.Stderr, "pebblekv: -durability is %q; use sync or nosync\n", *durability)
		os.Exit(2)
	}

	if _, err := os.Stat(*dir); errors.Is(err, os.ErrNotExist) {
		log.Printf("no database directory %s: creating it", *dir)
	}
	if *syncParent {
		if err := mkdirDurable(*dir); err != nil {
			log.Fatalf("create %s: %v", *dir, err)
		}
	}
	db, err := pebble.Open(*dir, &pebble.Options{
		Logger:                quietLogger{},
		L0CompactionThreshold: 2,
	})
	if err != nil {
		log.Fatalf("open %s: %v", *dir, err)
	}
	usage, err := vfs.Default.GetDiskUsage(*dir)
	if err != nil {
		log.Fatalf("disk usage of %s: %v", *dir, err)
	}
	log.Printf("opened %s, durability %s; disk: %d bytes used, %d available of %d",
		*dir, *durability, usage.UsedBytes, usage.AvailBytes, usage.TotalBytes)
	if *checkLock {
		if err := lockIsHeld(filepath.Join(*dir, "LOCK")); err != nil {
			log.Fatal(err)
		}
		log.Printf("a second open file of the LOCK could not lock it, as it should")
	}

	s := &server{db: db, opts: opts, flushEvery: int64(*flushEvery)}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go s.serve(c)
	}
}

// mkdirDurable creates dir if needed and fsyncs every parent of it, so that
// its entry, and the entries of any parent MkdirAll created, survive a
// crash.
func mkdirDurable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for p := filepath.Clean(dir); ; {
		parent := filepath.Dir(p)
		d, err := os.Open(parent)
		if err != nil {
			return err
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", parent, err)
		}
		if parent == p || parent == "." || parent == "/" {
			return nil
		}
		p = parent
	}
}

// lockIsHeld checks that the lock Pebble holds on name refuses another open
// file of it, as it refuses another process.
func lockIsHeld(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		return fmt.Errorf("took the lock on %s while pebble holds it", name)
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return fmt.Errorf("flock %s: %v, want EWOULDBLOCK", name, err)
	}
	return nil
}

type server struct {
	db         *pebble.DB
	opts       *pebble.WriteOptions
	flushEvery int64
	writes     atomic.Int64
}

func (s *server) serve(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		reply := s.handle(sc.Text())
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func (s *server) handle(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		if err := s.db.Set([]byte(f[1]), []byte(f[2]), s.opts); err != nil {
			// Pebble's WAL refuses every write after a failed one: exit, and
			// let the restart recover what the disk kept.
			log.Fatalf("set %s: %v; exiting so that a restart recovers from the disk", f[1], err)
		}
		if n := s.writes.Add(1); s.flushEvery > 0 && n%s.flushEvery == 0 {
			if err := s.db.Flush(); err != nil {
				log.Fatalf("flush: %v", err)
			}
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		v, closer, err := s.db.Get([]byte(f[1]))
		if errors.Is(err, pebble.ErrNotFound) {
			return "NOTFOUND"
		}
		if err != nil {
			log.Fatalf("get %s: %v", f[1], err)
		}
		defer closer.Close()
		return "VALUE " + string(v)
	}
	return "ERR expected PUT <key> <value> or GET <key>"
}

// quietLogger drops Pebble's informational lines (every WAL, flush and
// compaction) so that a trace shows the server's own, and keeps its fatal
// errors.
type quietLogger struct{}

func (quietLogger) Infof(format string, args ...interface{}) {}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	log.Fatalf(format, args...)
}
