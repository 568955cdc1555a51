package netsim

import (
	"net/netip"

	"github.com/seedfall/seedfall/engine/errno"
)

// Listener is a listening socket. Connections are queued for Accept when
// their SYN arrives; the queue has no limit.
type Listener struct {
	n      *Network
	host   int
	addr   netip.AddrPort
	any    bool
	queue  []*Conn
	closed bool
}

// Addr returns the bound address; its IP is unspecified for a listener on
// every address of its host.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// Accept returns the oldest queued connection, EAGAIN when none is queued,
// and EBADF after Close or after the host went down.
func (l *Listener) Accept() (*Conn, errno.Errno) {
	now := l.n.advance()
	switch {
	case l.closed:
		return nil, errno.EBADF
	case len(l.queue) == 0:
		return nil, errno.EAGAIN
	}
	c := l.queue[0]
	l.queue = l.queue[1:]
	l.n.emit(Event{At: now, Kind: EvAccept, Host: c.host, Local: c.local, Remote: c.remote})
	return c, 0
}

// ReadableAt returns the virtual time from which Accept stops returning
// EAGAIN: now if it already does, the arrival of the next SYN bound for this
// listener, or -1 if no SYN is on its way.
func (l *Listener) ReadableAt() int64 {
	now := l.n.advance()
	if l.closed || len(l.queue) > 0 {
		return now
	}
	for _, c := range l.n.pending {
		if c.dstHost == l.host && l.n.findListener(c.dstHost, c.remote) == l && !l.n.refuses(c.host, c.dstHost) {
			return known(c.synAt, now)
		}
	}
	return -1
}

// Close stops listening. Connections queued but not accepted are reset, as
// Linux does, and SYNs still on their way will be refused. Closing twice does
// nothing.
func (l *Listener) Close() {
	now := l.n.advance()
	if l.closed {
		return
	}
	l.closed = true
	h := l.n.hosts[l.host]
	for i, o := range h.listeners {
		if o == l {
			h.listeners = append(h.listeners[:i:i], h.listeners[i+1:]...)
			break
		}
	}
	l.n.emit(Event{At: now, Kind: EvClose, Host: l.host, Local: l.addr})
	queue := l.queue
	l.queue = nil
	for _, c := range queue {
		c.closed = true
		l.n.removeConn(c)
		if p := c.peer; !c.rstSent && p.takesControl() {
			l.n.sendCtl(c, p, segRST, now)
		}
		c.in, c.inBytes = nil, 0
	}
}
