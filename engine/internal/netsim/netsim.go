// Package netsim owns the simulated network: each host's address, its TCP
// listeners and connections, its UDP sockets, the network faults on the links
// between hosts, and the virtual time at which every byte, FIN, RST and
// datagram reaches the other end.
//
// The model is pull-based and needs no callbacks. The engine asks a blocked
// socket when it stops returning EAGAIN (ReadableAt, WritableAt) and asks
// again after every step, because any step may change the answer. Internal
// events (a SYN reaching a listener, a datagram reaching a socket) are
// resolved lazily at the next call whose virtual time has passed them, so
// answers always reflect the state of the world at that time.
//
// Latency draws happen only inside calls (Dial, Write, Close, Shutdown,
// HostDown, ResetHost, SendTo), in the order those calls are made, never
// while resolving internal events or releasing held traffic. The same calls
// with the same draws therefore give the same network, byte for byte.
//
// # Network faults
//
// Every fault is directional: it decides what happens to traffic from one
// host to another. Partition (groups; a new one replaces the old, groups
// may overlap), ClogLink and ClogHost (modes ClogStop, ClogJam, ClogSlow)
// stack: a link holds while any partition, stop or jam covers it, and the
// delays of the slow clogs on it add up. Loopback traffic and the links of a
// host marked with SetFaultFree are never touched. Per mode:
//
//   - partition, ClogStop: a dial across the cut (either direction) is
//     refused (ECONNREFUSED after the round trip); a SYN arriving across it
//     is refused too. Segments in flight and sent are held.
//   - ClogJam: a handshake across it (either direction) is held and
//     completes after the clog lifts; segments are held. No error is seen.
//   - ClogSlow: segments and SYNs sent over the link arrive the delay later.
//
// Held traffic: when a link starts to hold, every segment travelling on it
// (data, FIN, RST, a SYN-ACK) that has not arrived yet is held, and so is
// everything sent on it later. When the link stops holding (HealPartition,
// Unclog, HealAll, a replacing Partition, SetFaultFree), the held segments
// of each connection leave at that moment, each with the latency drawn when
// it was sent plus the delays of the slow clogs then in force, never
// overtaking the one before it; connections are released host by host in
// creation order. While traffic is held, ReadableAt and WritableAt answer -1,
// "until something else happens": netsim does not know when the fault will
// lift. The engine lifts faults by calling netsim, and must re-ask every
// blocked socket after that call, as after any step.
//
// Datagrams are never held: a partition, stop or jam on the link when a
// datagram is sent, or when it arrives, drops it; a slow clog delays it.
// Loss and duplication are decided per datagram by Config.Datagram. Topology
// helpers (Groups, CheckTopology) build partitions of Jepsen's shapes.
//
// Simplifications, on purpose:
//   - The listen backlog is unbounded.
//   - A connection is queued for Accept when its SYN arrives; the dialer is
//     connected when the SYN-ACK arrives. Both latency draws of a handshake are
//     made at Dial time.
//   - The receive window reopens the moment the receiver reads: ACKs take no
//     time and cost no draw.
//   - Segments are never lost or duplicated (TCP hides that from programs).
//   - After SHUT_RD, reads return EOF and data that arrives is discarded.
//   - ECONNRESET is sticky: every read after the data that came before the RST
//     returns it (Linux returns it once, then EOF).
//   - A UDP send never blocks and never fails for lack of buffer; ICMP is
//     not modelled, so a datagram to a closed port vanishes silently.
package netsim

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/seedfall/seedfall/engine/errno"
)

const (
	// Window caps the bytes of one direction of a connection that are in
	// flight or arrived but unread. A Write that would exceed it is cut short
	// (or returns EAGAIN); the writer can write again when the reader reads.
	Window = 256 << 10
	// SegmentSize is the largest chunk a Write is split into. Each chunk takes
	// one latency draw.
	SegmentSize = 64 << 10
	// EphemeralFirst and EphemeralLast bound the ports handed out for Dial and
	// for Listen on port 0, per host, in order (Linux's default range).
	EphemeralFirst = 32768
	EphemeralLast  = 60999
)

