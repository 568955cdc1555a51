package netsim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// world is a tiny driver: a settable clock and scripted latency draws.
type world struct {
	t     *testing.T
	now   int64
	draws []int64  // next draws, used first
	def   int64    // draw once the script is used up
	calls [][2]int // (from, to) of every draw, in order
	log   []string
	n     *Network
}

func newWorld(t *testing.T, hosts ...string) *world {
	t.Helper()
	w := &world{t: t, def: 1000}
	w.n = New(Config{
		Now: func() int64 { return w.now },
		Latency: func(from, to int) int64 {
			w.calls = append(w.calls, [2]int{from, to})
			if len(w.draws) > 0 {
				d := w.draws[0]
				w.draws = w.draws[1:]
				return d
			}
			return w.def
		},
		Trace: func(e Event) { w.log = append(w.log, e.String()) },
	})
	for _, h := range hosts {
		w.n.AddHost(h)
	}
	return w
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func (w *world) listen(host int, addr string, port int) *Listener {
	w.t.Helper()
	var a netip.Addr
	if addr != "" {
		a = ip(addr)
	}
	l, e := w.n.Listen(host, a, port)
	if e != 0 {
		w.t.Fatalf("listen(%d, %q, %d) = %v", host, addr, port, e)
	}
	return l
}

func (w *world) dial(host int, addr string, port int) *Conn {
	w.t.Helper()
	c, e := w.n.Dial(host, ip(addr), port)
	if e != 0 {
		w.t.Fatalf("dial(%d, %q, %d) = %v", host, addr, port, e)
	}
	return c
}

// connect dials host from to 10.0.0.(to+1):80 (listener l) with the given
// SYN and SYN-ACK draws and returns both ends once connected.
func (w *world) connect(l *Listener, from int, syn, synack int64) (client, server *Conn) {
	w.t.Helper()
	w.draws = append(w.draws, syn, synack)
	client = w.dial(from, l.n.hosts[l.host].addr.String(), int(l.addr.Port()))
	w.now = client.replyAt
	server, e := l.Accept()
	if e != 0 {
		w.t.Fatalf("accept: %v", e)
	}
	if st := client.Status(); st != 0 {
		w.t.Fatalf("client status after handshake = %v", st)
	}
	return client, server
}

func (w *world) write(c *Conn, s string) {
	w.t.Helper()
	n, e := c.Write([]byte(s))
	if e != 0 || n != len(s) {
		w.t.Fatalf("write %q = %d, %v", s, n, e)
	}
}

// readAll reads whatever has arrived, up to the first error.
func readAll(c *Conn) (string, errno.Errno) {
	var out []byte
	buf := make([]byte, 7) // small, so reads split segments
	for {
		n, e := c.Read(buf)
		out = append(out, buf[:n]...)
		if e != 0 || n == 0 {
			return string(out), e
		}
	}
}

func TestHosts(t *testing.T) {
	w := newWorld(t)
	for i, name := range []string{"n1", "n2", "client"} {
		want := netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)})
		if got := w.n.AddHost(name); got != want {
			t.Errorf("AddHost(%q) = %v, want %v", name, got, want)
		}
	}
	names, addrs := w.n.Hosts()
	if !slices.Equal(names, []string{"n1", "n2", "client"}) || addrs[2] != ip("10.0.0.3") {
		t.Errorf("Hosts() = %v %v", names, addrs)
	}
}

