// Command server is a key-value store over TCP kept in a bbolt database
// (go.etcd.io/bbolt), used the way bbolt's README shows: bolt.Open, then one
// db.Update per PUT and one db.View per GET.
//
// Protocol, one line each way (the protocol of examples/kvclient):
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// -sync=commit (the default, and bbolt's) lets every db.Update fdatasync
// before it returns, so OK means durable. -sync=timer is the bug: it sets
// db.NoSync for throughput, as bbolt's docs allow for bulk loads, and calls
// db.Sync on a timer, but answers OK as soon as db.Update returns. A crash
// before the next db.Sync loses writes the client was told were stored; with
// reordered writeback it can also keep a meta page whose tree never reached
// the disk.
//
// At every start the server also checks bbolt's file lock: a second
// bolt.Open of the same file, with Options.Timeout, must time out while the
// first holds it (-check-lock).
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
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var bucket = []byte("kv")

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	path := flag.String("db", "data/kv.db", "bbolt database file")
	syncMode := flag.String("sync", "commit", "commit: each db.Update syncs before OK; timer: db.NoSync, db.Sync every -sync-every, OK at once (the bug)")
	syncEvery := flag.Duration("sync-every", 200*time.Millisecond, "db.Sync interval for -sync=timer")
	openTimeout := flag.Duration("open-timeout", 2*time.Second, "how long bolt.Open waits for the file lock")
	checkLock := flag.Bool("check-lock", true, "at start, check that a second bolt.Open of the file times out on the lock")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *syncMode != "commit" && *syncMode != "timer" {
		fmt.Fprintf(os.Stderr, "server: -sync is %q; use commit or timer\n", *syncMode)
		os.Exit(2)
	}

	if err := os.MkdirAll(filepath.Dir(*path), 0o755); err != nil {
		log.Fatal(err)
	}
	db, err := bolt.Open(*path, 0o600, &bolt.Options{Timeout: *openTimeout})
	if errors.Is(err, bolterrors.ErrTimeout) {
		log.Fatalf("bolt.Open %s: the file lock is still held after %v (a crash should have released it)", *path, *openTimeout)
	}
	if err != nil {
		log.Fatalf("bolt.Open %s: %v", *path, err)
	}
	if *checkLock {
		second, err := bolt.Open(*path, 0o600, &bolt.Options{Timeout: 100 * time.Millisecond})
		if err == nil {
			second.Close()
			log.Fatalf("a second bolt.Open of %s got the file lock while the first holds it", *path)
		}
		if !errors.Is(err, bolterrors.ErrTimeout) {
			log.Fatalf("a second bolt.Open of %s: %v, want %v", *path, err, bolterrors.ErrTimeout)
		}
		log.Printf("a second bolt.Open timed out on the file lock, as it should")
	}

	keys := 0
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucket)
		if err != nil {
			return err
		}
		keys = b.Stats().KeyN
		return nil
	})
	if err != nil {
		log.Fatalf("opening bucket: %v", err)
	}
	log.Printf("opened %s with %d keys, sync %s", *path, keys, *syncMode)

	if *syncMode == "timer" {
		db.NoSync = true
		go func() {
			for range time.Tick(*syncEvery) {
				if err := db.Sync(); err != nil {
					log.Fatalf("db.Sync: %v; exiting so that a restart reads what the disk kept", err)
				}
			}
		}()
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(db, c)
	}
}

func serve(db *bolt.DB, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		reply := handle(db, sc.Text())
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func handle(db *bolt.DB, line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		err := db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucket).Put([]byte(f[1]), []byte(f[2]))
		})
		if err != nil {
			// A failed commit (a write or fsync error) leaves bbolt unsure of
			// what is on disk: exit, and let a restart read what it kept.
			log.Fatalf("PUT %s: %v; exiting", f[1], err)
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		var v []byte
		err := db.View(func(tx *bolt.Tx) error {
			if got := tx.Bucket(bucket).Get([]byte(f[1])); got != nil {
				v = append([]byte(nil), got...)
			}
			return nil
		})
		if err != nil {
			return "ERR " + err.Error()
		}
		if v == nil {
			return "NOTFOUND"
		}
		return "VALUE " + string(v)
	}
	return "ERR bad request"
}
