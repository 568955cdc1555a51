package netsim

import (
	"net/netip"
	"slices"

	"github.com/seedfall/seedfall/engine/errno"
)

const (
	// MaxDatagram is the largest UDP payload over IPv4. A larger one fails
	// with EMSGSIZE.
	MaxDatagram = 65507
	// UDPRecvBuffer caps the bytes of datagrams queued unread on one socket
	// (Linux's default SO_RCVBUF). A datagram that does not fit is dropped.
	UDPRecvBuffer = 212992
)

// UDPConn is a datagram socket, bound from the start.
type UDPConn struct {
	n      *Network
	host   int
	local  netip.AddrPort
	any    bool           // bound to every address of the host
	remote netip.AddrPort // the connected peer, or invalid
	queue  []*datagram    // arrived, unread, oldest first
	qBytes int
	closed bool
}

// datagram is one copy of a datagram on its way or queued.
type datagram struct {
	id       uint64
	at       int64
	from     int
	src, dst netip.AddrPort
	dstHost  int
	seq      uint64
	data     []byte
}

// LocalAddr returns the bound address; its IP is unspecified for a socket on
// every address of its host that is not connected.
func (u *UDPConn) LocalAddr() netip.AddrPort { return u.local }

// RemoteAddr returns the connected peer, or the zero AddrPort.
func (u *UDPConn) RemoteAddr() netip.AddrPort { return u.remote }

// ListenUDP opens a datagram socket on host bound to ip:port, as for Listen:
// an unspecified or invalid ip binds every address of the host, port 0 picks
// an ephemeral port. UDP ports are a space of their own, apart from TCP's.
//
// Errors: EADDRNOTAVAIL, EADDRINUSE, EINVAL as for Listen.
func (n *Network) ListenUDP(host int, ip netip.Addr, port int) (*UDPConn, errno.Errno) {
	now := n.advance()
	h := n.host(host)
	ip = ip.Unmap()
	any := !ip.IsValid() || ip.IsUnspecified()
	switch {
	case port < 0 || port > 65535:
		return nil, errno.EINVAL
	case !any && !n.isLocal(host, ip):
		return nil, errno.EADDRNOTAVAIL
	}
	if any {
		ip = netip.IPv4Unspecified()
	}
	inUse := func(p int) bool {
		for _, o := range h.udp {
			if int(o.local.Port()) == p && (any || o.any || o.local.Addr() == ip) {
				return true
			}
		}
		return false
	}
	if port == 0 {
		for range EphemeralLast - EphemeralFirst + 1 {
			p := h.nextUDPPort
			if h.nextUDPPort++; h.nextUDPPort > EphemeralLast {
				h.nextUDPPort = EphemeralFirst
			}
			if !inUse(p) {
				port = p
				break
			}
		}
		if port == 0 {
			return nil, errno.EADDRINUSE
		}
	} else if inUse(port) {
		return nil, errno.EADDRINUSE
	}
	u := &UDPConn{n: n, host: host, local: netip.AddrPortFrom(ip, uint16(port)), any: any}
	h.udp = append(h.udp, u)
	n.emit(Event{At: now, Kind: EvUDPBind, Host: host, Local: u.local})
	return u, 0
}

// resolve finds the host an address reaches from host h and the source
// address a datagram to it carries: -1 when no host has the address.
func (n *Network) resolve(h int, ip netip.Addr, bound netip.Addr) (dst int, dstIP, src netip.Addr) {
	ip = ip.Unmap()
	src = n.hosts[h].addr
	switch {
	case !ip.IsValid() || ip.IsUnspecified():
		lo := netip.AddrFrom4([4]byte{127, 0, 0, 1})
		return h, lo, lo
	case ip.IsLoopback():
		return h, ip, ip
	}
	if bound.IsValid() && !bound.IsUnspecified() {
		src = bound
	}
	for i, o := range n.hosts {
		if o.addr == ip {
			return i, ip, src
		}
	}
	return -1, ip, src
}

// Connect sets the socket's peer: Send goes there, and only its datagrams are
// received. A socket bound to every address takes the source address of the
// route as its local address, as on Linux. An unspecified ip is the host
// itself. Errors: EBADF after Close, EINVAL for a port out of range or 0.
func (u *UDPConn) Connect(ip netip.Addr, port int) errno.Errno {
	u.n.advance()
	switch {
	case u.closed:
		return errno.EBADF
	case port <= 0 || port > 65535:
		return errno.EINVAL
	}
	_, dstIP, src := u.n.resolve(u.host, ip, u.local.Addr())
	u.remote = netip.AddrPortFrom(dstIP, uint16(port))
	if u.any {
		u.local = netip.AddrPortFrom(src, u.local.Port())
	}
	return 0
}

// Send sends p to the connected peer; EDESTADDRREQ when not connected.
func (u *UDPConn) Send(p []byte) (int, errno.Errno) { return u.SendTo(p, netip.AddrPort{}) }