func TestHandshake(t *testing.T) {
	tests := []struct {
		name        string
		syn, synack int64
	}{
		{"symmetric", 1000, 1000},
		{"slow SYN", 5000, 10},
		{"zero latency", 0, 0},
		{"negative draws count as zero", -50, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "server", "client")
			w.now = 100
			l := w.listen(0, "", 80)
			w.draws = []int64{tt.syn, tt.synack}
			c := w.dial(1, "10.0.0.1", 80)
			synAt := 100 + max(tt.syn, 0)
			replyAt := synAt + max(tt.synack, 0)

			if got := c.Status(); got != errno.EINPROGRESS && replyAt > 100 {
				t.Errorf("status while connecting = %v, want EINPROGRESS", got)
			}
			if got := c.WritableAt(); got != replyAt {
				t.Errorf("client WritableAt = %d, want %d", got, replyAt)
			}
			if got := l.ReadableAt(); got != synAt {
				t.Errorf("listener ReadableAt = %d, want %d", got, synAt)
			}
			if synAt > 100 {
				if _, e := l.Accept(); e != errno.EAGAIN {
					t.Errorf("accept before the SYN arrives = %v, want EAGAIN", e)
				}
			}
			if replyAt > 100 {
				if _, e := c.Write([]byte("x")); e != errno.EAGAIN {
					t.Errorf("write while connecting = %v, want EAGAIN", e)
				}
			}

			w.now = synAt
			s, e := l.Accept()
			if e != 0 {
				t.Fatalf("accept at SYN arrival = %v", e)
			}
			if s.LocalAddr() != netip.MustParseAddrPort("10.0.0.1:80") ||
				s.RemoteAddr() != netip.MustParseAddrPort("10.0.0.2:32768") {
				t.Errorf("accepted conn %v <- %v", s.LocalAddr(), s.RemoteAddr())
			}
			if c.LocalAddr() != s.RemoteAddr() || c.RemoteAddr() != s.LocalAddr() {
				t.Errorf("client %v -> %v does not mirror server", c.LocalAddr(), c.RemoteAddr())
			}
			// The server may write at once; its data cannot overtake the SYN-ACK.
			w.draws = []int64{0}
			w.write(s, "early")
			if got := c.ReadableAt(); got != replyAt {
				t.Errorf("client ReadableAt = %d, want the SYN-ACK time %d", got, replyAt)
			}
			w.now = replyAt
			if got := c.Status(); got != 0 {
				t.Errorf("status at SYN-ACK = %v, want 0", got)
			}
			if want := [][2]int{{1, 0}, {0, 1}}; !slices.Equal(w.calls[:2], want) {
				t.Errorf("latency draws %v, want %v", w.calls, want)
			}
		})
	}
}

func TestRefused(t *testing.T) {
	tests := []struct {
		name   string
		before func(w *world) // runs at t=0, before the dial
		during func(w *world) // runs at t=500, while the SYN travels
		want   errno.Errno    // status once the answer is back
	}{
		{"nobody listens", nil, nil, errno.ECONNREFUSED},
		{"other port", func(w *world) { w.listen(0, "", 81) }, nil, errno.ECONNREFUSED},
		{"listener closed before the SYN arrives",
			func(w *world) { w.listen(0, "", 80) },
			func(w *world) { w.n.hosts[0].listeners[0].Close() }, errno.ECONNREFUSED},
		{"host down before the SYN arrives",
			func(w *world) { w.listen(0, "", 80) },
			func(w *world) { w.n.HostDown(0) }, errno.ECONNREFUSED},
		{"listener opened while the SYN travels", nil,
			func(w *world) { w.listen(0, "", 80) }, 0},
		{"loopback-only listener", func(w *world) { w.listen(0, "127.0.0.1", 80) }, nil, errno.ECONNREFUSED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "server", "client")
			if tt.before != nil {
				tt.before(w)
			}
			c := w.dial(1, "10.0.0.1", 80) // SYN at 1000, answer at 2000
			w.now = 500
			if tt.during != nil {
				tt.during(w)
			}
			if got := c.WritableAt(); got != 2000 {
				t.Errorf("WritableAt = %d, want 2000", got)
			}
			wantR := int64(2000) // a refusal makes the socket readable
			if tt.want == 0 {
				wantR = -1 // connected, and the server has sent nothing
			}
			if got := c.ReadableAt(); got != wantR {
				t.Errorf("ReadableAt while the SYN travels = %d, want %d", got, wantR)
			}
			w.now = 1999
			if got := c.Status(); got != errno.EINPROGRESS {
				t.Errorf("status before the answer = %v, want EINPROGRESS", got)
			}
			w.now = 2000
			if got := c.Status(); got != tt.want {
				t.Errorf("status = %v, want %v", got, tt.want)
			}
			if tt.want == errno.ECONNREFUSED {
				if _, e := c.Write([]byte("x")); e != errno.ECONNREFUSED {
					t.Errorf("write after refusal = %v", e)
				}
				if _, e := c.Read(make([]byte, 1)); e != errno.ECONNREFUSED {
					t.Errorf("read after refusal = %v", e)
				}
				if got := c.ReadableAt(); got != 2000 {
					t.Errorf("ReadableAt after refusal = %d", got)
				}
			}
		})
	}
}

func TestDialErrors(t *testing.T) {
	w := newWorld(t, "a")
	tests := []struct {
		addr string
		port int
		want errno.Errno
	}{
		{"10.0.0.9", 80, errno.EHOSTUNREACH},
		{"192.168.1.1", 80, errno.EHOSTUNREACH},
		{"10.0.0.1", 70000, errno.EINVAL},
	}
	for _, tt := range tests {
		if _, e := w.n.Dial(0, ip(tt.addr), tt.port); e != tt.want {
			t.Errorf("Dial(%s:%d) = %v, want %v", tt.addr, tt.port, e, tt.want)
		}
	}
	if len(w.calls) != 0 {
		t.Errorf("failed dials drew latencies: %v", w.calls)
	}
}

