package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/fileutil"
	"go.etcd.io/etcd/server/v3/etcdserver/api/snap"
	"go.etcd.io/etcd/server/v3/storage/wal"
	"go.etcd.io/etcd/server/v3/storage/wal/walpb"
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/proto"
)

type node struct {
	id        uint64
	addrs     []string
	dir       string
	bug       string
	syncDirs  bool
	snapCount uint64
	catchUp   uint64
	keep      uint
	tick      time.Duration

	lg          *zap.Logger
	raft        raft.Node
	storage     *raft.MemoryStorage
	wal         *wal.WAL
	snapshotter *snap.Snapshotter
	tr          *transport

	// Owned by the Ready loop.
	confState     *raftpb.ConfState
	appliedIndex  uint64
	snapshotIndex uint64
	kv            map[string]string

	mu      sync.Mutex
	waiters map[string]chan result // proposals of this incarnation awaiting their entry
	boot    int64
	seq     uint64
}

type result struct {
	ok    bool // PUT applied, or GET found the key
	value string
	err   string
}

func (n *node) walDir() string  { return filepath.Join(n.dir, "wal") }
func (n *node) snapDir() string { return filepath.Join(n.dir, "snap") }

// newLogger is the zap logger etcd's packages write to: warnings and errors
// to stderr, in zap's console format.
func newLogger(id uint64) *zap.Logger {
	enc := zap.NewDevelopmentEncoderConfig()
	enc.TimeKey = ""
	core := zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.Lock(os.Stderr), zapcore.InfoLevel)
	return zap.New(core).Named(fmt.Sprintf("etcd%d", id))
}

// start replays the snapshot and the WAL, and starts or restarts the raft
// node, as etcd's raftexample does.
func (n *node) start() {
	n.lg = newLogger(n.id)
	n.boot = time.Now().UnixNano()
	if err := fileutil.TouchDirAll(n.lg, n.dir); err != nil {
		log.Fatalf("data directory: %v", err)
	}
	if err := fileutil.TouchDirAll(n.lg, n.snapDir()); err != nil {
		log.Fatalf("snapshot directory: %v", err)
	}
	syncDir(filepath.Dir(filepath.Clean(n.dir)))
	syncDir(n.dir)
	n.snapshotter = snap.New(n.lg, n.snapDir())

	snapshot := n.loadSnapshot()
	st, ents := n.openWAL(snapshot)
	n.checkLock()
	n.storage = raft.NewMemoryStorage()
	if snapshot != nil {
		if err := n.storage.ApplySnapshot(snapshot); err != nil {
			log.Fatalf("apply snapshot: %v", err)
		}
		n.restore(snapshot)
	}
	if err := n.storage.SetHardState(st); err != nil {
		log.Fatalf("set hard state: %v", err)
	}
	if err := n.storage.Append(ents); err != nil {
		log.Fatalf("append: %v", err)
	}
	log.Printf("replayed snapshot at %d, hard state term %d vote %d commit %d, %d entries", n.snapshotIndex,
		st.GetTerm(), st.GetVote(), st.GetCommit(), len(ents))

	cfg := &raft.Config{
		ID:                        n.id,
		ElectionTick:              10,
		HeartbeatTick:             1,
		Storage:                   n.storage,
		Applied:                   n.appliedIndex,
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		MaxUncommittedEntriesSize: 1 << 30,
		CheckQuorum:               true,
		PreVote:                   true,
	}
	n.tr = newTransport(n)
	if snapshot == nil && raft.IsEmptyHardState(st) && len(ents) == 0 {
		// Nothing of this member survived, so it never told anyone
		// anything: bootstrap as a new member, as every member did.
		peers := make([]raft.Peer, len(n.addrs))
		for i := range peers {
			peers[i] = raft.Peer{ID: uint64(i + 1)}
		}
		n.raft = raft.StartNode(cfg, peers)
	} else {
		n.raft = raft.RestartNode(cfg)
	}
	n.tr.start()

	stop := make(chan struct{})
	for _, p := range []struct{ dir, suffix string }{{n.walDir(), ".wal"}, {n.snapDir(), ".snap"}} {
		errc := fileutil.PurgeFile(n.lg, p.dir, p.suffix, n.keep, 500*time.Millisecond, stop)
		go func() {
			if err := <-errc; err != nil {
				log.Fatalf("purge %s: %v", p.dir, err)
			}
		}()
	}
}