// SendTo sends p as one datagram to to (the connected peer when to is the
// zero AddrPort) and returns len(p): sending never blocks and never reports
// a loss. The datagram takes the host's next number (from 1, across
// HostDown). Config.Datagram decides whether it is lost or duplicated; each
// copy then takes one latency draw, and a partition or a stop or jam clog on
// the link, then or when it arrives, drops it, while a slow clog delays it.
// A copy that finds no socket bound to its port, or a full receive queue, is
// dropped too. Datagrams to an address no host has are dropped and numbered.
//
// Errors: EBADF after Close, EMSGSIZE above MaxDatagram, EDESTADDRREQ with
// no address and no peer, EINVAL for port 0.
func (u *UDPConn) SendTo(p []byte, to netip.AddrPort) (int, errno.Errno) {
	n := u.n
	now := n.advance()
	if !to.IsValid() {
		to = u.remote
	}
	switch {
	case u.closed:
		return 0, errno.EBADF
	case len(p) > MaxDatagram:
		return 0, errno.EMSGSIZE
	case !to.IsValid():
		return 0, errno.EDESTADDRREQ
	case to.Port() == 0:
		return 0, errno.EINVAL
	}
	dst, dstIP, src := n.resolve(u.host, to.Addr(), u.local.Addr())
	h := n.hosts[u.host]
	h.udpSeq++
	d := datagram{
		from: u.host, src: netip.AddrPortFrom(src, u.local.Port()), dst: netip.AddrPortFrom(dstIP, to.Port()),
		dstHost: dst, seq: h.udpSeq, data: slices.Clone(p),
	}
	ev := Event{At: now, Host: u.host, Local: d.src, Remote: d.dst, Bytes: len(p), Seq: d.seq}
	drop, dup := false, false
	if n.datagram != nil {
		drop, dup = n.datagram(u.host, dst, d.seq)
	}
	if drop {
		ev.Kind, ev.Note = EvUDPDrop, "loss"
		n.emit(ev)
		return len(p), 0
	}
	copies := 1
	if dup {
		copies = 2
	}
	for i := range copies {
		e := ev
		e.Kind = EvUDPSend
		if i > 0 {
			e.Kind = EvUDPDup
		}
		if dst < 0 {
			n.emit(e)
			e.Kind, e.Note = EvUDPDrop, "no host"
			n.emit(e)
			continue
		}
		lat := n.draw(u.host, dst)
		s := n.link(u.host, dst)
		if s.holds() {
			n.emit(e)
			e.Kind, e.Note = EvUDPDrop, "cut"
			n.emit(e)
			continue
		}
		c := d
		c.id = n.newID()
		c.at = now + lat + s.delay
		e.Arrive = c.at
		n.emit(e)
		at, _ := slices.BinarySearchFunc(n.dgrams, &c, cmpDatagram)
		n.dgrams = slices.Insert(n.dgrams, at, &c)
	}
	return len(p), 0
}

func cmpDatagram(a, b *datagram) int {
	if a.at != b.at {
		return cmpInt64(a.at, b.at)
	}
	return cmpInt64(int64(a.id), int64(b.id))
}

// arriveDatagram delivers one datagram with the state of the world at its
// arrival.
func (n *Network) arriveDatagram(d *datagram) {
	ev := Event{At: d.at, Host: d.from, Local: d.src, Remote: d.dst, Bytes: len(d.data), Seq: d.seq, Kind: EvUDPDrop}
	if n.link(d.from, d.dstHost).holds() {
		ev.Note = "cut"
		n.emit(ev)
		return
	}
	u := n.findUDP(d)
	switch {
	case u == nil:
		ev.Note = "no socket"
		n.emit(ev)
	case u.qBytes+len(d.data) > UDPRecvBuffer:
		ev.Note = "queue full"
		n.emit(ev)
	default:
		u.queue = append(u.queue, d)
		u.qBytes += len(d.data)
	}
}

func (n *Network) findUDP(d *datagram) *UDPConn {
	for _, u := range n.hosts[d.dstHost].udp {
		if u.local.Port() == d.dst.Port() && (u.any || u.local.Addr() == d.dst.Addr()) &&
			(!u.remote.IsValid() || u.remote == d.src) {
			return u
		}
	}
	return nil
}

// RecvFrom takes the oldest queued datagram, copies as much of it as fits in
// p (the rest is discarded, as recvfrom does without MSG_TRUNC) and returns
// the count and the sender's address. EAGAIN when none has arrived, EBADF
// after Close.
func (u *UDPConn) RecvFrom(p []byte) (int, netip.AddrPort, errno.Errno) {
	u.n.advance()
	switch {
	case u.closed:
		return 0, netip.AddrPort{}, errno.EBADF
	case len(u.queue) == 0:
		return 0, netip.AddrPort{}, errno.EAGAIN
	}
	d := u.queue[0]
	u.queue = u.queue[1:]
	u.qBytes -= len(d.data)
	return copy(p, d.data), d.src, 0
}

// ReadableAt returns the virtual time from which RecvFrom stops returning
// EAGAIN: now if a datagram is queued (or the socket is closed), else the
// arrival of the next datagram on its way to this socket, or -1.
func (u *UDPConn) ReadableAt() int64 {
	now := u.n.advance()
	if u.closed || len(u.queue) > 0 {
		return now
	}
	for _, d := range u.n.dgrams {
		if d.dstHost == u.host && u.n.findUDP(d) == u && !u.n.link(d.from, d.dstHost).holds() {
			return d.at
		}
	}
	return -1
}

// WritableAt returns now: sending a datagram never waits.
func (u *UDPConn) WritableAt() int64 { return u.n.advance() }

// Close closes the socket; queued datagrams are discarded and those on their
// way find no socket. Closing twice does nothing.
func (u *UDPConn) Close() {
	now := u.n.advance()
	if u.closed {
		return
	}
	u.closed = true
	h := u.n.hosts[u.host]
	if i := slices.Index(h.udp, u); i >= 0 {
		h.udp = slices.Delete(h.udp, i, i+1)
	}
	u.queue, u.qBytes = nil, 0
	u.n.emit(Event{At: now, Kind: EvClose, Host: u.host, Local: u.local})
}
