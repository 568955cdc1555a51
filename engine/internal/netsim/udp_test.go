package netsim

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

func (w *world) udp(host int, addr string, port int) *UDPConn {
	w.t.Helper()
	var a netip.Addr
	if addr != "" {
		a = ip(addr)
	}
	u, e := w.n.ListenUDP(host, a, port)
	if e != 0 {
		w.t.Fatalf("ListenUDP(%d, %q, %d) = %v", host, addr, port, e)
	}
	return u
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func (w *world) sendTo(u *UDPConn, s, to string) {
	w.t.Helper()
	var dst netip.AddrPort
	if to != "" {
		dst = ap(to)
	}
	if n, e := u.SendTo([]byte(s), dst); e != 0 || n != len(s) {
		w.t.Fatalf("SendTo(%q, %s) = %d, %v", s, to, n, e)
	}
}

// recv returns the queued datagrams as "payload<from", joined by spaces.
func recv(u *UDPConn) string {
	var out []string
	buf := make([]byte, 64)
	for {
		n, from, e := u.RecvFrom(buf)
		if e != 0 {
			return strings.Join(out, " ")
		}
		out = append(out, string(buf[:n])+"<"+from.String())
	}
}

func TestUDPSendReceive(t *testing.T) {
	w := newWorld(t, "n1", "n2")
	a := w.udp(0, "", 0)
	b := w.udp(1, "", 53)
	if a.LocalAddr() != ap("0.0.0.0:32768") || b.LocalAddr() != ap("0.0.0.0:53") {
		t.Errorf("addresses %v %v", a.LocalAddr(), b.LocalAddr())
	}
	w.draws = []int64{2000, 1000}
	w.sendTo(a, "one", "10.0.0.2:53")
	w.sendTo(a, "two", "10.0.0.2:53")
	if r := b.ReadableAt(); r != 1000 {
		t.Errorf("ReadableAt = %d, want the earliest arrival 1000", r)
	}
	w.now = 999
	if _, _, e := b.RecvFrom(make([]byte, 8)); e != errno.EAGAIN {
		t.Errorf("RecvFrom before any arrival = %v, want EAGAIN", e)
	}
	w.now = 1000
	if got := recv(b); got != "two<10.0.0.1:32768" {
		t.Errorf("at 1000 got %q: datagrams may overtake each other", got)
	}
	w.now = 2000
	if got := recv(b); got != "one<10.0.0.1:32768" {
		t.Errorf("at 2000 got %q", got)
	}
	// Replies go back to the sender's address; a short buffer truncates.
	if n, e := b.SendTo([]byte("answer"), ap("10.0.0.1:32768")); n != 6 || e != 0 {
		t.Fatal(n, e)
	}
	w.now = 3000
	buf := make([]byte, 3)
	if n, from, e := a.RecvFrom(buf); n != 3 || string(buf) != "ans" || from != ap("10.0.0.2:53") || e != 0 {
		t.Errorf("RecvFrom into 3 bytes = %d %q %v %v", n, buf, from, e)
	}
	if _, _, e := a.RecvFrom(buf); e != errno.EAGAIN {
		t.Errorf("the rest of a truncated datagram was kept (%v)", e)
	}
	if r := a.WritableAt(); r != 3000 {
		t.Errorf("WritableAt = %d, want now", r)
	}
}

func TestUDPErrorsAndPorts(t *testing.T) {
	w := newWorld(t, "n1", "n2")
	a := w.udp(0, "", 9000)
	w.listen(0, "", 9001)
	tests := []struct {
		name string
		got  errno.Errno
		want errno.Errno
	}{
		{"port taken", second(w.n.ListenUDP(0, netip.Addr{}, 9000)), errno.EADDRINUSE},
		{"specific under any", second(w.n.ListenUDP(0, ip("10.0.0.1"), 9000)), errno.EADDRINUSE},
		{"TCP port is free for UDP", second(w.n.ListenUDP(0, netip.Addr{}, 9001)), 0},
		{"other host's address", second(w.n.ListenUDP(0, ip("10.0.0.2"), 1)), errno.EADDRNOTAVAIL},
		{"port out of range", second(w.n.ListenUDP(0, netip.Addr{}, 70000)), errno.EINVAL},
		{"too big", second(a.SendTo(make([]byte, MaxDatagram+1), ap("10.0.0.2:1"))), errno.EMSGSIZE},
		{"no address", second(a.Send([]byte("x"))), errno.EDESTADDRREQ},
		{"port 0", second(a.SendTo([]byte("x"), ap("10.0.0.2:0"))), errno.EINVAL},
		{"largest", second(a.SendTo(make([]byte, MaxDatagram), ap("10.0.0.2:1"))), 0},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	a.Close()
	a.Close()
	if _, e := a.Send([]byte("x")); e != errno.EBADF {
		t.Errorf("Send after Close = %v", e)
	}
	if _, _, e := a.RecvFrom(nil); e != errno.EBADF {
		t.Errorf("RecvFrom after Close = %v", e)
	}
	if _, e := w.n.ListenUDP(0, netip.Addr{}, 9000); e != 0 {
		t.Errorf("port not freed by Close: %v", e)
	}
}

func second[T any](_ T, e errno.Errno) errno.Errno { return e }

func TestUDPConnect(t *testing.T) {
	w := newWorld(t, "n1", "n2", "n3")
	a := w.udp(0, "", 0)
	b := w.udp(1, "", 53)
	c := w.udp(2, "", 0)
	if e := a.Connect(ip("10.0.0.2"), 53); e != 0 {
		t.Fatal(e)
	}
	if a.LocalAddr() != ap("10.0.0.1:32768") || a.RemoteAddr() != ap("10.0.0.2:53") {
		t.Errorf("connected addresses %v %v", a.LocalAddr(), a.RemoteAddr())
	}
	if n, e := a.Send([]byte("hi")); n != 2 || e != 0 {
		t.Fatal(n, e)
	}
	w.sendTo(b, "from b", "10.0.0.1:32768")
	w.sendTo(c, "from c", "10.0.0.1:32768")
	w.now = 5000
	if got := recv(b); got != "hi<10.0.0.1:32768" {
		t.Errorf("b got %q", got)
	}
	if got := recv(a); got != "from b<10.0.0.2:53" {
		t.Errorf("connected a got %q, want only its peer's datagram", got)
	}
	if !slices.ContainsFunc(w.log, func(s string) bool { return strings.Contains(s, "h2 udp_drop") && strings.HasSuffix(s, "no socket") }) {
		t.Errorf("c's datagram to a connected socket was not dropped as 'no socket':\n%s", strings.Join(w.log, "\n"))
	}
}

// A datagram to a port nobody has bound (when it arrives) is dropped; so is
// one that finds a full receive queue.
func TestUDPDropsNoSocketAndFullQueue(t *testing.T) {
	w := newWorld(t, "n1", "n2")
	a := w.udp(0, "", 0)
	w.sendTo(a, "early", "10.0.0.2:53")
	w.now = 1000
	b := w.udp(1, "", 53)
	if got := recv(b); got != "" {
		t.Errorf("a socket bound after the arrival got %q", got)
	}
	big := make([]byte, 60000)
	for range 4 {
		if _, e := a.SendTo(big, ap("10.0.0.2:53")); e != 0 {
			t.Fatal(e)
		}
	}
	w.now = 3000
	n := 0
	for {
		if _, _, e := b.RecvFrom(make([]byte, 1)); e != 0 {
			break
		}
		n++
	}
	if n != UDPRecvBuffer/60000 {
		t.Errorf("%d datagrams of 60000 bytes queued, want %d", n, UDPRecvBuffer/60000)
	}
	drops := 0
	for _, e := range w.log {
		if strings.Contains(e, "udp_drop") && strings.HasSuffix(e, "queue full") {
			drops++
		}
	}
	if drops != 4-n {
		t.Errorf("%d 'queue full' drops, want %d", drops, 4-n)
	}
}

// Each fault decides a datagram's fate: partitions, stop and jam drop it,
// also when they begin while it travels; slow delays it.
func TestUDPUnderFaults(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(n *Network)
		start    int64 // when the fault begins (the datagram leaves at 1000)
		arriveAt int64 // -1: dropped
	}{
		{"no fault", func(n *Network) {}, 0, 2000},
		{"partition", func(n *Network) { n.Partition([][]int{{0}, {1}}) }, 0, -1},
		{"partition while in flight", func(n *Network) { n.Partition([][]int{{0}, {1}}) }, 1500, -1},
		{"stop", func(n *Network) { n.ClogLink(0, 1, ClogStop, 0) }, 0, -1},
		{"jam", func(n *Network) { n.ClogHost(1, DirIn, ClogJam, 0) }, 0, -1},
		{"stop the other way", func(n *Network) { n.ClogLink(1, 0, ClogStop, 0) }, 0, 2000},
		{"slow", func(n *Network) { n.ClogHost(0, DirOut, ClogSlow, 700) }, 0, 2700},
		{"slow begins in flight", func(n *Network) { n.ClogHost(0, DirOut, ClogSlow, 700) }, 1500, 2000},
		{"partition, receiver fault-free", func(n *Network) {
			n.SetFaultFree(1, true)
			n.Partition([][]int{{0}, {1}})
		}, 0, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "n1", "n2")
			a, b := w.udp(0, "", 0), w.udp(1, "", 53)
			w.now = tt.start
			if tt.start == 0 {
				tt.fault(w.n)
			}
			w.now = 1000
			w.sendTo(a, "x", "10.0.0.2:53")
			if tt.start > 1000 {
				w.now = tt.start
				tt.fault(w.n)
			}
			if tt.arriveAt < 0 {
				if r := b.ReadableAt(); r != -1 {
					t.Errorf("ReadableAt = %d for a dropped datagram", r)
				}
				w.now = 100000
				if got := recv(b); got != "" {
					t.Errorf("got %q, want the datagram dropped", got)
				}
				if !strings.HasSuffix(w.log[len(w.log)-1], "udp_drop 10.0.0.1:32768 -> 10.0.0.2:53 1B #1 cut") {
					t.Errorf("last event %q, want a 'cut' drop", w.log[len(w.log)-1])
				}
				return
			}
			if r := b.ReadableAt(); r != tt.arriveAt {
				t.Errorf("ReadableAt = %d, want %d", r, tt.arriveAt)
			}
			w.now = tt.arriveAt
			if got := recv(b); got != "x<10.0.0.1:32768" {
				t.Errorf("got %q at %d", got, tt.arriveAt)
			}
		})
	}
}

