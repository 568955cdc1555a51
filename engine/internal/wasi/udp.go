package wasi

import (
	"context"
	"net/netip"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

// The host side of the net overlay's four UDP calls (engine/guest/netoverlay,
// Options.UDP): datagram sockets on the simulated network. Reads and writes
// on a connected socket go through fd_read and fd_write (fs.go).

func init() {
	seedfallFuncs = append(seedfallFuncs,
		fn("sock_udp_bind", vt(i32, i32, i32, i32), sockUDPBind),
		fn("sock_udp_connect", vt(i32, i32, i32, i32), sockUDPConnect),
		fn("sock_send_to", vt(i32, i32, i32, i32, i32, i32, i32), sockSendTo),
		fn("sock_recv_from", vt(i32, i32, i32, i32, i32, i32, i32), sockRecvFrom),
	)
}

// udpFD returns the UDP socket behind fd: EBADF when fd is not open,
// ENOTSOCK when it is not a UDP socket.
func (p *Process) udpFD(fd uint32) (*fdEntry, errno.Errno) {
	e := p.fd(fd)
	switch {
	case e == nil:
		return nil, errno.EBADF
	case e.kind != kindUDP:
		return nil, errno.ENOTSOCK
	}
	return e, 0
}

func sockUDPBind(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p, ip, port, en := bindArgs(ctx, m, s)
	if en != 0 {
		return en
	}
	u, en := p.Net.ListenUDP(p.Host, ip, port)
	if en != 0 {
		return en
	}
	fd := p.alloc(&fdEntry{kind: kindUDP, udp: u, read: true, write: true})
	if !m.Memory().WriteUint32Le(uint32(s[3]), fd) {
		return errno.EFAULT
	}
	return 0
}

// udpTarget reads the destination of sock_udp_connect and sock_send_to: no
// address bytes mean loopback.
func udpTarget(m api.Module, ptr, n, port uint32) (netip.Addr, errno.Errno) {
	ip, en := readIP(m, ptr, n)
	if en != 0 {
		return ip, en
	}
	if port == 0 || port > 65535 {
		return ip, errno.EINVAL
	}
	if !ip.IsValid() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	return ip, 0
}

func sockUDPConnect(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e, en := proc(ctx).udpFD(uint32(s[0]))
	if en != 0 {
		return en
	}
	port := uint32(s[3])
	ip, en := udpTarget(m, uint32(s[1]), uint32(s[2]), port)
	if en != 0 {
		return en
	}
	return e.udp.Connect(ip, int(port))
}

func sockSendTo(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e, en := proc(ctx).udpFD(uint32(s[0]))
	if en != 0 {
		return en
	}
	var buf []byte
	if n := uint32(s[2]); n > 0 {
		b, ok := m.Memory().Read(uint32(s[1]), n)
		if !ok {
			return errno.EFAULT
		}
		buf = b
	}
	port := uint32(s[5])
	ip, en := udpTarget(m, uint32(s[3]), uint32(s[4]), port)
	if en != 0 {
		return en
	}
	n, en := e.udp.SendTo(buf, netip.AddrPortFrom(ip, uint16(port)))
	if en != 0 {
		return en
	}
	if !m.Memory().WriteUint32Le(uint32(s[6]), uint32(n)) {
		return errno.EFAULT
	}
	return 0
}

func sockRecvFrom(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e, en := proc(ctx).udpFD(uint32(s[0]))
	if en != 0 {
		return en
	}
	mem := m.Memory()
	bufPtr, bufLen := uint32(s[1]), uint32(s[2])
	buf, ok := mem.Read(bufPtr, bufLen)
	if !ok {
		return errno.EFAULT
	}
	// Check the address buffer before taking the datagram, so a guest that
	// passes too small a buffer loses nothing.
	addrPtr, addrLen := uint32(s[3]), uint32(s[4])
	if _, ok := mem.Read(addrPtr, addrLen); !ok {
		return errno.EFAULT
	}
	if addrLen < uint32(len("[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535")) {
		return errno.ERANGE
	}
	n, from, en := e.udp.RecvFrom(buf)
	if en != 0 {
		return en
	}
	text := from.String()
	if !mem.WriteString(addrPtr, text) || !mem.WriteUint32Le(uint32(s[5]), uint32(n)) ||
		!mem.WriteUint32Le(uint32(s[6]), uint32(len(text))) {
		return errno.EFAULT
	}
	return 0
}

// joinDatagram joins the iovecs of a datagram, keeping at most one byte
// past netsim.MaxDatagram: enough for Send to refuse it with EMSGSIZE, not
// a copy of all the (perhaps overlapping, gigabyte) buffers a guest names.
func joinDatagram(bufs [][]byte) []byte {
	var out []byte
	for _, b := range bufs {
		room := netsim.MaxDatagram + 1 - len(out)
		if room <= 0 {
			break
		}
		out = append(out, b[:min(len(b), room)]...)
	}
	return out
}

// udpRead takes one datagram into the iovecs, as readv on a datagram socket
// does: what does not fit is discarded.
func udpRead(e *fdEntry, bufs [][]byte) (int, errno.Errno) {
	size := 0
	for _, b := range bufs {
		size += len(b)
	}
	tmp := make([]byte, min(size, netsim.MaxDatagram)) // no datagram is longer
	n, _, en := e.udp.RecvFrom(tmp)
	if en != 0 {
		return 0, en
	}
	rest := tmp[:n]
	for _, b := range bufs {
		rest = rest[copy(b, rest):]
	}
	return n, 0
}