// Config wires the network to the engine. Now and Latency are required.
type Config struct {
	// Now returns the current virtual time in nanoseconds.
	Now func() int64
	// Latency returns one delay draw, in nanoseconds, for one segment (SYN,
	// SYN-ACK, RST, FIN or a chunk of data) sent from host from to host to.
	// Loopback traffic asks for Latency(h, h). Negative draws count as 0.
	Latency func(from, to int) int64
	// Trace, if set, receives every network event in the order it happens.
	Trace func(Event)
	// Datagram, if set, decides the fate of each UDP datagram a host sends,
	// before any latency draw: seq numbers the sender's datagrams from 1,
	// across restarts; to is the destination host, -1 when no host has the
	// address. drop loses the datagram, dup sends a second copy with its own
	// latency. The engine decides from its own random stream (or a
	// schedule) and records the faults; netsim applies them and logs
	// EvUDPDrop (Note "loss") and EvUDPDup.
	Datagram func(from, to int, seq uint64) (drop, dup bool)
}

// Network is one simulated TCP network. It is not safe for concurrent use:
// the engine calls it from the node that holds the baton.
type Network struct {
	now     func() int64
	latency func(from, to int) int64
	trace   func(Event)
	// datagram decides UDP loss and duplication (Config.Datagram).
	datagram func(from, to int, seq uint64) (drop, dup bool)

	hosts []*host
	// pending holds dialed connections whose SYN has not arrived yet, ordered
	// by (synAt, id) so that they resolve in a deterministic order.
	pending []*Conn
	nextID  uint64
	// dgrams holds datagrams on their way, ordered by (at, id).
	dgrams []*datagram

	// Network faults: the partition in force (nil: none) and the clogs.
	groups   [][]int
	clogs    []*clog
	nextClog ClogID
}

type host struct {
	name      string
	addr      netip.Addr
	nextPort  int
	listeners []*Listener
	conns     []*Conn // open connections, in creation order
	faultFree bool    // partitions and clogs never touch its links

	udp         []*UDPConn // open datagram sockets, in creation order
	nextUDPPort int
	udpSeq      uint64 // datagrams sent, across restarts
}

// New returns an empty network.
func New(cfg Config) *Network {
	if cfg.Now == nil || cfg.Latency == nil {
		panic("netsim: Config.Now and Config.Latency are required")
	}
	return &Network{now: cfg.Now, latency: cfg.Latency, trace: cfg.Trace, datagram: cfg.Datagram}
}

// AddHost adds a host and returns its address. Hosts are numbered in the
// order they are added, from 0; host i gets 10.0.0.1 plus i.
func (n *Network) AddHost(name string) netip.Addr {
	i := uint32(len(n.hosts)) + 1
	a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
	n.hosts = append(n.hosts, &host{name: name, addr: a, nextPort: EphemeralFirst, nextUDPPort: EphemeralFirst})
	return a
}

// Hosts returns every host's name and address, indexed by host number.
func (n *Network) Hosts() (names []string, addrs []netip.Addr) {
	for _, h := range n.hosts {
		names = append(names, h.name)
		addrs = append(addrs, h.addr)
	}
	return names, addrs
}

func (n *Network) host(i int) *host {
	if i < 0 || i >= len(n.hosts) {
		panic(fmt.Sprintf("netsim: host %d does not exist (the network has %d hosts)", i, len(n.hosts)))
	}
	return n.hosts[i]
}

// advance resolves every SYN and datagram that has arrived by now, in order
// of arrival (a SYN first on a tie), and returns now.
func (n *Network) advance() int64 {
	now := n.now()
	for {
		syn := len(n.pending) > 0 && n.pending[0].synAt <= now
		dg := len(n.dgrams) > 0 && n.dgrams[0].at <= now
		switch {
		case syn && (!dg || n.pending[0].synAt <= n.dgrams[0].at):
			c := n.pending[0]
			n.pending = n.pending[1:]
			n.arriveSYN(c)
		case dg:
			d := n.dgrams[0]
			n.dgrams = n.dgrams[1:]
			n.arriveDatagram(d)
		default:
			return now
		}
	}
}

