package netsim

import (
	"net/netip"

	"github.com/seedfall/seedfall/engine/errno"
)

type segKind uint8

const (
	segData segKind = iota
	segFIN
	segRST
)

func (k segKind) String() string {
	return [...]string{"data", "fin", "rst"}[k]
}

// segment is what travels one direction of a connection. Segments of one
// direction arrive in order: at never decreases along a Conn's in queue.
// Segments held by a network fault have at == held and form the queue's
// tail; lat keeps their latency draw, so that the release costs no draw.
type segment struct {
	at   int64
	lat  int64
	kind segKind
	data []byte
}

// Conn is one end of a TCP connection.
type Conn struct {
	n             *Network
	id            uint64
	host          int
	local, remote netip.AddrPort
	peer          *Conn // nil while a dialer's SYN is travelling, or after a refusal

	// Dialer side of the handshake: the SYN reaches the destination at synAt
	// and the answer (SYN-ACK or RST) comes back at replyAt.
	dialed            bool
	dstHost           int
	synAt, replyAt    int64 // held while a fault holds the SYN or the SYN-ACK
	synLat, replyLat  int64 // their latency draws, kept for the release
	resolved, refused bool

	in      []segment // arrived and in-flight segments, oldest first
	inBytes int       // data bytes in in: the peer's share of the Window
	lastIn  int64     // arrival time of the latest segment sent to this end that is not held
	rstAt   int64     // arrival time of the RST queued in in, or -1
	rstErr  errno.Errno
	finIn   bool // a FIN was queued before any RST

	rdShut  bool
	wrShut  bool
	rstSent bool // this end has sent an RST and sends nothing more
	closed  bool // closed by its owner, or dead with its host
}

// LocalAddr returns the address of this end.
func (c *Conn) LocalAddr() netip.AddrPort { return c.local }

// RemoteAddr returns the address of the other end.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.remote }

func (c *Conn) established(now int64) bool {
	return !c.dialed || (c.resolved && !c.refused && now >= c.replyAt)
}

// takesControl reports whether a FIN or RST sent to this end still matters.
func (c *Conn) takesControl() bool { return !c.closed && c.rstAt < 0 }

// takesData reports whether data sent to this end is kept (and so counts
// against the sender's Window) rather than dropped.
func (c *Conn) takesData() bool { return c.takesControl() && !c.rdShut }

func (c *Conn) replyAtIfDialing() int64 {
	if c.dialed {
		return c.replyAt
	}
	return 0
}

func (c *Conn) pushRst(at, lat int64) {
	c.in = append(c.in, segment{at: at, lat: lat, kind: segRST})
	c.rstAt = at
	c.rstErr = errno.ECONNRESET
	if c.finIn {
		// Linux: an RST in CLOSE_WAIT (after the peer's FIN) reports EPIPE.
		c.rstErr = errno.EPIPE
	}
}

// schedule draws the latency of one segment sent from one end to the other at
// time t and returns its arrival, never before the previous segment of that
// direction, plus the delay of any slow clog on the link. The arrival is held
// when a fault holds the link, or when earlier segments of the direction are
// held (order is kept).
func (n *Network) schedule(from, to *Conn, t int64) (at, lat int64) {
	lat = n.draw(from.host, to.host)
	s := n.link(from.host, to.host)
	if s.holds() || to.heldTail() {
		return held, lat
	}
	if t >= held {
		// An answer to a segment still held the other way (an RST for data
		// that has not reached a closed end, a SYN-ACK that has not come
		// back): nothing holds this direction, so it leaves now rather than
		// wait for a release that may never come.
		t = n.now()
	}
	at = max(t+lat+s.delay, to.lastIn)
	to.lastIn = at
	return at, lat
}

// heldTail reports whether segments sent to c are held.
func (c *Conn) heldTail() bool { return len(c.in) > 0 && c.in[len(c.in)-1].at >= held }

