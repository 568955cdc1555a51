package netsim

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
)

// held is the arrival time of a segment, SYN or SYN-ACK that a network fault
// holds: it arrives after the fault lifts, at a time fixed only then.
const held = math.MaxInt64

// AnyHost in a clog's From or To matches every host.
const AnyHost = -1

// ClogMode is what a clog does to the traffic of the links it covers.
type ClogMode uint8

const (
	// ClogStop refuses new connections and holds TCP traffic until the clog
	// lifts; it drops datagrams. It behaves like a one-way partition.
	ClogStop ClogMode = iota + 1
	// ClogJam holds new connections and TCP traffic until the clog lifts,
	// without any error; it drops datagrams.
	ClogJam
	// ClogSlow adds the clog's delay to every segment and datagram sent over
	// the link while it lasts, and to held traffic released meanwhile.
	ClogSlow
)

func (m ClogMode) String() string {
	switch m {
	case ClogStop:
		return "stop"
	case ClogJam:
		return "jam"
	case ClogSlow:
		return "slow"
	}
	return fmt.Sprintf("ClogMode(%d)", uint8(m))
}

// Dir is the direction of a clog on one host.
type Dir uint8

const (
	DirIn   Dir = iota + 1 // everything the host receives
	DirOut                 // everything the host sends
	DirBoth                // both
)

func (d Dir) String() string {
	switch d {
	case DirIn:
		return "in"
	case DirOut:
		return "out"
	case DirBoth:
		return "both"
	}
	return fmt.Sprintf("Dir(%d)", uint8(d))
}

// ClogID names one active clog, for Unclog.
type ClogID uint64

type clog struct {
	id       ClogID
	from, to int // AnyHost matches every host
	both     int // a host whose traffic both ways is clogged, or AnyHost
	mode     ClogMode
	delay    int64
}

func (c *clog) matches(from, to int) bool {
	if c.both != AnyHost {
		return from == c.both || to == c.both
	}
	return (c.from == AnyHost || c.from == from) && (c.to == AnyHost || c.to == to)
}

// linkState is what the faults in force do to traffic from one host to
// another.
type linkState struct {
	stop  bool  // a partition or a stop clog: refuse connections, hold traffic, drop datagrams
	jam   bool  // a jam clog: hold connections and traffic, drop datagrams
	delay int64 // the sum of the delays of the slow clogs
}

// holds reports whether TCP traffic on the link waits for the faults to lift.
func (s linkState) holds() bool { return s.stop || s.jam }

// link returns the state of the one-way link from one host to another.
// Loopback traffic and the links of a fault-free host are never touched.
func (n *Network) link(from, to int) linkState {
	var s linkState
	if from == to || n.hosts[from].faultFree || n.hosts[to].faultFree {
		return s
	}
	if n.groups != nil && !n.together(from, to) {
		s.stop = true
	}
	for _, c := range n.clogs {
		if !c.matches(from, to) {
			continue
		}
		switch c.mode {
		case ClogStop:
			s.stop = true
		case ClogJam:
			s.jam = true
		case ClogSlow:
			s.delay += c.delay
		}
	}
	return s
}

// refuses reports whether a handshake between a and b is refused: a
// connection needs both directions, so a stop either way refuses it.
func (n *Network) refuses(a, b int) bool { return n.link(a, b).stop || n.link(b, a).stop }

// jams reports whether a handshake between a and b waits for a jam to lift.
func (n *Network) jams(a, b int) bool { return n.link(a, b).jam || n.link(b, a).jam }

func (n *Network) together(a, b int) bool {
	for _, g := range n.groups {
		if slices.Contains(g, a) && slices.Contains(g, b) {
			return true
		}
	}
	return false
}

// Reachable reports whether traffic from one host reaches another under the
// faults in force now: false while a partition, a stop clog or a jam clog
// holds the link.
func (n *Network) Reachable(from, to int) bool {
	n.advance()
	n.host(from)
	n.host(to)
	return !n.link(from, to).holds()
}

// SetFaultFree keeps every partition and clog off the links of host (true)
// or lets them back (false): a node with "faults": false. Traffic held on its
// links is released at once.
func (n *Network) SetFaultFree(host int, free bool) {
	now := n.advance()
	n.host(host).faultFree = free
	n.relink(now)
}

// Partition splits the hosts into groups: two hosts talk only if some group
// holds both, so groups may overlap (a ring). A host in no group talks to
// nobody but itself. It replaces the partition in force, if any; traffic that
// the new partition no longer cuts is released, and traffic in flight across
// the new cut is held.
//
// It panics on a host that does not exist or an empty group list: those are
// engine bugs, the configuration is checked before.
func (n *Network) Partition(groups [][]int) {
	now := n.advance()
	if len(groups) == 0 {
		panic("netsim: Partition needs at least one group (use HealPartition to heal)")
	}
	cp := make([][]int, len(groups))
	for i, g := range groups {
		for _, h := range g {
			n.host(h)
		}
		cp[i] = slices.Clone(g)
	}
	n.groups = cp
	n.emit(Event{At: now, Kind: EvPartition, Host: -1, Note: fmt.Sprint(cp)})
	n.relink(now)
}