func TestOrderingAndLatency(t *testing.T) {
	tests := []struct {
		name   string
		draws  []int64 // one per write
		writes []int64 // virtual time of each write
		want   []int64 // arrival of each write
	}{
		{"in order", []int64{100, 100, 100}, []int64{0, 10, 20}, []int64{100, 110, 120}},
		{"a fast segment waits for a slow one", []int64{500, 10, 10}, []int64{0, 1, 2}, []int64{500, 500, 500}},
		{"later writes overtake nothing", []int64{50, 10}, []int64{0, 100}, []int64{50, 110}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "server", "client")
			l := w.listen(0, "", 80)
			c, s := w.connect(l, 1, 1000, 1000)
			start := w.now
			w.draws = slices.Clone(tt.draws)
			for i, at := range tt.writes {
				w.now = start + at
				w.write(c, fmt.Sprintf("<%d>", i))
			}
			var got []int64
			for _, seg := range s.in {
				got = append(got, seg.at-start)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("arrivals %v, want %v", got, tt.want)
			}
			w.now = start
			if r := s.ReadableAt(); r != start+tt.want[0] {
				t.Errorf("ReadableAt = %d, want %d", r-start, tt.want[0])
			}
			w.now = start + tt.want[len(tt.want)-1]
			out, _ := readAll(s)
			if out != "<0><1><2>"[:3*len(tt.writes)] {
				t.Errorf("read %q, out of order", out)
			}
		})
	}
}

func TestReadEAGAINUntilArrival(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	t0 := w.now
	if got := s.ReadableAt(); got != -1 {
		t.Errorf("ReadableAt with nothing sent = %d, want -1", got)
	}
	w.draws = []int64{300}
	w.write(c, "hello")
	if got := s.ReadableAt(); got != t0+300 {
		t.Errorf("ReadableAt = %d, want %d", got, t0+300)
	}
	w.now = t0 + 299
	if n, e := s.Read(make([]byte, 10)); n != 0 || e != errno.EAGAIN {
		t.Errorf("read before arrival = %d, %v, want EAGAIN", n, e)
	}
	w.now = t0 + 300
	if got := s.ReadableAt(); got != w.now {
		t.Errorf("ReadableAt at arrival = %d, want now", got)
	}
	if out, e := readAll(s); out != "hello" || e != errno.EAGAIN {
		t.Errorf("read = %q, %v", out, e)
	}
	if got := s.ReadableAt(); got != -1 {
		t.Errorf("ReadableAt after draining = %d, want -1", got)
	}
}

func TestSegmentsAndBackpressure(t *testing.T) {
	tests := []struct {
		name      string
		size      int
		wantN     int
		wantDraws int
	}{
		{"one byte", 1, 1, 1},
		{"exactly one segment", SegmentSize, SegmentSize, 1},
		{"two and a bit segments", 2*SegmentSize + 1, 2*SegmentSize + 1, 3},
		{"more than the window is cut short", Window + 5000, Window, Window / SegmentSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "server", "client")
			l := w.listen(0, "", 80)
			c, s := w.connect(l, 1, 1000, 1000)
			w.calls = nil
			p := bytes.Repeat([]byte("abcdefghij"), tt.size/10+1)[:tt.size]
			n, e := c.Write(p)
			if n != tt.wantN || e != 0 {
				t.Fatalf("write(%d) = %d, %v, want %d", tt.size, n, e, tt.wantN)
			}
			if len(w.calls) != tt.wantDraws {
				t.Errorf("%d latency draws, want %d", len(w.calls), tt.wantDraws)
			}
			for _, seg := range s.in {
				if len(seg.data) > SegmentSize {
					t.Errorf("segment of %d bytes", len(seg.data))
				}
			}
			if n < Window {
				return
			}
			// The window is full: the writer waits for the reader.
			if n, e := c.Write([]byte("more")); n != 0 || e != errno.EAGAIN {
				t.Errorf("write with a full window = %d, %v, want EAGAIN", n, e)
			}
			if got := c.WritableAt(); got != -1 {
				t.Errorf("WritableAt with a full window = %d, want -1", got)
			}
			w.now += 1000
			buf := make([]byte, 10000)
			if n, _ := s.Read(buf); n != 10000 || !bytes.Equal(buf, p[:10000]) {
				t.Fatalf("reader got %d bytes", n)
			}
			if got := c.WritableAt(); got != w.now {
				t.Errorf("WritableAt after the reader read = %d, want now (%d)", got, w.now)
			}
			if n, e := c.Write(make([]byte, 20000)); n != 10000 || e != 0 {
				t.Errorf("write after reading 10000 = %d, %v, want 10000", n, e)
			}
			// Full again, and then the reader's host dies: its buffers are gone,
			// so the writer may write (into the void) until the RST arrives.
			w.n.HostDown(0)
			if got := c.WritableAt(); got != w.now {
				t.Errorf("WritableAt after the reader died = %d, want now", got)
			}
		})
	}
}