// loadSnapshot returns the newest snapshot that the WAL has a record of, or
// nil.
func (n *node) loadSnapshot() *raftpb.Snapshot {
	if !wal.Exist(n.walDir()) {
		return nil
	}
	walSnaps, err := wal.ValidSnapshotEntries(n.lg, n.walDir())
	if err != nil {
		log.Fatalf("list snapshots in the WAL: %v", err)
	}
	s, err := n.snapshotter.LoadNewestAvailable(walSnaps)
	if errors.Is(err, snap.ErrNoSnapshot) {
		return nil
	}
	if err != nil {
		log.Fatalf("load snapshot: %v", err)
	}
	return s
}

// openWAL creates the WAL if there is none, opens it after snapshot and
// reads it out, repairing a torn tail once as etcd's server does.
func (n *node) openWAL(snapshot *raftpb.Snapshot) (*raftpb.HardState, []*raftpb.Entry) {
	if !wal.Exist(n.walDir()) {
		w, err := wal.Create(n.lg, n.walDir(), nil)
		if err != nil {
			log.Fatalf("create WAL: %v", err)
		}
		w.Close()
		if n.syncDirs {
			// wal.Create fsyncs the directory it renames the new WAL
			// into, not the WAL's own directory, which holds the first
			// segment's entry until the first cut fsyncs it: without
			// this, strict POSIX directories lose the whole WAL.
			syncDir(n.walDir())
		}
	}
	walsnap := &walpb.Snapshot{Index: new(uint64(0)), Term: new(uint64(0))}
	if snapshot != nil {
		walsnap.Index, walsnap.Term = new(snapshot.GetMetadata().GetIndex()), new(snapshot.GetMetadata().GetTerm())
	}
	repaired := false
	for {
		w, err := wal.Open(n.lg, n.walDir(), walsnap)
		if err != nil {
			log.Fatalf("open WAL: %v", err)
		}
		_, st, ents, err := w.ReadAll()
		if err != nil {
			w.Close()
			if repaired || !errors.Is(err, io.ErrUnexpectedEOF) {
				log.Fatalf("read WAL, cannot be repaired: %v", err)
			}
			if !wal.Repair(n.lg, n.walDir()) {
				log.Fatalf("read WAL: %v; repair failed", err)
			}
			log.Printf("repaired the WAL's torn tail (%v)", err)
			repaired = true
			continue
		}
		n.wal = w
		return st, ents
	}
}

// checkLock makes sure the WAL holds its flock on the segment it appends to,
// as etcd's purge relies on: a second lock of the file must fail.
func (n *node) checkLock() {
	names, err := fileutil.ReadDir(n.walDir(), fileutil.WithExt(".wal"))
	if err != nil || len(names) == 0 {
		log.Fatalf("list WAL segments: %v (%d found)", err, len(names))
	}
	tail := filepath.Join(n.walDir(), names[len(names)-1])
	l, err := fileutil.TryLockFile(tail, os.O_WRONLY, fileutil.PrivateFileMode)
	if err == nil {
		l.Close()
		log.Fatalf("%s is not locked although the WAL is open for appending", tail)
	}
	if !errors.Is(err, fileutil.ErrLocked) {
		log.Fatalf("lock %s: %v", tail, err)
	}
	log.Printf("%s is locked by the WAL, as it should be", names[len(names)-1])
}

// run is the Ready loop.
func (n *node) run() {
	ticker := time.NewTicker(n.tick)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			n.raft.Tick()
		case rd := <-n.raft.Ready():
			if n.bug == "send-before-save" {
				// BUG: rd.Messages may hold MsgAppResp and MsgVoteResp,
				// promises about rd.Entries and rd.HardState that are not
				// durable until wal.Save returns.
				n.tr.send(rd.Messages)
			}
			if !raft.IsEmptySnap(rd.Snapshot) {
				// The snapshot file and its WAL record go first, so that
				// a restart finds entries after it.
				n.saveSnap(rd.Snapshot)
			}
			if err := n.wal.Save(rd.HardState, rd.Entries); err != nil {
				log.Fatalf("save to WAL: %v", err)
			}
			if !raft.IsEmptySnap(rd.Snapshot) {
				if err := n.storage.ApplySnapshot(rd.Snapshot); err != nil {
					log.Fatalf("apply snapshot: %v", err)
				}
				n.restore(rd.Snapshot)
			}
			if err := n.storage.Append(rd.Entries); err != nil {
				log.Fatalf("append: %v", err)
			}
			if n.bug != "send-before-save" {
				n.tr.send(rd.Messages)
			}
			n.apply(rd.CommittedEntries)
			n.maybeSnapshot()
			n.raft.Advance()
		}
	}
}

