// Command server is a key-value store over TCP kept in a Badger database
// (github.com/dgraph-io/badger/v4), used the way Badger's README shows:
// badger.Open, then one db.Update per PUT and one db.View per GET.
//
// Protocol, one line each way (the protocol of examples/kvclient):
//
//	PUT <key> <value>  ->  OK
//	GET <key>          ->  VALUE <value> | NOTFOUND
//	anything else      ->  ERR <message>
//
// Badger writes every entry into its memtable log (a .mem file), and every
// value at least -value-threshold bytes long into its value log (a .vlog
// file), through writable shared mappings of those files; SyncWrites msyncs
// them before db.Update returns. The server stores each value in a JSON
// record with the time it was put, 50 bytes or more, so with the default
// -value-threshold every record goes through the value log.
//
// -sync=commit sets Options.WithSyncWrites(true), so OK means durable.
// -sync=none is the bug: it keeps badger.DefaultOptions' SyncWrites=false,
// which Badger's documentation says survives process crashes ("Badger does
// all writes via mmap") and needs SyncWrites only to survive hard reboots,
// and answers OK as soon as db.Update returns. The writes then live only in
// mapped pages of the page cache, and a crash of the machine loses writes
// the client was told were stored.
//
// -value-threshold 1 with -sync=commit shows a bug in Badger itself: with a
// threshold at most as long as a commit timestamp in decimal, the marker
// that ends each transaction goes to the value log as well, and replaying
// the memtable log after a crash stops at the first one, losing every
// write not yet flushed to a table.
//
// -sizes=small (the default) cuts Badger's default sizes down: a mapping is
// a copy in the program's wasm memory (4 GiB at most), and the defaults map
// 2 GiB per value log file and 128 MiB per memtable log. -sizes=badger keeps
// the defaults, to show the error compat_overlay gives then.
//
// At every start the server also checks Badger's directory lock: a second
// badger.Open of the directory must fail while the first holds it
// (-check-lock).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"
)

func main() {
	listen := flag.String("listen", ":7000", "address to listen on")
	dir := flag.String("dir", "data/badger", "Badger directory")
	syncMode := flag.String("sync", "commit", "commit: SyncWrites, each db.Update msyncs before OK; none: Badger's default SyncWrites=false, OK at once (the bug)")
	valueThreshold := flag.Int64("value-threshold", 32, "records this long or longer go to Badger's value log (every record is longer than 32 bytes)")
	sizes := flag.String("sizes", "small", "small: Badger's sizes cut to fit wasm memory; badger: Badger's defaults, which do not fit")
	checkLock := flag.Bool("check-lock", true, "at start, check that a second badger.Open of the directory fails on its lock")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("server: ")
	if *syncMode != "commit" && *syncMode != "none" {
		fmt.Fprintf(os.Stderr, "server: -sync is %q; use commit or none\n", *syncMode)
		os.Exit(2)
	}
	if *sizes != "small" && *sizes != "badger" {
		fmt.Fprintf(os.Stderr, "server: -sizes is %q; use small or badger\n", *sizes)
		os.Exit(2)
	}
	options := func(syncWrites bool) badger.Options {
		opt := badger.DefaultOptions(*dir).
			WithSyncWrites(syncWrites).
			WithValueThreshold(*valueThreshold).
			WithMetricsEnabled(false).
			WithLoggingLevel(badger.WARNING)
		if *sizes == "small" {
			opt = small(opt)
		}
		return opt
	}

	db, err := badger.Open(options(*syncMode == "commit"))
	if err != nil {
		log.Fatalf("badger.Open %s: %v", *dir, err)
	}
	if *checkLock {
		second, err := badger.Open(options(true))
		if err == nil {
			second.Close()
			log.Fatalf("a second badger.Open of %s got the directory lock while the first holds it", *dir)
		}
		if !strings.Contains(err.Error(), "Cannot acquire directory lock") {
			log.Fatalf("a second badger.Open of %s: %v, want the directory lock error", *dir, err)
		}
		log.Printf("a second badger.Open failed on the directory lock, as it should")
	}

	keys := 0
	err = db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			keys++
		}
		return nil
	})
	if err != nil {
		log.Fatalf("counting keys: %v", err)
	}
	log.Printf("opened %s with %d keys, sync %s", *dir, keys, *syncMode)

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

// small cuts Badger's default sizes down to fit wasm memory: a mapping is
// a copy in the program's memory, which holds 4 GiB at most.
func small(opt badger.Options) badger.Options {
	return opt.
		WithMemTableSize(256 << 10).   // default 64 MiB; its log is mapped at twice that
		WithNumMemtables(2).           // default 5
		WithValueLogFileSize(1 << 20). // default 1 GiB, mapped at twice that; 1 MiB is Badger's minimum
		WithBaseTableSize(256 << 10).  // default 2 MiB
		WithBlockCacheSize(1 << 20).   // default 256 MiB
		WithIndexCacheSize(0).         // the default: indexes stay with their tables
		WithNumCompactors(2)           // default 4; 2 is the least that compacts
}

// record is what the server stores under a key: the value and when it was
// put. Records are 50 bytes or more, so they go to Badger's value log.
type record struct {
	Value string    `json:"value"`
	PutAt time.Time `json:"put_at"`
}

func serve(db *badger.DB, c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		reply := handle(db, sc.Text())
		if _, err := fmt.Fprintln(c, reply); err != nil {
			return
		}
	}
}

func handle(db *badger.DB, line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		rec, err := json.Marshal(record{Value: f[2], PutAt: time.Now().UTC()})
		if err != nil {
			return "ERR " + err.Error()
		}
		err = db.Update(func(txn *badger.Txn) error {
			return txn.Set([]byte(f[1]), rec)
		})
		if err != nil {
			// A failed write (a write or msync error) leaves Badger unsure of
			// what is on disk: exit, and let a restart replay what it kept.
			log.Fatalf("PUT %s: %v; exiting", f[1], err)
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		var v []byte
		err := db.View(func(txn *badger.Txn) error {
			item, err := txn.Get([]byte(f[1]))
			if err != nil {
				return err
			}
			v, err = item.ValueCopy(nil)
			return err
		})
		if errors.Is(err, badger.ErrKeyNotFound) {
			return "NOTFOUND"
		}
		if err != nil {
			return "ERR " + err.Error()
		}
		var r record
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Sprintf("ERR record of %s: %v", f[1], err)
		}
		return "VALUE " + r.Value
	}
	return "ERR bad request"
}