// HealPartition ends the partition in force, if any, and releases the traffic
// it held (unless a clog still holds it).
func (n *Network) HealPartition() {
	now := n.advance()
	if n.groups == nil {
		return
	}
	n.groups = nil
	n.emit(Event{At: now, Kind: EvHeal, Host: -1})
	n.relink(now)
}

// ClogLink clogs the one-way link from one host to another; either may be
// AnyHost (ClogLink(h, AnyHost, ...) clogs everything h sends). delay is the
// extra latency of a ClogSlow clog, in nanoseconds, and is ignored otherwise.
// Clogs stack: every stop or jam holds, the delays of slow clogs add up.
func (n *Network) ClogLink(from, to int, mode ClogMode, delay int64) ClogID {
	now := n.advance()
	for _, h := range []int{from, to} {
		if h != AnyHost {
			n.host(h)
		}
	}
	return n.addClog(now, &clog{from: from, to: to, both: AnyHost, mode: mode, delay: delay})
}

// ClogHost clogs what host receives (DirIn), sends (DirOut) or both.
func (n *Network) ClogHost(host int, dir Dir, mode ClogMode, delay int64) ClogID {
	now := n.advance()
	n.host(host)
	c := &clog{from: AnyHost, to: AnyHost, both: AnyHost, mode: mode, delay: delay}
	switch dir {
	case DirIn:
		c.to = host
	case DirOut:
		c.from = host
	case DirBoth:
		c.both = host
	default:
		panic(fmt.Sprintf("netsim: ClogHost: bad direction %d", dir))
	}
	return n.addClog(now, c)
}

func (n *Network) addClog(now int64, c *clog) ClogID {
	if c.mode < ClogStop || c.mode > ClogSlow {
		panic(fmt.Sprintf("netsim: bad clog mode %d", c.mode))
	}
	if c.mode != ClogSlow || c.delay < 0 {
		c.delay = 0
	}
	n.nextClog++
	c.id = n.nextClog
	n.clogs = append(n.clogs, c)
	n.emit(Event{At: now, Kind: EvClog, Host: -1, Note: c.String()})
	n.relink(now)
	return c.id
}

func (c *clog) String() string {
	name := func(h int) string {
		if h == AnyHost {
			return "*"
		}
		return fmt.Sprint(h)
	}
	s := name(c.from) + "->" + name(c.to)
	if c.both != AnyHost {
		s = fmt.Sprintf("%d<->*", c.both)
	}
	s += " " + c.mode.String()
	if c.mode == ClogSlow {
		s += fmt.Sprintf(" +%d", c.delay)
	}
	return fmt.Sprintf("#%d %s", c.id, s)
}

// Unclog lifts one clog and releases the traffic it alone held. Lifting a
// clog that is not in force does nothing.
func (n *Network) Unclog(id ClogID) {
	now := n.advance()
	i := slices.IndexFunc(n.clogs, func(c *clog) bool { return c.id == id })
	if i < 0 {
		return
	}
	c := n.clogs[i]
	n.clogs = slices.Delete(n.clogs, i, i+1)
	n.emit(Event{At: now, Kind: EvUnclog, Host: -1, Note: c.String()})
	n.relink(now)
}

// Clogged reports whether any clog is in force.
func (n *Network) Clogged() bool { return len(n.clogs) > 0 }

// HealAll ends the partition and every clog at once (sim.QuietFor, the
// liveness recovery phase) and releases all held traffic.
func (n *Network) HealAll() {
	now := n.advance()
	if n.groups == nil && len(n.clogs) == 0 {
		return
	}
	n.groups, n.clogs = nil, nil
	n.emit(Event{At: now, Kind: EvHeal, Host: -1, Note: "all"})
	n.relink(now)
}