// saveSnap writes a snapshot file, then its record to the WAL, then lets
// the WAL's older segments go to the purger.
func (n *node) saveSnap(s *raftpb.Snapshot) {
	md := s.GetMetadata()
	ws := &walpb.Snapshot{Index: new(md.GetIndex()), Term: new(md.GetTerm()), ConfState: md.GetConfState()}
	if err := n.snapshotter.SaveSnap(s); err != nil {
		log.Fatalf("save snapshot: %v", err)
	}
	if n.syncDirs {
		// SaveSnap fsyncs the file, not its directory entry, which the
		// WAL record written next relies on.
		syncDir(n.snapDir())
	}
	if err := n.wal.SaveSnapshot(ws); err != nil {
		log.Fatalf("save snapshot record: %v", err)
	}
	if err := n.wal.ReleaseLockTo(md.GetIndex()); err != nil {
		log.Fatalf("release WAL segments: %v", err)
	}
}

// restore replaces the store with a snapshot's.
func (n *node) restore(s *raftpb.Snapshot) {
	kv := map[string]string{}
	if len(s.GetData()) > 0 {
		if err := json.Unmarshal(s.GetData(), &kv); err != nil {
			log.Fatalf("snapshot %d: %v", s.GetMetadata().GetIndex(), err)
		}
	}
	n.kv = kv
	md := s.GetMetadata()
	n.confState = proto.Clone(md.GetConfState()).(*raftpb.ConfState)
	n.appliedIndex, n.snapshotIndex = md.GetIndex(), md.GetIndex()
}

func (n *node) maybeSnapshot() {
	if n.appliedIndex-n.snapshotIndex <= n.snapCount {
		return
	}
	data, err := json.Marshal(n.kv)
	if err != nil {
		log.Fatal(err)
	}
	s, err := n.storage.CreateSnapshot(n.appliedIndex, n.confState, data)
	if err != nil {
		log.Fatalf("create snapshot: %v", err)
	}
	n.saveSnap(s)
	if n.appliedIndex > n.catchUp {
		if err := n.storage.Compact(n.appliedIndex - n.catchUp); err != nil && !errors.Is(err, raft.ErrCompacted) {
			log.Fatalf("compact: %v", err)
		}
	}
	n.snapshotIndex = n.appliedIndex
}

// apply runs committed entries against the store and answers the clients
// waiting for them.
func (n *node) apply(ents []*raftpb.Entry) {
	for _, e := range ents {
		if e.GetIndex() <= n.appliedIndex {
			continue
		}
		switch e.GetType() {
		case raftpb.EntryConfChange:
			var cc raftpb.ConfChange
			if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
				log.Fatalf("entry %d: %v", e.GetIndex(), err)
			}
			n.confState = n.raft.ApplyConfChange(&cc)
		case raftpb.EntryNormal:
			if len(e.GetData()) == 0 {
				break // a new leader's empty entry
			}
			id, op, key, value, ok := parseEntry(string(e.GetData()))
			if !ok {
				log.Fatalf("entry %d: bad data %q", e.GetIndex(), e.GetData())
			}
			var r result
			switch op {
			case "put":
				n.kv[key] = value
				r.ok = true
			case "get":
				r.value, r.ok = n.kv[key]
			}
			n.resolve(id, r)
		}
		n.appliedIndex = e.GetIndex()
	}
}

func parseEntry(s string) (id, op, key, value string, ok bool) {
	f := strings.SplitN(s, " ", 4)
	switch {
	case len(f) == 4 && f[1] == "put":
		return f[0], f[1], f[2], f[3], true
	case len(f) == 3 && f[1] == "get":
		return f[0], f[1], f[2], "", true
	}
	return "", "", "", "", false
}

func (n *node) resolve(id string, r result) {
	n.mu.Lock()
	ch := n.waiters[id]
	delete(n.waiters, id)
	n.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// propose puts an operation into the log and waits until this member has
// applied it.
func (n *node) propose(op, key, value string, timeout time.Duration) result {
	n.mu.Lock()
	n.seq++
	id := fmt.Sprintf("%d.%d.%d", n.id, n.boot, n.seq)
	ch := make(chan result, 1)
	n.waiters[id] = ch
	n.mu.Unlock()
	forget := func() {
		n.mu.Lock()
		delete(n.waiters, id)
		n.mu.Unlock()
	}

	data := id + " " + op + " " + key
	if op == "put" {
		data += " " + value
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := n.raft.Propose(ctx, []byte(data)); err != nil {
		forget()
		return result{err: err.Error()}
	}
	select {
	case r := <-ch:
		return r
	case <-ctx.Done():
		forget()
		return result{err: "timeout"}
	}
}

// syncDir fsyncs a directory so that the entries made in it survive a
// crash.
func syncDir(dir string) {
	d, err := fileutil.OpenDir(dir)
	if err != nil {
		log.Fatalf("open %s: %v", dir, err)
	}
	defer d.Close()
	if err := fileutil.Fsync(d); err != nil {
		log.Fatalf("fsync %s: %v", dir, err)
	}
}
