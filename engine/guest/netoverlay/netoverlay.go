// Package netoverlay owns the guest side of seedfall's network: the
// `go build -overlay` files that make package net of a GOOS=wasip1 guest
// create its TCP and UDP sockets on the simulated network (engine/internal/netsim),
// and the /etc files through which node names resolve.
//
// # How the overlay works
//
// Files reads the installed GOROOT, so it follows the user's Go version, and
// applies small anchored patches: each inserts a hook after one exact line and
// fails if that line is not found exactly once.
//
//   - src/net/net_fake.go: socket() first offers TCP and UDP to
//     seedfallSocket; unix sockets, and UDP in an overlay without
//     Options.UDP, stay on Go's in-process fake network.
//   - src/net/fd_fake.go: an accepted connection asks the host for its
//     addresses, so RemoteAddr is the dialer's.
//   - src/net/sockopt_fake.go, src/net/tcpsockopt_stub.go: SetKeepAlive,
//     SetKeepAlivePeriod/Config, SetNoDelay, SetLinger, SetReadBuffer and
//     SetWriteBuffer return nil on host sockets (they mean nothing there).
//   - src/net/net_seedfall_wasip1.go (new): the TCP host imports below,
//     listen, an asynchronous connect that waits like Go's Unix connect
//     (WaitWrite, then SO_ERROR; context deadline and cancellation
//     honoured), addresses.
//   - src/net/net_seedfall_udp_wasip1.go (new, with Options.UDP): the UDP
//     host imports, UDP sockets, and netFD's datagram methods (readFrom,
//     readMsg, writeTo, writeMsg and their Inet4/Inet6 forms), which take
//     precedence over the ones promoted from Go's fake network and wait on
//     netpoll through RawRead/RawWrite, so deadlines work as for any socket.
//   - src/net/dnsclient_unix.go: Resolver.exchange, the one place where Go's
//     resolver sends a DNS query, first asks seedfallExchange, which answers
//     NXDOMAIN at once (see Name resolution).
//   - src/net/interface_stub.go: interfaceTable and interfaceAddrTable, empty
//     on wasip1, report the node's interfaces (see Interfaces).
//   - src/net/net_seedfall_dnsif_wasip1.go (new): seedfallExchange, the
//     interface table, and the net_addrs host import.
//
// Everything else is stock Go: reads, writes, accepts, closes and deadlines
// go through internal/poll and the runtime netpoll, which call the standard
// WASI functions listed below. The overlay is for GOOS=wasip1 only. Dialer
// LocalAddr and Control functions are ignored.
//
// # Host ABI: module "seedfall"
//
// Every parameter is an i32; pointers are offsets into the guest's memory.
// (wazero hands a Go host function each i32 as a uint64 whose upper 32 bits
// may be garbage: truncate with uint32(stack[i]) before use.) Every function
// returns an i32 WASI errno (0 on success, numbering as in engine/errno). The
// calling node is the one that holds the baton; "host" below means that
// node's host index in netsim. testdata/hostside.go.txt is a binding of these
// calls to netsim that ran the overlay's guests end to end (echo, net/http,
// deadlines, refusals, a crash) under the prototype's WASI layer.
//
// sock_listen(ip_ptr, ip_len, port, fd_out) -> errno
//
//	Listen on ip:port. ip is ip_len raw bytes at ip_ptr: 0 bytes for the
//	unspecified address (every address of the node), 4 for IPv4, 16 for IPv6
//	(ip_ptr is valid even when ip_len is 0). port 0 picks an ephemeral port.
//	Writes the new listening fd (u32 little-endian) at fd_out.
//	Host side: netsim.Network.Listen(host, ip, port).
//	Errors: EADDRINUSE, EADDRNOTAVAIL, EINVAL (ip_len not 0/4/16, port out of
//	range), EMFILE (fd table full), EFAULT (pointer out of memory).
//
// sock_connect(ip_ptr, ip_len, port, fd_out) -> errno
//
//	Start connecting to ip:port and return at once (ip as for sock_listen; 0
//	bytes means loopback). Writes the new fd at fd_out; the connection's fate
//	is read later with sock_status.
//	Host side: netsim.Network.Dial(host, ip, port).
//	Errors: EHOSTUNREACH (no node has that address), EADDRNOTAVAIL (no
//	ephemeral port left), EINVAL, EMFILE, EFAULT.
//
// sock_status(fd) -> errno
//
//	The socket's SO_ERROR: EINPROGRESS while connecting, 0 once connected,
//	ECONNREFUSED, ECONNRESET, EPIPE. The guest calls it after poll_oneoff
//	reports fd writable, and again on spurious wake-ups.
//	Host side: netsim.Conn.Status(); 0 for a listener.
//	Errors: EBADF (fd not open), ENOTSOCK (fd is not a socket).
//
// sock_addrs(fd, buf_ptr, buf_len, n_out) -> errno
//
//	Writes the socket's addresses as text at buf_ptr, no terminator, and the
//	length (u32 little-endian) at n_out: "<local> <remote>" for a connection
//	(one space), "<local>" for a listener, each in netip.AddrPort.String form
//	("10.0.0.1:80", "[::1]:80"). A listener on every address reports the
//	unspecified address ("0.0.0.0:80").
//	Host side: Conn.LocalAddr, Conn.RemoteAddr, Listener.Addr; for a UDP
//	socket UDPConn.LocalAddr, plus UDPConn.RemoteAddr once connected
//	("<local>" alone when it is not).
//	Errors: EBADF, ENOTSOCK, ERANGE (buf_len too small; the guest passes 128),
//	EFAULT.
//
// net_addrs(buf_ptr, buf_len, n_out) -> errno
//
//	Writes the calling node's own addresses on the simulated network (not
//	loopback) as text at buf_ptr, in netip.Prefix form and one space apart
//	("10.0.0.2/8"; netsim gives a node one IPv4 address, and every node is
//	on 10.0.0.0/8), no terminator, and the length (u32 little-endian) at
//	n_out. The guest builds eth0 from it (see Interfaces).
//	Host side: netsim.Network.Hosts()'s address of the calling host.
//	Errors: ENOSYS (the node has no network), ERANGE (buf_len too small;
//	the guest passes 256), EFAULT.
//
// The four UDP calls below are imported only by guests built with
// Options.UDP.
//
// sock_udp_bind(ip_ptr, ip_len, port, fd_out) -> errno
//
//	Open a UDP socket bound to ip:port (ip as for sock_listen; port 0 picks
//	an ephemeral port, from a counter apart from TCP's). Writes the new fd
//	at fd_out. net.ListenPacket/ListenUDP bind their address; DialUDP binds
//	the unspecified address and port 0, then calls sock_udp_connect.
//	Host side: netsim.Network.ListenUDP(host, ip, port).
//	Errors: EADDRINUSE, EADDRNOTAVAIL, EINVAL, EMFILE, EFAULT.
//
// sock_udp_connect(fd, ip_ptr, ip_len, port) -> errno
//
//	Set the UDP socket's peer (0 ip bytes means loopback): fd_write sends to
//	it and only its datagrams are received.
//	Host side: netsim.UDPConn.Connect(ip, port).
//	Errors: EBADF, ENOTSOCK (not a UDP socket), EINVAL (port 0 or out of
//	range, bad ip_len), EFAULT.
//
// sock_send_to(fd, buf_ptr, buf_len, ip_ptr, ip_len, port, n_out) -> errno
//
//	Send buf_len bytes at buf_ptr as one datagram to ip:port (0 ip bytes
//	means loopback) and write the count sent (u32) at n_out. buf_ptr may be
//	anything when buf_len is 0. Never blocks.
//	Host side: netsim.UDPConn.SendTo(data, addr).
//	Errors: EBADF, ENOTSOCK, EMSGSIZE (over 65507 bytes), EINVAL (port 0,
//	bad ip_len), EFAULT.
//
// sock_recv_from(fd, buf_ptr, buf_len, addr_ptr, addr_len, n_out, addr_n_out) -> errno
//
//	Take the oldest queued datagram: copy at most buf_len bytes of it to
//	buf_ptr (the rest is discarded), write the count copied at n_out, and
//	write the sender's address as text ("10.0.0.2:53", netip.AddrPort form,
//	no terminator) at addr_ptr and its length at addr_n_out. EAGAIN when
//	none is queued; the guest then waits for FD_READ in poll_oneoff.
//	Host side: netsim.UDPConn.RecvFrom(buf).
//	Errors: EAGAIN, EBADF, ENOTSOCK, ERANGE (addr_len too small; the guest
//	passes 64), EFAULT.
//
// # Standard WASI calls on socket fds (wasi_snapshot_preview1)
//
// Socket fds are always non-blocking on the host side: no call may block. The
// guest never sets O_NONBLOCK on them; it relies on EAGAIN.
//
//   - fd_read: Conn.Read into the iovecs in order, stopping at the first short
//     read. EAGAIN only when no byte was read; nread 0 with errno 0 is EOF.
//     On a UDP socket (Read on a DialUDP conn): one UDPConn.RecvFrom into
//     the iovecs taken as one buffer; nread 0 is an empty datagram, not EOF.
//   - fd_write: Conn.Write from the iovecs in order, stopping at the first
//     short write. EAGAIN only when no byte was written. On a UDP socket:
//     one UDPConn.Send of the iovecs joined (EDESTADDRREQ if not connected).
//   - sock_accept(fd, flags, fd_out): Listener.Accept; flags are ignored.
//   - sock_shutdown(fd, how): how bit 0 (1) is SHUT_RD, bit 1 (2) is SHUT_WR:
//     Conn.Shutdown(how&1 != 0, how&2 != 0). ENOTCONN on a listener.
//   - fd_close: Conn.Close, Listener.Close or UDPConn.Close. When a node's process exits,
//     close its socket fds in fd order (FIN, or RST over unread data); when
//     it crashes, call netsim.Network.HostDown instead.
//   - fd_fdstat_get: filetype SOCKET_STREAM (6), SOCKET_DGRAM (5) for UDP.
//   - sock_shutdown on a UDP socket: ENOTCONN; sock_accept: EINVAL;
//     sock_status: 0.
//   - poll_oneoff: an FD_READ subscription is ready when ReadableAt (Conn,
//     Listener or UDPConn) is in [0, now], FD_WRITE when WritableAt is. Otherwise the
//     node sleeps until the smallest non-negative time among them (or a clock
//     subscription), and -1 means "until some other node acts". Report ready
//     socket events with error 0 and no hangup flag: Go's netpoll turns an
//     event error into ErrNotPollable; the real error comes from the next
//     fd_read, fd_write or sock_status.
//
// # Name resolution
//
// On wasip1, Go has no cgo resolver, so it resolves names itself: first
// /etc/hosts, then DNS over UDP unless /etc/nsswitch.conf says "hosts: files".
// Both are read with ordinary path_open calls on absolute paths, so the host
// must serve the files that EtcFiles returns at /etc (the WASI layer mounts a
// read-only /etc inside the node's root). With them, node names and localhost
// resolve to their addresses (LookupHost, LookupIP, LookupNetIP, LookupCNAME,
// ResolveTCPAddr, Dial), a node's address resolves back to its name
// (LookupAddr), and an unknown name fails at once with "no such host".
//
// LookupTXT, LookupSRV, LookupMX and LookupNS do not read /etc/hosts or
// nsswitch.conf: Go sends them to the DNS servers of /etc/resolv.conf, by
// default 127.0.0.1:53 and [::1]:53, over UDP. Nothing answered there on the
// simulated network, so each waited 5s per server and attempt: 20 virtual
// seconds for gRPC's first `LookupTXT _grpc_config.<name>`. The hook in
// Resolver.exchange now answers every query at once with NXDOMAIN, the
// question echoed, as a real resolver answers for a name it does not know.
// Go's own code handles that answer as it would one from the network, so
// callers get what they get on Linux: a *net.DNSError with IsNotFound set,
// "lookup <name> on 127.0.0.1:53: no such host". No virtual time passes and
// no traffic is sent.
//
// Why answer in Resolver.exchange: it is the one function through which
// every query of Go's resolver goes, whatever the Lookup function, the
// record type or PreferGo (wasip1 has no cgo resolver). Answering there
// rather than higher up (in Resolver.lookup or tryOneName, say) leaves
// search lists, the handling of the reply code and error reporting to Go,
// unchanged. A DNS server on the simulated network would need a node and an
// address of its own, would put every lookup through latency, partitions
// and clogs (a partitioned node would wait out the same timeouts), and would
// add traffic to the trace, all to say that the name does not exist. A
// Resolver with its own Dial is left alone: it asked for a particular
// server, which may be a DNS server the user runs on a node, and its
// queries go over the network like any other traffic.
//
// # Interfaces
//
// On wasip1 Go reports no interfaces at all. The overlay reports two, as a
// container on Linux would: lo (index 1, MTU 65536, up|loopback|running,
// 127.0.0.1/8 and ::1/128) and eth0 (index 2, MTU 1500,
// up|broadcast|multicast|running, the node's address from net_addrs and a
// MAC derived from it: 02:00 and the address's last four bytes, so
// 10.0.0.2 has 02:00:0a:00:00:02). net.Interfaces, InterfaceByIndex,
// InterfaceByName, Interface.Addrs and net.InterfaceAddrs read this table;
// InterfaceAddrs lists IPv4 before IPv6, loopback first, as Linux does.
// Multicast addresses stay empty.
package netoverlay