// relink brings held traffic in line with the faults in force at now: what
// is in flight across a link that now holds is held, what is held on a link
// that no longer holds is released. Hosts are visited in order, connections
// in creation order, SYNs in dial order, so the release is deterministic; it
// takes no latency draw (each segment keeps the one made when it was sent).
func (n *Network) relink(now int64) {
	for _, h := range n.hosts {
		for _, c := range h.conns {
			if c.peer != nil {
				n.relinkConn(c, now)
			}
		}
	}
	// Handshakes not yet arrived: a jam either way holds them; a released
	// one leaves now. A stop is decided when the SYN arrives (refused).
	resort := false
	for _, c := range n.pending {
		jam := n.jams(c.host, c.dstHost) && !n.refuses(c.host, c.dstHost)
		switch {
		case jam && c.synAt > now && c.synAt < held:
			c.synAt, c.replyAt = held, held
			resort = true
			n.emit(Event{At: now, Kind: EvHold, Host: c.host, Local: c.local, Remote: c.remote, Note: "syn"})
		case !jam && c.synAt >= held:
			c.synAt = now + c.synLat + n.link(c.host, c.dstHost).delay
			c.replyAt = c.synAt + c.replyLat + n.link(c.dstHost, c.host).delay
			resort = true
			n.emit(Event{At: now, Kind: EvRelease, Host: c.host, Local: c.local, Remote: c.remote, Arrive: c.synAt, Note: "syn"})
		}
	}
	if resort {
		slices.SortStableFunc(n.pending, func(a, b *Conn) int {
			if a.synAt != b.synAt {
				return cmpInt64(a.synAt, b.synAt)
			}
			return cmpInt64(int64(a.id), int64(b.id))
		})
	}
}

// relinkConn holds or releases what travels to c from its peer.
func (n *Network) relinkConn(c *Conn, now int64) {
	from := c.peer.host
	s := n.link(from, c.host)
	ev := Event{At: now, Host: from, Local: c.remote, Remote: c.local}
	if s.holds() {
		hold := false
		if c.dialed && c.replyAt > now && c.replyAt < held {
			c.replyAt, hold = held, true
		}
		for i := range c.in {
			if sg := &c.in[i]; sg.at > now && sg.at < held {
				sg.at, hold = held, true
				if sg.kind == segRST {
					c.rstAt = held
				}
			}
		}
		if hold {
			// Everything that stays in the queue has arrived.
			c.lastIn = now
			if c.dialed && c.replyAt < held {
				c.lastIn = max(c.lastIn, c.replyAt)
			}
			ev.Kind = EvHold
			n.emit(ev)
		}
		return
	}
	if c.dialed && c.replyAt >= held {
		c.replyAt = now + c.replyLat + s.delay
		c.lastIn = max(c.lastIn, c.replyAt)
		e := ev
		e.Kind, e.Arrive, e.Note = EvRelease, c.replyAt, "syn-ack"
		n.emit(e)
	}
	for i := range c.in {
		sg := &c.in[i]
		if sg.at < held {
			continue
		}
		sg.at = max(now+sg.lat+s.delay, c.lastIn)
		c.lastIn = sg.at
		if sg.kind == segRST {
			c.rstAt = sg.at
		}
		e := ev
		e.Kind, e.Bytes, e.Arrive, e.Note = EvRelease, len(sg.data), sg.at, sg.kind.String()
		n.emit(e)
	}
}

// known turns an arrival time into a readiness time: -1 while held.
func known(t, now int64) int64 {
	if t >= held {
		return -1
	}
	return max(t, now)
}

// arrive turns an arrival time into an Event's Arrive: -1 while held.
func arrive(t int64) int64 {
	if t >= held {
		return -1
	}
	return t
}

// ConnInfo describes one open connection end, for seedfall debug.
type ConnInfo struct {
	Local     netip.AddrPort `json:"local"`
	Remote    netip.AddrPort `json:"remote,omitzero"`
	Peer      string         `json:"peer,omitempty"`      // the remote host's name, "" if unknown
	State     string         `json:"state,omitempty"`     // "connecting", "established", "half-closed", "reset"
	Unread    int            `json:"unread,omitempty"`    // bytes that arrived or are on their way to this end
	Listening bool           `json:"listening,omitempty"` // a listener, not a connection
}

// Conns lists host's listeners and open connections, in creation order.
func (n *Network) Conns(host int) []ConnInfo {
	h := n.hosts[host]
	var out []ConnInfo
	for _, l := range h.listeners {
		if !l.closed {
			out = append(out, ConnInfo{Local: l.addr, Listening: true})
		}
	}
	for _, c := range h.conns {
		if c.closed {
			continue
		}
		ci := ConnInfo{Local: c.local, Remote: c.remote, Unread: c.inBytes}
		for _, o := range n.hosts {
			if o.addr == c.remote.Addr() {
				ci.Peer = o.name
			}
		}
		switch {
		case c.rstAt >= 0 && c.rstAt <= n.now() || c.rstSent:
			ci.State = "reset"
		case c.dialed && !c.resolved:
			ci.State = "connecting"
		case c.rdShut || c.wrShut || c.finIn:
			ci.State = "half-closed"
		default:
			ci.State = "established"
		}
		out = append(out, ci)
	}
	return out
}

// Faults describes the partition and the clogs in force, by host index.
func (n *Network) Faults() (groups [][]int, clogs []string) {
	for _, c := range n.clogs {
		clogs = append(clogs, c.String())
	}
	return n.groups, clogs
}