// Datagrams are numbered per sending host from 1, across restarts and
// sockets; the Datagram hook sees every number and its loss and duplicate
// choices are applied, each copy with its own latency draw.
func TestUDPLossDupNumbering(t *testing.T) {
	type call struct {
		from, to int
		seq      uint64
	}
	var calls []call
	w := newWorld(t, "n1", "n2")
	w.n.datagram = func(from, to int, seq uint64) (bool, bool) {
		calls = append(calls, call{from, to, seq})
		return seq == 2, seq == 3 // lose #2, duplicate #3
	}
	a, b := w.udp(0, "", 0), w.udp(1, "", 53)
	w.draws = []int64{1000, 3000, 5000} // #1; #3 and its copy (#2 takes none)
	for _, s := range []string{"p1", "p2", "p3"} {
		w.sendTo(a, s, "10.0.0.2:53")
	}
	w.n.HostDown(0)
	a = w.udp(0, "", 0)
	w.sendTo(a, "p4", "10.0.0.9:1") // no such host: numbered all the same
	w.sendTo(b, "r1", "10.0.0.1:1")
	want := []call{{0, 1, 1}, {0, 1, 2}, {0, 1, 3}, {0, -1, 4}, {1, 0, 1}}
	if !slices.Equal(calls, want) {
		t.Errorf("hook calls %v, want %v", calls, want)
	}
	w.now = 3000
	if got := recv(b); got != "p1<10.0.0.1:32768 p3<10.0.0.1:32768" {
		t.Errorf("at 3000 got %q", got)
	}
	w.now = 5000
	if got := recv(b); got != "p3<10.0.0.1:32768" {
		t.Errorf("at 5000 got %q, want the duplicate", got)
	}
	var events []string
	for _, e := range w.log {
		if strings.Contains(e, "udp_drop") || strings.Contains(e, "udp_dup") {
			events = append(events, e)
		}
	}
	wantEv := []string{
		"0 h0 udp_drop 10.0.0.1:32768 -> 10.0.0.2:53 2B #2 loss",
		"0 h0 udp_dup 10.0.0.1:32768 -> 10.0.0.2:53 2B #3 @5000",
		"0 h0 udp_drop 10.0.0.1:32769 -> 10.0.0.9:1 2B #4 no host",
		"1000 h1 udp_drop 10.0.0.2:53 -> 10.0.0.1:1 2B #1 no socket",
	}
	if !slices.Equal(events, wantEv) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(wantEv, "\n"))
	}
}

