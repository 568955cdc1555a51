package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// transport carries raft messages between members over TCP: one outgoing
// connection per peer, each message a 4-byte big-endian length and the
// message's protobuf encoding. The Ready loop writes messages straight to the
// connections (the kernel's buffers, on a real machine), so they are on their
// way before the loop goes on to its next step. A message to a peer without a
// connection is dropped (raft resends what matters) and reported, as etcd's
// rafthttp does, while a goroutine dials the peer again.
type transport struct {
	n     *node
	peers map[uint64]*peer
}

type peer struct {
	t    *transport
	id   uint64
	addr string

	mu       sync.Mutex
	conn     net.Conn
	w        *bufio.Writer
	dialing  bool
	lastFail time.Time
}

const (
	dialTimeout  = 200 * time.Millisecond
	writeTimeout = 100 * time.Millisecond
	redialAfter  = 50 * time.Millisecond // between attempts to reach a peer
	maxMessage   = 64 << 20
)

func newTransport(n *node) *transport {
	t := &transport{n: n, peers: map[uint64]*peer{}}
	for i, a := range n.addrs {
		if id := uint64(i + 1); id != n.id {
			t.peers[id] = &peer{t: t, id: id, addr: a}
		}
	}
	return t
}

func (t *transport) start() {
	addr := t.n.addrs[t.n.id-1]
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		addr = addr[i:]
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Fatalf("raft listener: %v", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				log.Fatalf("raft listener: %v", err)
			}
			go t.receive(c)
		}
	}()
	for _, p := range t.peers {
		p.mu.Lock()
		p.redial()
		p.mu.Unlock()
	}
}

// send writes messages to their peers' connections.
func (t *transport) send(msgs []*raftpb.Message) {
	touched := map[*peer]bool{}
	for _, m := range msgs {
		p := t.peers[m.GetTo()]
		if p == nil {
			continue
		}
		b, err := proto.Marshal(m)
		if err != nil {
			log.Fatalf("marshal %v: %v", m.GetType(), err)
		}
		snap := m.GetType() == raftpb.MsgSnap
		ok := p.write(b, snap)
		if ok && !snap {
			touched[p] = true
		}
		switch {
		case !ok:
			t.n.raft.ReportUnreachable(p.id)
			if snap {
				t.n.raft.ReportSnapshot(p.id, raft.SnapshotFailure)
			}
		case snap:
			t.n.raft.ReportSnapshot(p.id, raft.SnapshotFinish)
		}
	}
	for p := range touched {
		if !p.flush() {
			t.n.raft.ReportUnreachable(p.id)
		}
	}
}

// write frames b onto p's connection; a snapshot is flushed at once.
func (p *peer) write(b []byte, flush bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == nil {
		p.redial()
		return false
	}
	p.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	p.w.Write(hdr[:])
	p.w.Write(b)
	if flush {
		return p.flushLocked()
	}
	return true
}

func (p *peer) flush() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.flushLocked()
}

func (p *peer) flushLocked() bool {
	if p.conn == nil {
		return false
	}
	if err := p.w.Flush(); err != nil {
		p.conn.Close()
		p.conn, p.w = nil, nil
		p.lastFail = time.Now()
		p.redial()
		return false
	}
	return true
}

// redial starts a goroutine that connects to p, unless one is at it. p.mu
// is held.
func (p *peer) redial() {
	if p.dialing {
		return
	}
	p.dialing = true
	wait := redialAfter - time.Since(p.lastFail)
	go func() {
		if wait > 0 {
			time.Sleep(wait)
		}
		c, err := net.DialTimeout("tcp", p.addr, dialTimeout)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.dialing = false
		if err != nil {
			p.lastFail = time.Now()
			return // the next message to p tries again
		}
		p.conn, p.w = c, bufio.NewWriter(c)
	}()
}

func (t *transport) receive(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(hdr[:])
		if size > maxMessage {
			log.Printf("raft message of %d bytes from %s: dropping the connection", size, c.RemoteAddr())
			return
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return
		}
		m := &raftpb.Message{}
		if err := proto.Unmarshal(b, m); err != nil {
			log.Printf("bad raft message from %s: %v", c.RemoteAddr(), err)
			return
		}
		t.n.raft.Step(context.Background(), m)
	}
}