// arriveSYN decides a handshake with the state of the world at the SYN's
// arrival: a listener then accepts it, no listener refuses it.
//
// A partition or a stop clog either way refuses it. (A jam cannot be in force
// here: relink holds every SYN still travelling when a jam begins.)
func (n *Network) arriveSYN(c *Conn) {
	c.resolved = true
	l := n.findListener(c.dstHost, c.remote)
	if l == nil || n.refuses(c.host, c.dstHost) {
		c.refused = true
		n.emit(Event{At: c.synAt, Kind: EvRefused, Host: c.host, Local: c.local, Remote: c.remote, Arrive: c.replyAt})
		return
	}
	s := &Conn{
		n: n, id: n.newID(), host: c.dstHost,
		local: c.remote, remote: c.local,
		peer: c, lastIn: c.synAt, rstAt: -1,
	}
	c.peer = s
	c.lastIn = max(c.lastIn, c.replyAt) // nothing from the server overtakes the SYN-ACK
	h := n.hosts[s.host]
	h.conns = append(h.conns, s)
	l.queue = append(l.queue, s)
	n.emit(Event{At: c.synAt, Kind: EvSYN, Host: s.host, Local: s.local, Remote: s.remote, Arrive: c.replyAt})
}

func (n *Network) findListener(h int, dst netip.AddrPort) *Listener {
	for _, l := range n.hosts[h].listeners {
		if int(l.addr.Port()) == int(dst.Port()) && (l.any || l.addr.Addr() == dst.Addr()) {
			return l
		}
	}
	return nil
}

func (n *Network) newID() uint64 {
	n.nextID++
	return n.nextID
}

func (n *Network) draw(from, to int) int64 {
	return max(n.latency(from, to), 0)
}

func (n *Network) emit(e Event) {
	if n.trace != nil {
		n.trace(e)
	}
}

func (n *Network) removePending(c *Conn) {
	if i := slices.Index(n.pending, c); i >= 0 {
		n.pending = slices.Delete(n.pending, i, i+1)
	}
}

func (n *Network) removeConn(c *Conn) {
	h := n.hosts[c.host]
	if i := slices.Index(h.conns, c); i >= 0 {
		h.conns = slices.Delete(h.conns, i, i+1)
	}
}

// isLocal reports whether ip addresses host h itself: its own address, any
// loopback address, or the unspecified address.
func (n *Network) isLocal(h int, ip netip.Addr) bool {
	return ip.IsLoopback() || ip.IsUnspecified() || ip == n.hosts[h].addr
}

// portInUse reports whether a listener on ip:port would clash with one
// already bound on host h. Dialed connections hold their local port too, as
// on Linux, where they do not set SO_REUSEADDR.
func (n *Network) portInUse(h int, ip netip.Addr, any bool, port int) bool {
	for _, l := range n.hosts[h].listeners {
		if int(l.addr.Port()) == port && (any || l.any || l.addr.Addr() == ip) {
			return true
		}
	}
	for _, c := range n.hosts[h].conns {
		if c.dialed && int(c.local.Port()) == port {
			return true
		}
	}
	return false
}

// ephemeralPort hands out the host's next free port, wrapping around the
// ephemeral range; 0 when every port is taken.
func (n *Network) ephemeralPort(h int) int {
	hs := n.hosts[h]
	for range EphemeralLast - EphemeralFirst + 1 {
		p := hs.nextPort
		hs.nextPort++
		if hs.nextPort > EphemeralLast {
			hs.nextPort = EphemeralFirst
		}
		if !n.portInUse(h, netip.Addr{}, true, p) {
			return p
		}
	}
	return 0
}