import (
	"bytes"
	_ "embed"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// TestedWith is the Go release the anchors were taken from.
const TestedWith = "go1.26"

//go:embed net_seedfall_wasip1.go.in
var seedfallGo []byte

//go:embed net_seedfall_udp_wasip1.go.in
var seedfallUDPGo []byte

//go:embed net_seedfall_dnsif_wasip1.go.in
var seedfallDNSIfGo []byte

// hook inserts text after the one line of a file that equals anchor (leading
// and trailing blanks ignored).
type hook struct {
	anchor string
	insert string
}

type patch struct {
	file  string // GOROOT-relative, slash-separated
	hooks []hook
}

// returnNil makes a socket-option setter succeed on a host-owned socket.
const returnNil = "\tif fd.fakeNetFD == nil {\n\t\treturn nil // seedfall: socket options mean nothing on the simulated network\n\t}\n"

var patches = []patch{
	{"src/net/net_fake.go", []hook{{
		anchor: "func socket(ctx context.Context, net string, family, sotype, proto int, ipv6only bool, laddr, raddr sockaddr, ctrlCtxFn func(context.Context, string, string, syscall.RawConn) error) (*netFD, error) {",
		insert: "\t// seedfall: TCP goes to the simulated network (net_seedfall_wasip1.go).\n" +
			"\tif fd, handled, err := seedfallSocket(ctx, net, family, sotype, laddr, raddr); handled {\n" +
			"\t\treturn fd, err\n\t}\n",
	}}},
	{"src/net/fd_fake.go", []hook{{
		anchor: `netfd = newFD("tcp", d)`,
		insert: "\tseedfallAccepted(fd, netfd) // seedfall: local and remote addresses from the host\n",
	}}},
	{"src/net/sockopt_fake.go", []hook{
		{"func setReadBuffer(fd *netFD, bytes int) error {", returnNil},
		{"func setWriteBuffer(fd *netFD, bytes int) error {", returnNil},
		{"func setKeepAlive(fd *netFD, keepalive bool) error {", returnNil},
		{"func setLinger(fd *netFD, sec int) error {", returnNil},
	}},
	{"src/net/tcpsockopt_stub.go", []hook{
		{"func setNoDelay(fd *netFD, noDelay bool) error {", returnNil},
		{"func setKeepAliveIdle(fd *netFD, d time.Duration) error {", returnNil},
		{"func setKeepAliveInterval(fd *netFD, d time.Duration) error {", returnNil},
		{"func setKeepAliveCount(fd *netFD, n int) error {", returnNil},
	}},
	{"src/net/dnsclient_unix.go", []hook{{
		anchor: "q.Class = dnsmessage.ClassINET",
		insert: "\t// seedfall: no DNS server on the simulated network; the name does not exist (net_seedfall_dnsif_wasip1.go).\n" +
			"\tif p, h, ok := seedfallExchange(r, q); ok {\n\t\treturn p, h, nil\n\t}\n",
	}}},
	{"src/net/interface_stub.go", []hook{
		{"func interfaceTable(ifindex int) ([]Interface, error) {", "\treturn seedfallInterfaceTable(ifindex) // seedfall: lo and eth0\n"},
		{"func interfaceAddrTable(ifi *Interface) ([]Addr, error) {", "\treturn seedfallInterfaceAddrTable(ifi) // seedfall: the node's addresses\n"},
	}},
}

// NewFile is the GOROOT-relative path of the file the overlay adds.
const NewFile = "src/net/net_seedfall_wasip1.go"

// NewUDPFile is the GOROOT-relative path of the file an overlay with
// Options.UDP adds.
const NewUDPFile = "src/net/net_seedfall_udp_wasip1.go"

// NewDNSIfFile is the GOROOT-relative path of the file with the DNS answer
// and the interface table, which every overlay adds.
const NewDNSIfFile = "src/net/net_seedfall_dnsif_wasip1.go"

// Options selects the optional parts of the overlay.
type Options struct {
	// UDP routes UDP sockets (net.ListenPacket, ListenUDP, DialUDP) through
	// the simulated network. The guest then imports sock_udp_bind,
	// sock_udp_connect, sock_send_to and sock_recv_from from the host, so
	// turn it on only once the WASI layer exports them: a guest that
	// imports a function the host lacks fails to instantiate. Without it UDP
	// stays on Go's in-process fake network.
	UDP bool
}

// Files returns the overlay without optional parts: FilesWith(goroot,
// Options{}).
func Files(goroot string) (map[string][]byte, error) { return FilesWith(goroot, Options{}) }

// FilesWith returns the overlay for `go build -overlay`, keyed by
// GOROOT-relative slash-separated path: the patched copies of package net's
// files, the added NewFile and NewDNSIfFile, and NewUDPFile with opts.UDP.
// The caller writes each value to a file and maps filepath.Join(goroot, key)
// to it in the overlay's "Replace" table.
//
// It fails, naming the Go version and the file, when the installed Go's
// sources do not have the lines the patches hook onto.
func FilesWith(goroot string, opts Options) (map[string][]byte, error) {
	version := goVersion(goroot)
	out := make(map[string][]byte, len(patches)+3)
	for _, p := range patches {
		src, err := os.ReadFile(filepath.Join(goroot, filepath.FromSlash(p.file)))
		if err != nil {
			return nil, fmt.Errorf("net overlay: %s: cannot read %s: %v (is %s a Go installation?)", version, p.file, err, goroot)
		}
		patched, err := apply(src, p.hooks)
		if err != nil {
			return nil, fmt.Errorf("net overlay: %s: %s: %v; seedfall's net overlay was made for %s: build with that Go, or set net_overlay to false", version, p.file, err, TestedWith)
		}
		out[p.file] = patched
	}
	out[NewFile] = bytes.Clone(seedfallGo)
	out[NewDNSIfFile] = bytes.Clone(seedfallDNSIfGo)
	if opts.UDP {
		out[NewUDPFile] = bytes.Clone(seedfallUDPGo)
	}
	return out, nil
}

// apply inserts every hook after its anchor line. Each anchor must occur
// exactly once in the original source.
func apply(src []byte, hooks []hook) ([]byte, error) {
	if bytes.Contains(src, []byte("seedfall")) {
		return nil, fmt.Errorf("already patched by seedfall (the GOROOT itself was modified)")
	}
	lines := strings.SplitAfter(string(src), "\n")
	after := make(map[int]string, len(hooks)) // line index -> text to insert
	for _, h := range hooks {
		at, count := -1, 0
		for i, l := range lines {
			if strings.TrimSpace(l) == h.anchor {
				at, count = i, count+1
			}
		}
		if count != 1 {
			return nil, fmt.Errorf("the line `%s` appears %d times, want exactly once", h.anchor, count)
		}
		after[at] = h.insert
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if ins, ok := after[i]; ok {
			if !strings.HasSuffix(l, "\n") {
				b.WriteString("\n")
			}
			b.WriteString(ins)
		}
	}
	return []byte(b.String()), nil
}

// goVersion reads the release from GOROOT/VERSION ("go1.26.8").
func goVersion(goroot string) string {
	b, err := os.ReadFile(filepath.Join(goroot, "VERSION"))
	if err != nil {
		return "unknown Go version"
	}
	v, _, _ := strings.Cut(string(b), "\n")
	if v = strings.TrimSpace(v); v == "" {
		return "unknown Go version"
	}
	return v
}

// EtcFiles returns the files the host serves in the guest's read-only /etc,
// keyed by file name: "hosts" maps localhost and every node name to
// its address; "nsswitch.conf" tells Go to resolve from files only, so that
// an unknown name fails at once instead of trying DNS over the fake network.
func EtcFiles(names []string, addrs []netip.Addr) (map[string][]byte, error) {
	if len(names) != len(addrs) {
		return nil, fmt.Errorf("net overlay: %d node names but %d addresses", len(names), len(addrs))
	}
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n")
	for i, name := range names {
		if name == "" || strings.ContainsAny(name, " \t\r\n#") {
			return nil, fmt.Errorf("net overlay: node name %q cannot be a host name: use letters, digits, '-' and '.'", name)
		}
		fmt.Fprintf(&b, "%s\t%s\n", addrs[i], name)
	}
	return map[string][]byte{
		"hosts":         []byte(b.String()),
		"nsswitch.conf": []byte("hosts: files\n"),
	}, nil
}
