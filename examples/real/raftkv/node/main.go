// Command node is one server of a replicated key-value store built on
// hashicorp/raft the way its README and examples show: a TCP transport,
// raft-boltdb/v2 as the LogStore and StableStore, a FileSnapshotStore, and
// a map as the FSM. Every node bootstraps the same three-node configuration
// on its first start.
//
// Clients speak one line each way on -kv-port:
//
//	PUT <key> <value>  ->  OK | ERR not leader[, try <host:port>] | ERR <raft error>
//	GET <key>          ->  VALUE <value> | NOTFOUND | ERR not leader[, try <host:port>] | ERR <raft error>
//
// Only the leader answers. A PUT is raft.Apply'd and, with -ack=commit (the
// default), answered OK once Apply's future returns without error: the
// entry is committed on a majority and applied. A GET waits for a
// raft.Barrier (everything committed before it is applied) and
// raft.VerifyLeader (still the leader), then reads the FSM.
//
// -ack=enqueue is the bug: it answers OK as soon as raft.Apply has queued
// the entry, and checks the future in the background, to save the round
// trip. A leader that crashes, or is cut off from the majority, before the
// entry commits has acknowledged a write the cluster never keeps.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"
)

func main() {
	id := flag.String("id", "", "this node's name, one of -peers")
	peers := flag.String("peers", "n1,n2,n3", "the cluster's node names, comma-separated (also their host names)")
	raftPort := flag.Int("raft-port", 8300, "port of the raft transport")
	kvPort := flag.Int("kv-port", 7000, "port clients talk to")
	dir := flag.String("dir", "data", "directory for raft.db and the snapshots")
	ack := flag.String("ack", "commit", "when to answer a PUT: commit (Apply's future returned) or enqueue (at once: the bug)")
	noSync := flag.Bool("nosync", false, "raft-boltdb's Options.NoSync: skip the fsync after each log append")
	raftLog := flag.String("raft-log", "warn", "hclog level of raft's own log")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix(*id + ": ")
	if *ack != "commit" && *ack != "enqueue" {
		fmt.Fprintf(os.Stderr, "node: -ack is %q; use commit or enqueue\n", *ack)
		os.Exit(2)
	}
	names := strings.Split(*peers, ",")
	found := false
	for _, n := range names {
		found = found || n == *id
	}
	if !found {
		fmt.Fprintf(os.Stderr, "node: -id %q is not one of -peers %q\n", *id, *peers)
		os.Exit(2)
	}

	logger := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.LevelFromString(*raftLog), Output: os.Stderr})
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(*dir, "raft.db"),
		BoltOptions: &bolt.Options{Timeout: 2 * time.Second},
		NoSync:      *noSync,
	})
	if err != nil {
		log.Fatalf("raft-boltdb: %v", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(*dir, 2, logger)
	if err != nil {
		log.Fatalf("snapshot store: %v", err)
	}

	// Servers are known by their IP address, which is what the transport
	// advertises.
	var servers []raft.Server
	var self *net.TCPAddr
	for _, n := range names {
		a, err := net.ResolveTCPAddr("tcp", fmt.Sprintf("%s:%d", n, *raftPort))
		if err != nil {
			log.Fatalf("resolving %s: %v", n, err)
		}
		if n == *id {
			self = a
		}
		servers = append(servers, raft.Server{ID: raft.ServerID(n), Address: raft.ServerAddress(a.String())})
	}
	trans, err := raft.NewTCPTransportWithLogger(fmt.Sprintf(":%d", *raftPort), self, 3, time.Second, logger)
	if err != nil {
		log.Fatalf("transport: %v", err)
	}

	conf := raft.DefaultConfig()
	conf.LocalID = raft.ServerID(*id)
	conf.Logger = logger
	// Virtual time is free, but every heartbeat costs the simulation real
	// work: timeouts ten times shorter than the defaults keep elections
	// quick without flooding it.
	conf.HeartbeatTimeout = 100 * time.Millisecond
	conf.ElectionTimeout = 100 * time.Millisecond
	conf.LeaderLeaseTimeout = 50 * time.Millisecond
	conf.CommitTimeout = 50 * time.Millisecond
	// Snapshot and compact often, so that restarts restore snapshots and
	// followers that fall behind get one installed.
	conf.SnapshotInterval = 300 * time.Millisecond
	conf.SnapshotThreshold = 16
	conf.TrailingLogs = 8

	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		log.Fatalf("reading raft state: %v", err)
	}
	if !existing {
		err := raft.BootstrapCluster(conf, store, store, snaps, trans, raft.Configuration{Servers: servers})
		if err != nil {
			log.Fatalf("bootstrap: %v", err)
		}
		log.Printf("bootstrapped a cluster of %d", len(servers))
	}
	kv := &fsm{data: map[string]string{}}
	r, err := raft.NewRaft(conf, kv, store, store, snaps, trans)
	if err != nil {
		log.Fatalf("raft: %v", err)
	}
	go func() {
		for leader := range r.LeaderCh() {
			if leader {
				log.Printf("leader (term %s)", r.Stats()["term"])
			}
		}
	}()

	s := &server{r: r, kv: kv, ack: *ack, kvPort: *kvPort}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", *kvPort))
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving clients on %s, ack %s, existing state %v", ln.Addr(), *ack, existing)
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go s.serve(c)
	}
}