// Listen binds a listener on host to ip:port. An unspecified or invalid ip
// listens on every address of the host, loopback included; port 0 picks an
// ephemeral port. The backlog is unbounded.
//
// Errors: EADDRNOTAVAIL when ip is not the host's own or a loopback address,
// EADDRINUSE when the port is taken, EINVAL for a port out of range.
func (n *Network) Listen(host int, ip netip.Addr, port int) (*Listener, errno.Errno) {
	now := n.advance()
	n.host(host)
	ip = ip.Unmap()
	any := !ip.IsValid() || ip.IsUnspecified()
	switch {
	case port < 0 || port > 65535:
		return nil, errno.EINVAL
	case !any && !n.isLocal(host, ip):
		return nil, errno.EADDRNOTAVAIL
	}
	if !ip.IsValid() {
		ip = netip.IPv4Unspecified()
	}
	if port == 0 {
		if port = n.ephemeralPort(host); port == 0 {
			return nil, errno.EADDRINUSE
		}
	} else if n.portInUse(host, ip, any, port) {
		return nil, errno.EADDRINUSE
	}
	l := &Listener{n: n, host: host, addr: netip.AddrPortFrom(ip, uint16(port)), any: any}
	h := n.hosts[host]
	h.listeners = append(h.listeners, l)
	n.emit(Event{At: now, Kind: EvListen, Host: host, Local: l.addr})
	return l, 0
}