// sendCtl sends a FIN or an RST from one end to the other at time t.
func (n *Network) sendCtl(from, to *Conn, kind segKind, t int64) {
	at, lat := n.schedule(from, to, t)
	ev := Event{At: n.now(), Host: from.host, Local: from.local, Remote: from.remote, Arrive: arrive(at)}
	if kind == segFIN {
		to.in = append(to.in, segment{at: at, lat: lat, kind: segFIN})
		to.finIn = true
		ev.Kind = EvFIN
	} else {
		to.pushRst(at, lat)
		from.rstSent = true
		ev.Kind = EvRST
	}
	n.emit(ev)
}

// Status returns the socket's pending error, as SO_ERROR does: EINPROGRESS
// while connecting, 0 when connected, ECONNREFUSED after a refused dial,
// ECONNRESET (EPIPE after the peer's FIN) once an RST has arrived, EBADF
// after Close.
func (c *Conn) Status() errno.Errno {
	now := c.n.advance()
	switch {
	case c.closed:
		return errno.EBADF
	case !c.established(now):
		if c.refused && now >= c.replyAt {
			return errno.ECONNREFUSED
		}
		return errno.EINPROGRESS
	case c.rstAt >= 0 && c.rstAt <= now:
		return c.rstErr
	}
	return 0
}

// Read copies arrived data into p. It returns EAGAIN when nothing has arrived
// yet, (0, 0) at EOF (the peer's FIN, or after SHUT_RD), and ECONNRESET once
// the data that arrived before an RST has been read.
func (c *Conn) Read(p []byte) (int, errno.Errno) {
	now := c.n.advance()
	switch {
	case c.closed:
		return 0, errno.EBADF
	case !c.established(now):
		if c.refused && now >= c.replyAt {
			return 0, errno.ECONNREFUSED
		}
		return 0, errno.EAGAIN
	case c.rdShut:
		return 0, 0
	}
	got := 0
	for got < len(p) && len(c.in) > 0 && c.in[0].at <= now && c.in[0].kind == segData {
		s := &c.in[0]
		k := copy(p[got:], s.data)
		got += k
		c.inBytes -= k
		if k == len(s.data) {
			c.in = c.in[1:]
		} else {
			s.data = s.data[k:]
		}
	}
	if got > 0 || len(p) == 0 {
		return got, 0
	}
	if len(c.in) == 0 || c.in[0].at > now {
		return 0, errno.EAGAIN
	}
	if c.in[0].kind == segFIN {
		return 0, 0 // the FIN stays at the head: EOF is sticky
	}
	return 0, c.rstErr
}

// Write sends as much of p as the Window allows, in segments of at most
// SegmentSize, and returns how much it took. It returns EAGAIN while
// connecting and when the Window is full, EPIPE after SHUT_WR, and ECONNRESET
// (EPIPE after the peer's FIN) once an RST has arrived. Data sent to an end
// that is already closed is dropped there, and that end answers with an RST.
func (c *Conn) Write(p []byte) (int, errno.Errno) {
	now := c.n.advance()
	switch {
	case c.closed:
		return 0, errno.EBADF
	case !c.established(now):
		if c.refused && now >= c.replyAt {
			return 0, errno.ECONNREFUSED
		}
		return 0, errno.EAGAIN
	case c.rstAt >= 0 && c.rstAt <= now:
		return 0, c.rstErr
	case c.wrShut:
		return 0, errno.EPIPE
	case len(p) == 0:
		return 0, 0
	}
	peer := c.peer
	if !peer.takesData() {
		// Nobody will read this. A peer that closed answers with an RST when
		// the data reaches it; a dead or reset peer has already sent one.
		ev := Event{At: now, Kind: EvData, Host: c.host, Local: c.local, Remote: c.remote, Bytes: len(p)}
		if peer.closed && !peer.rstSent && c.takesControl() {
			at, _ := c.n.schedule(c, peer, now)
			ev.Arrive = arrive(at)
			c.n.emit(ev)
			c.n.sendCtl(peer, c, segRST, at)
		} else {
			c.n.emit(ev)
		}
		return len(p), 0
	}
	room := min(len(p), Window-peer.inBytes)
	if room <= 0 {
		return 0, errno.EAGAIN
	}
	for off := 0; off < room; off += SegmentSize {
		chunk := p[off:min(off+SegmentSize, room)]
		at, lat := c.n.schedule(c, peer, now)
		peer.in = append(peer.in, segment{at: at, lat: lat, kind: segData, data: append([]byte(nil), chunk...)})
		peer.inBytes += len(chunk)
		c.n.emit(Event{At: now, Kind: EvData, Host: c.host, Local: c.local, Remote: c.remote, Bytes: len(chunk), Arrive: arrive(at)})
	}
	return room, 0
}