type server struct {
	r      *raft.Raft
	kv     *fsm
	ack    string
	kvPort int
}

const raftTimeout = time.Second

func (s *server) serve(c net.Conn) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if _, err := fmt.Fprintln(c, s.handle(sc.Text())); err != nil {
			return
		}
	}
}

func (s *server) handle(line string) string {
	f := strings.Fields(line)
	switch {
	case len(f) == 3 && f[0] == "PUT":
		if s.r.State() != raft.Leader {
			return s.notLeader()
		}
		fut := s.r.Apply([]byte(line), raftTimeout)
		if s.ack == "enqueue" {
			go func() {
				if err := fut.Error(); err != nil {
					log.Printf("PUT %s, already acknowledged, failed: %v", f[1], err)
				}
			}()
			return "OK"
		}
		if err := fut.Error(); err != nil {
			return s.raftErr(err)
		}
		return "OK"
	case len(f) == 2 && f[0] == "GET":
		if s.r.State() != raft.Leader {
			return s.notLeader()
		}
		if err := s.r.Barrier(raftTimeout).Error(); err != nil {
			return s.raftErr(err)
		}
		if err := s.r.VerifyLeader().Error(); err != nil {
			return s.raftErr(err)
		}
		if v, ok := s.kv.get(f[1]); ok {
			return "VALUE " + v
		}
		return "NOTFOUND"
	}
	return "ERR bad request"
}

func (s *server) raftErr(err error) string {
	if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) {
		return s.notLeader()
	}
	return "ERR " + err.Error()
}

func (s *server) notLeader() string {
	if _, id := s.r.LeaderWithID(); id != "" {
		return fmt.Sprintf("ERR not leader, try %s:%d", id, s.kvPort)
	}
	return "ERR not leader"
}

// fsm is the replicated state: a map, changed only by committed log entries.
type fsm struct {
	mu   sync.Mutex
	data map[string]string
}

func (m *fsm) Apply(l *raft.Log) interface{} {
	f := strings.Fields(string(l.Data))
	if len(f) != 3 || f[0] != "PUT" {
		return fmt.Errorf("bad command %q at index %d", l.Data, l.Index)
	}
	m.mu.Lock()
	m.data[f[1]] = f[2]
	m.mu.Unlock()
	return nil
}

func (m *fsm) get(k string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.data[k]
	return v, ok
}

func (m *fsm) Snapshot() (raft.FSMSnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := make(map[string]string, len(m.data))
	for k, v := range m.data {
		cp[k] = v
	}
	return snapshot(cp), nil
}

func (m *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data := map[string]string{}
	if err := json.NewDecoder(rc).Decode(&data); err != nil {
		return fmt.Errorf("restoring snapshot: %w", err)
	}
	m.mu.Lock()
	m.data = data
	m.mu.Unlock()
	return nil
}

type snapshot map[string]string

func (s snapshot) Persist(sink raft.SnapshotSink) error {
	if err := json.NewEncoder(sink).Encode(map[string]string(s)); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s snapshot) Release() {}
