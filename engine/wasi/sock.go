package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
)

func sockAccept(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	e := p.fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
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
}
