// Command node is one member of a replicated key-value store built on etcd's
// raft library (go.etcd.io/raft/v3) the way etcd's contrib/raftexample is:
// a raft.Node stepped by a Ready loop, a raft.MemoryStorage, etcd's own WAL
// (go.etcd.io/etcd/server/v3/storage/wal) for the log and hard state, and
// etcd's snap package for snapshots. Peers talk over a small TCP transport of
// its own (transport.go) rather than etcd's rafthttp.
//
// Clients speak one line each way on -listen:
//
//	PUT <key> <value>  ->  OK | ERR <why>
//	GET <key>          ->  VALUE <value> | NOTFOUND | ERR <why>
//
// Both go through the raft log (a GET is a read entry), so an answer is
// linearizable whichever member a client asks. OK means the write was
// committed by a quorum and applied here.
//
// -bug selects the mistake to run with:
//
//	send-before-save  the Ready loop sends rd.Messages before wal.Save has made
//	                  rd.HardState and rd.Entries durable: a follower
//	                  acknowledges entries (MsgAppResp) and grants votes
//	                  (MsgVoteResp) it can still lose in a crash
//
// -sync-dirs=false leaves the WAL's and the snapshots' directory entries to
// the file system, as etcd's wal.Create and snap.SaveSnap do: ext4's journal
// makes them durable with the files, strict POSIX directories do not.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"go.etcd.io/etcd/server/v3/storage/wal"
)

func main() {
	id := flag.Uint64("id", 0, "this member's raft id, 1-based position in -peers")
	peers := flag.String("peers", "n1:2380,n2:2380,n3:2380", "comma-separated peer addresses, in raft id order")
	listen := flag.String("listen", ":7000", "client address")
	dir := flag.String("dir", "data", "data directory (wal/ and snap/ inside)")
	bug := flag.String("bug", "", "mistake to run with: send-before-save (empty: none)")
	snapCount := flag.Uint64("snap-count", 40, "applied entries between snapshots")
	catchUp := flag.Uint64("catch-up", 10, "entries kept in memory after a snapshot for slow followers")
	segment := flag.Int64("segment-bytes", 16<<10, "WAL segment size (wal.SegmentSizeBytes; etcd's default 64 MiB is preallocated)")
	syncDirs := flag.Bool("sync-dirs", true, "fsync the WAL and snapshot directories after wal.Create and snap.SaveSnap, which leave that to the file system")
	keep := flag.Uint("keep", 3, "WAL segments and snapshot files to keep when purging")
	tick := flag.Duration("tick", 50*time.Millisecond, "raft tick")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(fmt.Sprintf("node%d: ", *id))

	addrs := strings.Split(*peers, ",")
	if *id < 1 || int(*id) > len(addrs) {
		fmt.Fprintf(os.Stderr, "node: -id %d is not a position in -peers (%d peers)\n", *id, len(addrs))
		os.Exit(2)
	}
	switch *bug {
	case "", "send-before-save":
	default:
		fmt.Fprintf(os.Stderr, "node: -bug %q; use send-before-save or leave it empty\n", *bug)
		os.Exit(2)
	}
	// The default preallocates 64 MiB per segment, twice (the tail and the
	// next one the file pipeline keeps ready): small segments also make the
	// WAL cut, release and purge segments within a short run.
	wal.SegmentSizeBytes = *segment

	n := &node{
		id:        *id,
		addrs:     addrs,
		dir:       *dir,
		bug:       *bug,
		syncDirs:  *syncDirs,
		snapCount: *snapCount,
		catchUp:   *catchUp,
		keep:      *keep,
		tick:      *tick,
		waiters:   map[string]chan result{},
		kv:        map[string]string{},
	}
	n.start()
	go n.serveClients(*listen)
	n.run()
}
