// Command raftwal keeps a raft log with hashicorp/raft-wal, the way its
// README shows (wal.Open, then raft.LogStore and raft.StableStore calls),
// and checks it after every crash. It appends entries in batches with
// StoreLogs, which returns once they are durable, and after each batch it
// records the last index in an acknowledgement file of its own, fsynced. A
// restarted incarnation opens the log again and fails unless every
// acknowledged entry is there with its content, and the stable store kept
// the term it was given.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

func main() {
	dir := flag.String("dir", "data/wal", "the log's directory")
	total := flag.Int("entries", 300, "entries to append in all")
	batch := flag.Int("batch", 7, "entries per StoreLogs call")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("raftwal: ")

	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	syncDir(filepath.Dir(*dir))
	acked := readAck(*dir)
	w, err := wal.Open(*dir)
	if err != nil {
		log.Fatalf("wal.Open: %v", err)
	}
	last, err := w.LastIndex()
	if err != nil {
		log.Fatalf("LastIndex: %v", err)
	}
	if last < acked {
		fail("the log ends at %d, but entries up to %d were acknowledged", last, acked)
	}
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			fail("GetLog(%d) of %d: %v", i, last, err)
		}
		if string(l.Data) != entry(i) {
			fail("entry %d holds %q, want %q", i, l.Data, entry(i))
		}
	}
	if acked > 0 {
		term, err := w.GetUint64([]byte("CurrentTerm"))
		if err != nil || term == 0 {
			fail("the stable store lost CurrentTerm (%d, %v) after %d acknowledged entries", term, err, acked)
		}
	}
	log.Printf("opened: %d entries, %d acknowledged, all intact", last, acked)

	if err := w.SetUint64([]byte("CurrentTerm"), 1); err != nil {
		log.Fatalf("SetUint64: %v", err)
	}
	for next := last + 1; next <= uint64(*total); {
		var logs []*raft.Log
		for len(logs) < *batch && next <= uint64(*total) {
			logs = append(logs, &raft.Log{Index: next, Term: 1, Type: raft.LogCommand, Data: []byte(entry(next))})
			next++
		}
		if err := w.StoreLogs(logs); err != nil {
			log.Fatalf("StoreLogs: %v", err)
		}
		writeAck(*dir, next-1)
	}
	if err := w.Close(); err != nil {
		log.Fatalf("Close: %v", err)
	}
	log.Printf("done: %d entries", *total)
}

func entry(i uint64) string { return fmt.Sprintf("entry %d", i) }

func fail(format string, args ...any) {
	log.Printf("FAIL: "+format, args...)
	os.Exit(1)
}

// The acknowledgement file sits next to the log's directory and is
// replaced by rename, fsynced, with its directory fsynced.
func ackPath(dir string) string { return filepath.Join(filepath.Dir(dir), "acked") }

func readAck(dir string) uint64 {
	b, err := os.ReadFile(ackPath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		log.Fatal(err)
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		log.Fatalf("acknowledgement file: %v", err)
	}
	return n
}

func writeAck(dir string, n uint64) {
	tmp := ackPath(dir) + ".tmp"
	f, err := os.Create(tmp)
	if err == nil {
		_, err = f.WriteString(strconv.FormatUint(n, 10))
	}
	if err == nil {
		err = f.Sync()
	}
	if f != nil {
		f.Close()
	}
	if err == nil {
		err = os.Rename(tmp, ackPath(dir))
	}
	if err != nil {
		log.Fatal(err)
	}
	syncDir(filepath.Dir(dir))
}

func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		log.Fatal(err)
	}
}
