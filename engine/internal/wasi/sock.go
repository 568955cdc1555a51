package wasi

import (
	"context"
	"math"
	"net/netip"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
)

func sockAccept(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	e := p.fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind == kindUDP {
		return errno.EINVAL
	}
	if e.kind != kindListener {
		return errno.ENOTSOCK
	}
	c, en := e.lis.Accept()
	if en != 0 {
		return en
	}
	fd := p.alloc(&fdEntry{kind: kindConn, conn: c, read: true, write: true, nonblock: uint16(s[1])&fdflagNonblock != 0})
	if !m.Memory().WriteUint32Le(uint32(s[2]), fd) {
		return errno.EFAULT
	}
	return 0
}

func sockShutdown(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind == kindUDP || e.kind == kindListener {
		return errno.ENOTCONN
	}
	if e.kind != kindConn {
		return errno.ENOTSOCK
	}
	how := uint8(s[1])
	if how&3 == 0 {
		return errno.EINVAL
	}
	return e.conn.Shutdown(how&1 != 0, how&2 != 0)
}

// seedfallFuncs is the `seedfall` host module: the guest API and the sockets
// of the net overlay.
var seedfallFuncs = []hostFunc{
	{name: "setup_complete", fn: func(ctx context.Context, m api.Module, s []uint64) {
		if p := proc(ctx); p.SetupComplete != nil {
			p.SetupComplete()
		}
	}},
	// quiet_for(ns): no faults for ns of virtual time (sim.QuietFor).
	{name: "quiet_for", params: vt(i64), fn: func(ctx context.Context, m api.Module, s []uint64) {
		if p := proc(ctx); p.QuietFor != nil && int64(s[0]) > 0 {
			p.QuietFor(int64(s[0]))
		}
	}},
	// buggify(site_ptr, site_len, prob_bits) -> 1 when the site fires.
	{name: "buggify", params: vt(i32, i32, i64), results: vt(i32), fn: func(ctx context.Context, m api.Module, s []uint64) {
		p := proc(ctx)
		site, ok := readText(m.Memory(), uint32(s[0]), uint32(s[1])) // cut to MaxPayload
		s[0] = 0
		if ok && p.Buggify != nil && p.Buggify(site, math.Float64frombits(s[2])) {
			s[0] = 1
		}
	}},
}

func init() {
	seedfallFuncs = append(seedfallFuncs,
		fn("sock_listen", vt(i32, i32, i32, i32), sockListen),
		fn("sock_connect", vt(i32, i32, i32, i32), sockConnect),
		fn("sock_status", vt(i32), sockStatus),
		fn("sock_addrs", vt(i32, i32, i32, i32), sockAddrs),
	)
}

// readIP reads the raw address bytes of sock_listen and sock_connect: none
// for "unspecified", 4 for IPv4, 16 for IPv6.
func readIP(m api.Module, ptr, n uint32) (netip.Addr, errno.Errno) {
	switch n {
	case 0:
		return netip.Addr{}, 0
	case 4, 16:
		b, ok := m.Memory().Read(ptr, n)
		if !ok {
			return netip.Addr{}, errno.EFAULT
		}
		a, _ := netip.AddrFromSlice(b)
		return a.Unmap(), 0
	}
	return netip.Addr{}, errno.EINVAL
}

// bindArgs reads the (ip_ptr, ip_len, port) that sock_listen and
// sock_udp_bind start with; port 0 asks for an ephemeral one.
func bindArgs(ctx context.Context, m api.Module, s []uint64) (*Process, netip.Addr, int, errno.Errno) {
	p := proc(ctx)
	if p.Net == nil {
		return nil, netip.Addr{}, 0, errno.ENOSYS
	}
	ip, en := readIP(m, uint32(s[0]), uint32(s[1]))
	if en != 0 {
		return nil, ip, 0, en
	}
	port := uint32(s[2])
	if port > 65535 {
		return nil, ip, 0, errno.EINVAL
	}
	return p, ip, int(port), 0
}

func sockListen(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p, ip, port, en := bindArgs(ctx, m, s)
	if en != 0 {
		return en
	}
	l, en := p.Net.Listen(p.Host, ip, port)
	if en != 0 {
		return en
	}
	fd := p.alloc(&fdEntry{kind: kindListener, lis: l, read: true})
	if !m.Memory().WriteUint32Le(uint32(s[3]), fd) {
		return errno.EFAULT
	}
	return 0
}

func sockConnect(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	if p.Net == nil {
		return errno.ENOSYS
	}
	ip, en := readIP(m, uint32(s[0]), uint32(s[1]))
	if en != 0 {
		return en
	}
	if !ip.IsValid() {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	}
	port := uint32(s[2])
	if port == 0 || port > 65535 {
		return errno.EINVAL
	}
	c, en := p.Net.Dial(p.Host, ip, int(port))
	if en != 0 {
		return en
	}
	fd := p.alloc(&fdEntry{kind: kindConn, conn: c, read: true, write: true})
	if !m.Memory().WriteUint32Le(uint32(s[3]), fd) {
		return errno.EFAULT
	}
	return 0
}

func sockStatus(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	switch {
	case e == nil:
		return errno.EBADF
	case e.kind == kindConn:
		return e.conn.Status()
	case e.kind == kindListener, e.kind == kindUDP:
		return 0
	}
	return errno.ENOTSOCK
}

func sockAddrs(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	var text string
	switch {
	case e == nil:
		return errno.EBADF
	case e.kind == kindConn:
		text = e.conn.LocalAddr().String() + " " + e.conn.RemoteAddr().String()
	case e.kind == kindListener:
		a := e.lis.Addr()
		if !a.Addr().IsValid() {
			a = netip.AddrPortFrom(netip.IPv4Unspecified(), a.Port())
		}
		text = a.String()
	case e.kind == kindUDP:
		text = e.udp.LocalAddr().String()
		if r := e.udp.RemoteAddr(); r.IsValid() {
			text += " " + r.String()
		}
	default:
		return errno.ENOTSOCK
	}
	if uint32(len(text)) > uint32(s[2]) {
		return errno.ERANGE
	}
	if !m.Memory().WriteString(uint32(s[1]), text) || !m.Memory().WriteUint32Le(uint32(s[3]), uint32(len(text))) {
		return errno.EFAULT
	}
	return 0
}