// Dial starts connecting from host to ip:port and returns at once: the
// connection's Status is EINPROGRESS until the SYN-ACK (or the RST) comes
// back, and WritableAt says when. Loopback addresses and the unspecified
// address reach the dialing host itself.
//
// Errors: EHOSTUNREACH when no host has the address, EADDRNOTAVAIL when the
// host has no ephemeral port left, EINVAL for a port out of range.
func (n *Network) Dial(host int, ip netip.Addr, port int) (*Conn, errno.Errno) {
	now := n.advance()
	h := n.host(host)
	ip = ip.Unmap()
	if port < 0 || port > 65535 {
		return nil, errno.EINVAL
	}
	dst := -1
	local := h.addr
	switch {
	case !ip.IsValid() || ip.IsUnspecified():
		dst, ip, local = host, netip.AddrFrom4([4]byte{127, 0, 0, 1}), netip.AddrFrom4([4]byte{127, 0, 0, 1})
	case ip.IsLoopback():
		dst, local = host, ip
	default:
		for i, o := range n.hosts {
			if o.addr == ip {
				dst = i
				break
			}
		}
	}
	if dst < 0 {
		return nil, errno.EHOSTUNREACH
	}
	lport := n.ephemeralPort(host)
	if lport == 0 {
		return nil, errno.EADDRNOTAVAIL
	}
	c := &Conn{
		n: n, id: n.newID(), host: host,
		local:  netip.AddrPortFrom(local, uint16(lport)),
		remote: netip.AddrPortFrom(ip, uint16(port)),
		dialed: true, dstHost: dst, rstAt: -1,
	}
	c.synLat = n.draw(host, dst)
	c.replyLat = n.draw(dst, host)
	c.synAt = now + c.synLat + n.link(host, dst).delay
	c.replyAt = c.synAt + c.replyLat + n.link(dst, host).delay
	h.conns = append(h.conns, c)
	if n.refuses(host, dst) {
		// The link is cut: refused at once, heard back after the round trip.
		c.resolved, c.refused = true, true
		n.emit(Event{At: now, Kind: EvDial, Host: host, Local: c.local, Remote: c.remote, Arrive: c.synAt})
		n.emit(Event{At: now, Kind: EvRefused, Host: host, Local: c.local, Remote: c.remote, Arrive: c.replyAt, Note: "cut"})
		return c, 0
	}
	if n.jams(host, dst) {
		c.synAt, c.replyAt = held, held
	}
	i, _ := slices.BinarySearchFunc(n.pending, c, func(a, b *Conn) int {
		if a.synAt != b.synAt {
			return cmpInt64(a.synAt, b.synAt)
		}
		return cmpInt64(int64(a.id), int64(b.id))
	})
	n.pending = slices.Insert(n.pending, i, c)
	n.emit(Event{At: now, Kind: EvDial, Host: host, Local: c.local, Remote: c.remote, Arrive: arrive(c.synAt)})
	return c, 0
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// HostDown models a crash of host: its listeners and datagram sockets vanish
// and its connections die without a word to their owner. Each peer on another host is sent an
// RST, which arrives after one latency draw, behind any data already in
// flight. SYNs still travelling to the host find no listener and are refused.
// The host keeps its address and can listen and dial again at once (a
// restarted node); its ephemeral port counter keeps counting.
func (n *Network) HostDown(host int) {
	now := n.advance()
	h := n.host(host)
	conns := h.conns
	for _, l := range h.listeners {
		l.closed, l.queue = true, nil
	}
	h.listeners, h.conns = nil, nil
	for _, u := range h.udp {
		u.closed, u.queue, u.qBytes = true, nil, 0
	}
	h.udp = nil
	for _, c := range conns {
		c.closed = true
		c.in, c.inBytes = nil, 0
		if !c.resolved && c.dialed {
			n.removePending(c)
		}
	}
	n.emit(Event{At: now, Kind: EvHostDown, Host: host})
	for _, c := range conns {
		if p := c.peer; p != nil && p.takesControl() {
			at := max(now, c.replyAtIfDialing())
			n.sendCtl(c, p, segRST, at)
		}
	}
}

// ResetHost resets every established connection of host at once, as if a
// middlebox dropped them: the host's own ends see ECONNRESET now, each peer
// on another host gets an RST after one latency draw, and what was in flight
// on those connections either way at the reset (data and FINs that had not
// arrived yet) is lost, as an RST on Linux discards what is queued. Listeners
// survive.
func (n *Network) ResetHost(host int) {
	now := n.advance()
	h := n.host(host)
	var reset []*Conn
	for _, c := range h.conns {
		if !c.established(now) || !c.takesControl() {
			continue
		}
		c.dropInFlight(now)
		c.pushRst(now, 0)
		reset = append(reset, c)
		n.emit(Event{At: now, Kind: EvReset, Host: c.host, Local: c.local, Remote: c.remote})
	}
	for _, c := range reset {
		if p := c.peer; p != nil && p.takesControl() {
			p.dropInFlight(now)
			n.sendCtl(c, p, segRST, now)
		}
	}
}

// dropInFlight loses the segments on their way to c that have not arrived
// by now (held ones too), for a reset of its connection. What has arrived
// stays readable before the RST. The next segment (the RST) is then due
// after its own latency draw, not after the lost ones.
func (c *Conn) dropInFlight(now int64) {
	kept := c.in[:0]
	for _, s := range c.in {
		switch {
		case s.at <= now:
			kept = append(kept, s)
		case s.kind == segData:
			c.inBytes -= len(s.data)
		case s.kind == segFIN:
			c.finIn = false // the FIN never arrives
		}
	}
	if len(kept) == len(c.in) {
		return
	}
	clear(c.in[len(kept):]) // let the lost data go
	c.in = kept
	c.lastIn = min(c.lastIn, now)
	if c.dialed && c.replyAt < held {
		c.lastIn = max(c.lastIn, c.replyAt) // nothing overtakes the SYN-ACK
	}
}

// ArrivedBetween reports whether something reached the host's TCP sockets
// after virtual time from and by to: a segment (data, FIN or RST) that is
// still queued on one of its connections, or a SYN whose connection waits
// on one of its listeners to be accepted. The engine asks it about the time
// a node spent computing, to learn whether a request arrived meanwhile.
func (n *Network) ArrivedBetween(hostIdx int, from, to int64) bool {
	n.advance()
	h := n.host(hostIdx)
	for _, c := range h.conns {
		for _, s := range c.in { // oldest first: at never decreases
			if s.at > to {
				break
			}
			if s.at > from {
				return true
			}
		}
	}
	for _, l := range h.listeners {
		for _, c := range l.queue {
			if c.peer != nil && c.peer.synAt > from && c.peer.synAt <= to {
				return true
			}
		}
	}
	return false
}