func TestCloseAndShutdown(t *testing.T) {
	type result struct {
		clientRead  string
		clientErr   errno.Errno
		serverWrite errno.Errno
	}
	tests := []struct {
		name string
		act  func(w *world, c, s *Conn)
		want result
	}{
		{
			"close after writing: data then EOF",
			func(w *world, c, s *Conn) { w.write(s, "bye"); s.Close() },
			result{"bye", 0, errno.EBADF},
		},
		{
			"shutdown write: data then EOF, the server cannot write",
			func(w *world, c, s *Conn) { w.write(s, "half"); s.Shutdown(false, true) },
			result{"half", 0, errno.EPIPE},
		},
		{
			"server closes with unread data: RST, data already arrived is readable first",
			func(w *world, c, s *Conn) {
				w.write(c, "unread")
				w.write(s, "sent")
				w.now += 1000
				s.Close()
			},
			result{"sent", errno.ECONNRESET, errno.EBADF},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "server", "client")
			l := w.listen(0, "", 80)
			c, s := w.connect(l, 1, 1000, 1000)
			tt.act(w, c, s)
			_, se := s.Write([]byte("x"))
			w.now += 10000
			out, e := readAll(c)
			got := result{out, e, se}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if r := c.ReadableAt(); r != w.now {
				t.Errorf("ReadableAt at EOF or reset = %d, want now", r)
			}
		})
	}
}

func TestHalfCloseKeepsOtherDirection(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	w.write(c, "request")
	if e := c.Shutdown(false, true); e != 0 {
		t.Fatal(e)
	}
	w.now += 1000
	if out, e := readAll(s); out != "request" || e != 0 {
		t.Fatalf("server read %q, %v, want request then EOF", out, e)
	}
	w.write(s, "response")
	s.Close()
	w.now += 1000
	if out, e := readAll(c); out != "response" || e != 0 {
		t.Errorf("client read %q, %v, want response then EOF", out, e)
	}
}

func TestCloseWithDataInFlight(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	t0 := w.now
	w.draws = []int64{500} // the client's data reaches the server at t0+500
	w.write(c, "too late")
	w.now = t0 + 100
	w.draws = []int64{50, 70} // FIN now, then RST when the data arrives
	s.Close()
	w.now = t0 + 150
	if n, e := c.Read(make([]byte, 4)); n != 0 || e != 0 {
		t.Errorf("client read = %d, %v, want EOF from the FIN", n, e)
	}
	if got := c.WritableAt(); got != w.now {
		t.Errorf("WritableAt = %d, want now", got)
	}
	w.now = t0 + 500 + 70
	if _, e := c.Write([]byte("x")); e != errno.EPIPE {
		t.Errorf("write after the RST = %v, want EPIPE", e)
	}
}

func TestShutdownRead(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	if n, _ := c.Write(make([]byte, Window)); n != Window {
		t.Fatalf("wrote %d", n)
	}
	if got := c.WritableAt(); got != -1 {
		t.Fatalf("WritableAt with a full window = %d", got)
	}
	if e := s.Shutdown(true, false); e != 0 {
		t.Fatal(e)
	}
	w.now += 5000
	if n, e := s.Read(make([]byte, 10)); n != 0 || e != 0 {
		t.Errorf("read after SHUT_RD = %d, %v, want EOF", n, e)
	}
	if got := c.WritableAt(); got != w.now {
		t.Errorf("WritableAt after the reader shut down reading = %d, want now: the data is discarded", got)
	}
	w.write(s, "still talking")
	w.now += 5000
	if out, _ := readAll(c); out != "still talking" {
		t.Errorf("client read %q: SHUT_RD must not stop the other direction", out)
	}
}

