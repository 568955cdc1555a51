package wasi

import (
	"context"
	"net/netip"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
)

// The host side of the net overlay's net_addrs (engine/guest/netoverlay):
// the node's own addresses, from which the guest's net.Interfaces and
// net.InterfaceAddrs build its eth0.

func init() {
	seedfallFuncs = append(seedfallFuncs, fn("net_addrs", vt(i32, i32, i32), netAddrs))
}

// nodePrefixBits is the prefix length of every node's address: netsim numbers
// hosts from 10.0.0.1 (netsim.Network.AddHost), so they share 10.0.0.0/8.
const nodePrefixBits = 8

// netAddrs is net_addrs(buf_ptr, buf_len, n_out): the node's addresses as
// netip.Prefix text ("10.0.0.2/8"), one space apart, loopback excluded.
func netAddrs(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	if p.Net == nil {
		return errno.ENOSYS
	}
	_, addrs := p.Net.Hosts()
	if p.Host < 0 || p.Host >= len(addrs) {
		return errno.ENOSYS
	}
	text := netip.PrefixFrom(addrs[p.Host], nodePrefixBits).String()
	if uint32(len(text)) > uint32(s[1]) {
		return errno.ERANGE
	}
	if !m.Memory().WriteString(uint32(s[0]), text) || !m.Memory().WriteUint32Le(uint32(s[2]), uint32(len(text))) {
		return errno.EFAULT
	}
	return 0
}