// Shutdown shuts down reading, writing or both. Shutting down writing sends a
// FIN behind the data already written. It returns ENOTCONN before the
// connection is established and EBADF after Close.
func (c *Conn) Shutdown(rd, wr bool) errno.Errno {
	now := c.n.advance()
	switch {
	case c.closed:
		return errno.EBADF
	case !c.established(now):
		return errno.ENOTCONN
	}
	if wr && !c.wrShut {
		c.wrShut = true
		if !c.rstSent && c.peer.takesControl() {
			c.n.sendCtl(c, c.peer, segFIN, now)
		}
	}
	if rd && !c.rdShut {
		c.rdShut = true
		kept := c.in[:0]
		for _, s := range c.in {
			if s.kind != segData {
				kept = append(kept, s)
			}
		}
		c.in, c.inBytes = kept, 0
	}
	return 0
}

// Close closes this end. As on Linux, it sends an RST instead of a FIN when
// data has arrived that was never read, and an RST also answers data that
// reaches the closed end later. Closing twice does nothing.
func (c *Conn) Close() {
	now := c.n.advance()
	if c.closed {
		return
	}
	c.closed = true
	c.n.removeConn(c)
	if c.dialed && !c.resolved {
		c.n.removePending(c) // the SYN is dropped with the socket
	}
	c.n.emit(Event{At: now, Kind: EvClose, Host: c.host, Local: c.local, Remote: c.remote})
	p := c.peer
	if p != nil && !c.rstSent && p.takesControl() {
		unread, inflight := false, int64(-1)
		for _, s := range c.in {
			if s.kind != segData {
				continue
			}
			if s.at <= now {
				unread = true
			} else if inflight < 0 {
				inflight = s.at
			}
		}
		switch {
		case !c.established(now):
			// Closed before the SYN-ACK came back: the SYN-ACK finds no socket.
			c.n.sendCtl(c, p, segRST, c.replyAt)
		case unread:
			c.n.sendCtl(c, p, segRST, now)
		default:
			if !c.wrShut {
				c.n.sendCtl(c, p, segFIN, now)
			}
			if inflight >= 0 {
				c.n.sendCtl(c, p, segRST, inflight)
			}
		}
	}
	c.in, c.inBytes = nil, 0
}

// ReadableAt returns the virtual time from which Read stops returning EAGAIN:
// now if it already does, -1 if that depends on another node's action or on
// a network fault lifting (see "Held traffic" in the package doc).
func (c *Conn) ReadableAt() int64 {
	now := c.n.advance()
	switch {
	case c.closed || c.rdShut:
		return now
	case c.dialed && !c.resolved:
		if c.synAt < held && (c.n.findListener(c.dstHost, c.remote) == nil || c.n.refuses(c.host, c.dstHost)) {
			return known(c.replyAt, now) // will be refused
		}
	case c.refused:
		return known(c.replyAt, now)
	}
	if len(c.in) == 0 {
		return -1
	}
	return known(c.in[0].at, now)
}

// WritableAt returns the virtual time from which Write stops returning
// EAGAIN: now if it already does, -1 if that depends on another node's action
// (the peer reading). A connecting socket becomes writable when the answer to
// its SYN arrives, whether it connects or is refused.
func (c *Conn) WritableAt() int64 {
	now := c.n.advance()
	switch {
	case c.closed || c.wrShut:
		return now
	case !c.established(now):
		return known(c.replyAt, now)
	case c.rstAt >= 0 && c.rstAt <= now:
		return now
	case !c.peer.takesData() || c.peer.inBytes < Window:
		// A peer that takes no more data (closed, dead or reset) frees the
		// window: the data is dropped there.
		return now
	}
	return -1
}