func TestWriteToClosedPeer(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	t0 := w.now
	w.draws = []int64{100} // FIN
	s.Close()
	w.now = t0 + 200
	if out, e := readAll(c); out != "" || e != 0 {
		t.Fatalf("client read %q, %v, want EOF", out, e)
	}
	// The client does not know the server is gone for good: its write goes
	// out, and the server's RST comes back.
	w.draws = []int64{300, 400} // data to the server, RST back
	w.write(c, "anyone?")
	if got := c.WritableAt(); got != w.now {
		t.Errorf("WritableAt = %d, want now", got)
	}
	w.now = t0 + 200 + 700 - 1
	w.write(c, "still there?")
	w.now++
	if _, e := c.Write([]byte("x")); e != errno.EPIPE {
		t.Errorf("write after the RST = %v, want EPIPE (the FIN came first)", e)
	}
	if got := c.Status(); got != errno.EPIPE {
		t.Errorf("status after the RST = %v, want EPIPE", got)
	}
	if n, e := c.Read(make([]byte, 4)); n != 0 || e != 0 {
		t.Errorf("read after FIN and RST = %d, %v, want EOF", n, e)
	}
}

func TestHostDown(t *testing.T) {
	w := newWorld(t, "server", "client", "other")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	// A second client is queued but never accepted.
	w.draws = []int64{10, 10}
	q := w.dial(2, "10.0.0.1", 80)
	w.now = q.replyAt
	t0 := w.now
	w.draws = []int64{500} // data in flight when the server dies
	w.write(s, "last words")
	w.now = t0 + 100
	w.calls = nil
	w.draws = []int64{200, 50} // RST to c, RST to q
	w.n.HostDown(0)
	if want := [][2]int{{0, 1}, {0, 2}}; !slices.Equal(w.calls, want) {
		t.Errorf("RST draws %v, want %v", w.calls, want)
	}
	// c: the data (due at t0+500) comes before the RST (t0+100+200 is earlier,
	// but the RST may not overtake it).
	if got := c.ReadableAt(); got != t0+500 {
		t.Errorf("client ReadableAt = %d, want %d", got, t0+500)
	}
	w.now = t0 + 499
	if got := c.Status(); got != 0 {
		t.Errorf("client status before the RST arrives = %v, want 0", got)
	}
	if _, e := c.Write([]byte("x")); e != 0 {
		t.Errorf("write before the RST arrives = %v, want success", e)
	}
	w.now = t0 + 500
	if out, e := readAll(c); out != "last words" || e != errno.ECONNRESET {
		t.Errorf("client read %q, %v, want data then ECONNRESET", out, e)
	}
	if _, e := c.Write([]byte("x")); e != errno.ECONNRESET {
		t.Errorf("client write = %v, want ECONNRESET", e)
	}
	if got := c.Status(); got != errno.ECONNRESET {
		t.Errorf("client status = %v, want ECONNRESET", got)
	}
	if got, e := q.Read(make([]byte, 1)); got != 0 || e != errno.ECONNRESET {
		t.Errorf("queued client read = %v, want ECONNRESET", e)
	}
	if _, e := l.Accept(); e != errno.EBADF {
		t.Errorf("accept on a dead listener = %v, want EBADF", e)
	}
	// The host restarts: the port is free again, and a new dial works.
	l2 := w.listen(0, "", 80)
	c2, _ := w.connect(l2, 1, 10, 10)
	if c2.LocalAddr().Port() == c.LocalAddr().Port() {
		t.Errorf("client reused port %d", c2.LocalAddr().Port())
	}
}

func TestHostDownOfDialer(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	w.draws = []int64{1000, 1000}
	w.dial(1, "10.0.0.1", 80)
	w.now = 500
	w.n.HostDown(1) // the SYN is dropped with the host
	w.now = 5000
	if _, e := l.Accept(); e != errno.EAGAIN {
		t.Errorf("accept = %v, want EAGAIN: a dead host's SYN must not be queued", e)
	}
	if got := l.ReadableAt(); got != -1 {
		t.Errorf("ReadableAt = %d, want -1", got)
	}
}

func TestListenerCloseResetsQueue(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c := w.dial(1, "10.0.0.1", 80)
	w.now = c.replyAt
	w.draws = []int64{100}
	l.Close()
	if got := c.ReadableAt(); got != w.now+100 {
		t.Errorf("client ReadableAt = %d, want %d", got, w.now+100)
	}
	w.now += 100
	if _, e := c.Read(make([]byte, 1)); e != errno.ECONNRESET {
		t.Errorf("client read = %v, want ECONNRESET", e)
	}
	l.Close() // twice is fine
	if _, e := w.n.Listen(0, netip.Addr{}, 80); e != 0 {
		t.Errorf("listen on the freed port = %v", e)
	}
}