func TestUDPLoopback(t *testing.T) {
	w := newWorld(t, "n1", "n2")
	w.n.ClogHost(0, DirBoth, ClogStop, 0)
	a, b := w.udp(0, "127.0.0.1", 0), w.udp(0, "", 7)
	w.sendTo(a, "self", "127.0.0.1:7")
	w.now = 1000
	if got := recv(b); got != "self<127.0.0.1:32768" {
		t.Errorf("loopback got %q", got)
	}
}

// chatter drives TCP and UDP traffic under every kind of fault from one
// seed and returns the event log.
func chatter(t *testing.T, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 7))
	w := newWorld(t, "n1", "n2", "n3", "n4")
	w.n.latency = func(from, to int) int64 { return 100 + r.Int64N(900) }
	w.n.datagram = func(from, to int, seq uint64) (bool, bool) { return r.IntN(10) == 0, r.IntN(10) == 0 }
	ls := make([]*Listener, 4)
	us := make([]*UDPConn, 4)
	for h := range 4 {
		ls[h] = w.listen(h, "", 80)
		us[h] = w.udp(h, "", 53)
	}
	var conns []*Conn
	var clogs []ClogID
	buf := make([]byte, 100)
	for step := range 400 {
		w.now += r.Int64N(300)
		h := r.IntN(4)
		switch r.IntN(10) {
		case 0:
			if c, e := w.n.Dial(h, netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + r.IntN(4))}), 80); e == 0 {
				conns = append(conns, c)
			}
		case 1:
			if c, e := ls[h].Accept(); e == 0 {
				conns = append(conns, c)
			}
		case 2, 3:
			if len(conns) > 0 {
				conns[r.IntN(len(conns))].Write([]byte(fmt.Sprint("m", step)))
			}
		case 4:
			for _, c := range conns {
				c.Read(buf)
			}
			for _, u := range us {
				u.RecvFrom(buf)
			}
		case 5, 6:
			us[h].SendTo([]byte(fmt.Sprint("d", step)), netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(1 + r.IntN(4))}), 53))
		case 7:
			topo := Topologies[r.IntN(len(Topologies))]
			g, err := Groups(topo, []int{0, 1, 2, 3}, r.IntN)
			if err != nil {
				t.Fatal(err)
			}
			w.n.Partition(g)
		case 8:
			if r.IntN(2) == 0 {
				clogs = append(clogs, w.n.ClogHost(h, Dir(1+r.IntN(3)), ClogMode(1+r.IntN(3)), r.Int64N(500)))
			} else {
				clogs = append(clogs, w.n.ClogLink(h, r.IntN(4), ClogMode(1+r.IntN(3)), r.Int64N(500)))
			}
		case 9:
			switch r.IntN(4) {
			case 0:
				w.n.HealPartition()
			case 1:
				if len(clogs) > 0 {
					w.n.Unclog(clogs[len(clogs)-1])
					clogs = clogs[:len(clogs)-1]
				}
			case 2:
				w.n.ResetHost(h)
			case 3:
				w.n.HealAll()
			}
		}
	}
	return w.log
}

func TestFaultsDeterministic(t *testing.T) {
	a, b := chatter(t, 1), chatter(t, 1)
	if !slices.Equal(a, b) {
		t.Fatalf("same draws, different logs (%d and %d events)", len(a), len(b))
	}
	if slices.Equal(a, chatter(t, 2)) {
		t.Errorf("seeds 1 and 2 gave the same log")
	}
	kinds := map[string]bool{}
	for _, e := range a {
		kinds[strings.Fields(e)[2]] = true
	}
	for _, k := range []EventKind{EvPartition, EvHeal, EvClog, EvUnclog, EvHold, EvRelease, EvUDPSend, EvUDPDrop, EvUDPDup, EvData, EvReset} {
		if !kinds[string(k)] {
			t.Errorf("the scenario never produced %q: it does not test what it claims", k)
		}
	}
}