func TestDialerClosesEarly(t *testing.T) {
	t.Run("before the SYN arrives", func(t *testing.T) {
		w := newWorld(t, "server", "client")
		l := w.listen(0, "", 80)
		c := w.dial(1, "10.0.0.1", 80)
		w.now = 10
		c.Close()
		w.now = 10000
		if _, e := l.Accept(); e != errno.EAGAIN {
			t.Errorf("accept = %v, want EAGAIN", e)
		}
	})
	t.Run("before the SYN-ACK arrives", func(t *testing.T) {
		w := newWorld(t, "server", "client")
		l := w.listen(0, "", 80)
		c := w.dial(1, "10.0.0.1", 80) // SYN at 1000, SYN-ACK at 2000
		w.now = 1500
		s, e := l.Accept()
		if e != 0 {
			t.Fatal(e)
		}
		w.draws = []int64{300}
		c.Close()
		if got := s.ReadableAt(); got != 2300 {
			t.Errorf("server ReadableAt = %d, want 2300 (RST answers the SYN-ACK)", got)
		}
	})
}

func TestLoopback(t *testing.T) {
	tests := []struct {
		name     string
		listenIP string
		dialIP   string
		refused  bool
	}{
		{"127.0.0.1 to any", "", "127.0.0.1", false},
		{"own address to any", "", "10.0.0.2", false},
		{"127.0.0.1 to 127.0.0.1", "127.0.0.1", "127.0.0.1", false},
		{"own address to own address", "10.0.0.2", "10.0.0.2", false},
		{"::1 to any", "", "::1", false},
		{"own address to a loopback-only listener", "127.0.0.1", "10.0.0.2", true},
		{"127.0.0.1 to an own-address listener", "10.0.0.2", "127.0.0.1", true},
		{"unspecified dials loopback", "127.0.0.1", "0.0.0.0", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "other", "self")
			l := w.listen(1, tt.listenIP, 80)
			c := w.dial(1, tt.dialIP, 80)
			w.now = c.replyAt
			s, e := l.Accept()
			if tt.refused {
				if e != errno.EAGAIN || c.Status() != errno.ECONNREFUSED {
					t.Errorf("accept %v, status %v, want refused", e, c.Status())
				}
				return
			}
			if e != 0 {
				t.Fatalf("accept = %v", e)
			}
			for _, d := range w.calls {
				if d != [2]int{1, 1} {
					t.Errorf("loopback drew latency %v, want (1, 1)", d)
				}
			}
			if c.LocalAddr().Addr() != c.RemoteAddr().Addr() || s.RemoteAddr() != c.LocalAddr() {
				t.Errorf("client %v -> %v, server %v <- %v", c.LocalAddr(), c.RemoteAddr(), s.LocalAddr(), s.RemoteAddr())
			}
			w.write(c, "ping")
			w.now += 1000
			if out, _ := readAll(s); out != "ping" {
				t.Errorf("server read %q", out)
			}
		})
	}
}

func TestPorts(t *testing.T) {
	w := newWorld(t, "a", "b")
	w.listen(0, "", 80)
	var got []uint16
	for range 3 {
		got = append(got, w.dial(1, "10.0.0.1", 80).LocalAddr().Port())
	}
	got = append(got, w.dial(0, "10.0.0.1", 80).LocalAddr().Port())
	got = append(got, w.listen(1, "", 0).Addr().Port())
	if want := []uint16{32768, 32769, 32770, 32768, 32771}; !slices.Equal(got, want) {
		t.Errorf("ephemeral ports %v, want %v", got, want)
	}

	// The counter wraps and skips ports still in use.
	w.n.hosts[1].nextPort = EphemeralLast
	if p := w.dial(1, "10.0.0.1", 80).LocalAddr().Port(); p != EphemeralLast {
		t.Errorf("port %d, want %d", p, EphemeralLast)
	}
	if p := w.dial(1, "10.0.0.1", 80).LocalAddr().Port(); p != 32772 {
		t.Errorf("after wrapping: port %d, want 32772 (32768..32771 are taken)", p)
	}
}

func TestListenErrors(t *testing.T) {
	tests := []struct {
		name  string
		first string // "" = no first listener; "any", or an address
		addr  string
		port  int
		want  errno.Errno
	}{
		{"same port, both any", "any", "", 80, errno.EADDRINUSE},
		{"same port, any then specific", "any", "127.0.0.1", 80, errno.EADDRINUSE},
		{"same port, specific then any", "10.0.0.1", "", 80, errno.EADDRINUSE},
		{"same port, same address", "10.0.0.1", "10.0.0.1", 80, errno.EADDRINUSE},
		{"same port, different addresses", "10.0.0.1", "127.0.0.1", 80, 0},
		{"different port", "any", "", 81, 0},
		{"an address of another host", "", "10.0.0.2", 80, errno.EADDRNOTAVAIL},
		{"a foreign address", "", "192.168.0.1", 80, errno.EADDRNOTAVAIL},
		{"port out of range", "", "", 65536, errno.EINVAL},
		{"ipv6 any", "", "::", 80, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t, "a", "b")
			switch tt.first {
			case "":
			case "any":
				w.listen(0, "", 80)
			default:
				w.listen(0, tt.first, 80)
			}
			var a netip.Addr
			if tt.addr != "" {
				a = ip(tt.addr)
			}
			if _, e := w.n.Listen(0, a, tt.port); e != tt.want {
				t.Errorf("Listen = %v, want %v", e, tt.want)
			}
		})
	}
	t.Run("freed by close, independent per host", func(t *testing.T) {
		w := newWorld(t, "a", "b")
		l := w.listen(0, "", 80)
		w.listen(1, "", 80)
		l.Close()
		w.listen(0, "", 80)
	})
	t.Run("a dialed connection holds its port", func(t *testing.T) {
		w := newWorld(t, "a", "b")
		w.listen(0, "", 80)
		c := w.dial(1, "10.0.0.1", 80)
		if _, e := w.n.Listen(1, netip.Addr{}, int(c.LocalAddr().Port())); e != errno.EADDRINUSE {
			t.Errorf("Listen on a dialed conn's port = %v, want EADDRINUSE", e)
		}
	})
}

func TestResetHost(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, 1000, 1000)
	w.draws = []int64{5000}
	w.write(c, "lost") // still in flight when the reset hits
	w.now += 100
	w.draws = []int64{200}
	w.n.ResetHost(0)
	if _, e := s.Read(make([]byte, 8)); e != errno.ECONNRESET {
		t.Errorf("reset end read = %v, want ECONNRESET at once", e)
	}
	if _, e := s.Write([]byte("x")); e != errno.ECONNRESET {
		t.Errorf("reset end write = %v, want ECONNRESET", e)
	}
	if got := c.Status(); got != 0 {
		t.Errorf("peer status before the RST arrives = %v", got)
	}
	w.now += 200
	if got := c.Status(); got != errno.ECONNRESET {
		t.Errorf("peer status = %v, want ECONNRESET", got)
	}
	// The listener survives.
	c2, _ := w.connect(l, 1, 10, 10)
	if c2.Status() != 0 {
		t.Errorf("new connection after reset: %v", c2.Status())
	}
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, _ := w.connect(l, 1, 1000, 1000)
	c.Close()
	c.Close()
	if _, e := c.Read(make([]byte, 1)); e != errno.EBADF {
		t.Errorf("read after close = %v", e)
	}
	if _, e := c.Write([]byte("x")); e != errno.EBADF {
		t.Errorf("write after close = %v", e)
	}
	if e := c.Shutdown(true, true); e != errno.EBADF {
		t.Errorf("shutdown after close = %v", e)
	}
}

// scenario runs a small cluster conversation with latencies drawn from seed
// and returns the network's event log.
func scenario(t *testing.T, seed uint64) []string {
	w := newWorld(t, "n1", "n2", "n3")
	rng := rand.New(rand.NewPCG(seed, 0))
	w.n.latency = func(from, to int) int64 { return 100 + rng.Int64N(900) }
	var conns [][2]*Conn
	ls := []*Listener{w.listen(0, "", 80), w.listen(1, "", 80)}
	for i := range 4 {
		c := w.dial(2-i%2, fmt.Sprintf("10.0.0.%d", 1+i%2), 80)
		w.now += int64(rng.IntN(3000))
		for _, l := range ls {
			for {
				s, e := l.Accept()
				if e != 0 {
					break
				}
				conns = append(conns, [2]*Conn{c, s})
			}
		}
	}
	buf := make([]byte, 100)
	for step := range 40 {
		w.now += int64(rng.IntN(400))
		pair := conns[step%len(conns)]
		switch rng.IntN(4) {
		case 0:
			pair[0].Write(bytes.Repeat([]byte{byte(step)}, rng.IntN(200)))
		case 1:
			pair[1].Write([]byte("reply"))
		case 2:
			n, e := pair[1].Read(buf)
			w.log = append(w.log, fmt.Sprintf("read %d %v", n, e))
		case 3:
			n, e := pair[0].Read(buf)
			w.log = append(w.log, fmt.Sprintf("read %d %v", n, e))
		}
		if step == 30 {
			w.n.HostDown(0)
		}
	}
	return w.log
}

func TestDeterministicEventLog(t *testing.T) {
	a, b := scenario(t, 1), scenario(t, 1)
	if !slices.Equal(a, b) {
		t.Fatalf("same seed, different logs:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if slices.Equal(a, scenario(t, 2)) {
		t.Errorf("seeds 1 and 2 gave the same log: the draws do not reach the network")
	}
	if len(a) < 30 {
		t.Errorf("log has only %d events", len(a))
	}
}

// ArrivedBetween sees a segment or a SYN that arrived within the span it is
// asked about, and nothing that arrived before it or is still on its way.
func TestArrivedBetween(t *testing.T) {
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	client, _ := w.connect(l, 1, 1000, 1000) // accepted at 2000
	w.now = 3000
	w.draws = []int64{500} // arrives at 3500
	w.write(client, "req")
	for _, tc := range []struct {
		at, from, to int64
		want         bool
	}{
		{3200, 3000, 3200, false}, // on its way
		{3600, 3000, 3600, true},
		{3600, 3000, 3500, true},  // arrives at the end of the span
		{3600, 3500, 3600, false}, // arrived before the span
	} {
		w.now = tc.at
		if got := w.n.ArrivedBetween(0, tc.from, tc.to); got != tc.want {
			t.Errorf("at %d: ArrivedBetween(server, %d, %d) = %v, want %v", tc.at, tc.from, tc.to, got, tc.want)
		}
		if got := w.n.ArrivedBetween(1, tc.from, tc.to); got {
			t.Errorf("at %d: the client saw an arrival", tc.at)
		}
	}
	// A connection waiting to be accepted arrived with its SYN.
	w.draws = []int64{300, 300} // the SYN arrives at 3900
	w.dial(1, "10.0.0.1", 80)
	w.now = 4000
	if !w.n.ArrivedBetween(0, 3800, 4000) || w.n.ArrivedBetween(0, 3900, 4000) {
		t.Errorf("a SYN arriving at 3900: seen in (3800, 4000] %v, in (3900, 4000] %v, want true, false",
			w.n.ArrivedBetween(0, 3800, 4000), w.n.ArrivedBetween(0, 3900, 4000))
	}
}

// A reset loses what is in flight on the connection both ways: a reply the
// reset host wrote 3.5ms before the reset, due 6.5ms after it, never
// arrives; the peer reads ECONNRESET once the RST is due, and data that
// arrived before the reset is still read first.
func TestResetLosesWhatIsInFlight(t *testing.T) {
	const ms = 1_000_000
	w := newWorld(t, "server", "client")
	l := w.listen(0, "", 80)
	c, s := w.connect(l, 1, ms, ms)
	w.draws = []int64{ms}
	w.write(s, "early") // arrives before the reset
	w.now += 2 * ms
	w.draws = []int64{10 * ms}
	w.write(s, "reply") // due 6.5ms after the reset
	w.draws = []int64{10 * ms}
	w.write(c, "request") // due 6.5ms after the reset, to the reset end
	w.now += 3500 * 1000
	resetAt := w.now
	w.draws = []int64{2 * ms} // the RST to the client
	w.n.ResetHost(0)

	if got, e := readAll(s); got != "" || e != errno.ECONNRESET {
		t.Errorf("reset end reads %q, %v, want nothing and ECONNRESET", got, e)
	}
	w.now = resetAt + ms
	if got, e := readAll(c); got != "early" || e != errno.EAGAIN {
		t.Errorf("peer before the RST: %q, %v, want what arrived before the reset, then EAGAIN", got, e)
	}
	w.now = resetAt + 2*ms
	if got, e := readAll(c); got != "" || e != errno.ECONNRESET {
		t.Errorf("peer when the RST is due: %q, %v, want ECONNRESET", got, e)
	}
	w.now = resetAt + 7*ms // past the lost reply's due time
	if got, e := readAll(c); got != "" || e != errno.ECONNRESET {
		t.Errorf("peer after the lost reply was due: %q, %v, want nothing but ECONNRESET", got, e)
	}
	if got, e := readAll(s); got != "" || e != errno.ECONNRESET {
		t.Errorf("reset end after the lost request was due: %q, %v, want nothing but ECONNRESET", got, e)
	}
}
