package netsim

import (
	"slices"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// Hosts of the fault tests: 0 dials, 1 listens on :80, 2 is a bystander.
func faultWorld(t *testing.T) (*world, *Listener) {
	w := newWorld(t, "n1", "n2", "n3")
	return w, w.listen(1, "", 80)
}

// The spec's mode table, column "new connections", one row per fault and
// shape. Draws are 1000 each way; a slow clog adds 500.
func TestNewConnectionsUnderFaults(t *testing.T) {
	const syn, synack, slow = 1000, 1000, 500
	tests := []struct {
		name  string
		fault func(n *Network) func() // starts the fault at 0, returns its heal
		// refused: ECONNREFUSED after the round trip. held: nothing happens
		// until the heal at 10000. Otherwise the SYN reaches the listener at
		// synAt and the dialer connects at replyAt.
		refused, held  bool
		synAt, replyAt int64
	}{
		{"no fault", func(n *Network) func() { return func() {} }, false, false, 1000, 2000},
		{"partition", func(n *Network) func() { n.Partition([][]int{{0, 2}, {1}}); return n.HealPartition }, true, false, 0, 0},
		{"stop link to listener", clogLink(0, 1, ClogStop), true, false, 0, 0},
		{"stop link back to dialer", clogLink(1, 0, ClogStop), true, false, 0, 0},
		{"stop listener inbound", clogHost(1, DirIn, ClogStop), true, false, 0, 0},
		{"stop listener outbound", clogHost(1, DirOut, ClogStop), true, false, 0, 0},
		{"stop dialer both", clogHost(0, DirBoth, ClogStop), true, false, 0, 0},
		{"stop elsewhere", clogLink(2, 1, ClogStop), false, false, 1000, 2000},
		{"jam link to listener", clogLink(0, 1, ClogJam), false, true, 11000, 12000},
		{"jam link back to dialer", clogLink(1, 0, ClogJam), false, true, 11000, 12000},
		{"jam listener inbound", clogHost(1, DirIn, ClogJam), false, true, 11000, 12000},
		{"slow toward listener", clogLink(0, 1, ClogSlow), false, false, 1500, 2500},
		{"slow back to dialer", clogLink(1, 0, ClogSlow), false, false, 1000, 2500},
		{"slow dialer both", clogHost(0, DirBoth, ClogSlow), false, false, 1500, 3000},
		{"partition, dialer fault-free", func(n *Network) func() {
			n.SetFaultFree(0, true)
			n.Partition([][]int{{0}, {1}})
			return n.HealPartition
		}, false, false, 1000, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, l := faultWorld(t)
			w.def = syn
			heal := tt.fault(w.n)
			c := w.dial(0, "10.0.0.2", 80)
			switch {
			case tt.refused:
				if got := c.WritableAt(); got != syn+synack {
					t.Errorf("WritableAt = %d, want the round trip %d", got, syn+synack)
				}
				w.now = syn + synack
				if st := c.Status(); st != errno.ECONNREFUSED {
					t.Errorf("Status = %v, want ECONNREFUSED", st)
				}
				heal()
				if _, e := l.Accept(); e != errno.EAGAIN {
					t.Errorf("the listener got the refused connection (%v)", e)
				}
				return
			case tt.held:
				for _, at := range []int64{0, 5000, 9999} {
					w.now = at
					if c.WritableAt() != -1 || l.ReadableAt() != -1 || c.Status() != errno.EINPROGRESS {
						t.Fatalf("at %d: WritableAt %d, listener ReadableAt %d, Status %v; want -1, -1, EINPROGRESS",
							at, c.WritableAt(), l.ReadableAt(), c.Status())
					}
				}
				w.now = 10000
				heal()
			}
			if got := l.ReadableAt(); got != tt.synAt {
				t.Errorf("listener ReadableAt = %d, want %d", got, tt.synAt)
			}
			if got := c.WritableAt(); got != tt.replyAt {
				t.Errorf("dialer WritableAt = %d, want %d", got, tt.replyAt)
			}
			w.now = tt.synAt - 1
			if _, e := l.Accept(); e != errno.EAGAIN {
				t.Errorf("accepted before the SYN arrived (%v)", e)
			}
			w.now = tt.synAt
			if _, e := l.Accept(); e != 0 {
				t.Errorf("Accept at the SYN's arrival = %v", e)
			}
			w.now = tt.replyAt - 1
			if st := c.Status(); st != errno.EINPROGRESS {
				t.Errorf("Status before the SYN-ACK = %v", st)
			}
			w.now = tt.replyAt
			if st := c.Status(); st != 0 {
				t.Errorf("Status at the SYN-ACK = %v", st)
			}
		})
	}
}

func clogLink(from, to int, mode ClogMode) func(n *Network) func() {
	return func(n *Network) func() {
		id := n.ClogLink(from, to, mode, 500)
		return func() { n.Unclog(id) }
	}
}

func clogHost(h int, dir Dir, mode ClogMode) func(n *Network) func() {
	return func(n *Network) func() {
		id := n.ClogHost(h, dir, mode, 500)
		return func() { n.Unclog(id) }
	}
}

// The spec's mode table, columns "data in flight" and "errors seen": a
// connection carries "a" (sent before the fault, in flight when it starts)
// and "b" (sent during it) from n1 to n2, and nothing fails.
func TestDataInFlightUnderFaults(t *testing.T) {
	tests := []struct {
		name     string
		fault    func(n *Network) func()
		held     bool
		aAt, bAt int64 // arrivals (the fault starts at 10500, "b" leaves at 11000, the heal is at 20000)
	}{
		{"no fault", func(n *Network) func() { return func() {} }, false, 11000, 12000},
		{"partition", func(n *Network) func() { n.Partition([][]int{{0}, {1, 2}}); return n.HealPartition }, true, 21000, 21000},
		{"one-way partition (stop out)", clogHost(0, DirOut, ClogStop), true, 21000, 21000},
		{"stop link", clogLink(0, 1, ClogStop), true, 21000, 21000},
		{"jam inbound", clogHost(1, DirIn, ClogJam), true, 21000, 21000},
		{"jam both", clogHost(0, DirBoth, ClogJam), true, 21000, 21000},
		{"slow link", clogLink(0, 1, ClogSlow), false, 11000, 12500},
		{"stop the other way only", clogLink(1, 0, ClogStop), false, 11000, 12000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, l := faultWorld(t)
			client, server := w.connect(l, 0, 1000, 1000)
			w.now = 10000
			w.write(client, "a")
			w.now = 10500
			heal := tt.fault(w.n)
			w.now = 11000
			w.write(client, "b")
			if st := client.Status(); st != 0 {
				t.Errorf("client Status during the fault = %v", st)
			}
			if tt.held {
				for _, at := range []int64{11000, 15000, 19999} {
					w.now = at
					if r := server.ReadableAt(); r != -1 {
						t.Errorf("at %d: ReadableAt = %d while held, want -1", at, r)
					}
					if s, e := readAll(server); s != "" || e != errno.EAGAIN {
						t.Errorf("at %d: read %q, %v while held", at, s, e)
					}
				}
				w.now = 20000
				heal()
			}
			if r := server.ReadableAt(); r != max(tt.aAt, w.now) {
				t.Errorf("ReadableAt = %d, want %d", r, tt.aAt)
			}
			w.now = tt.aAt - 1
			if s, _ := readAll(server); s != "" {
				t.Errorf("at %d: read %q before the arrival", w.now, s)
			}
			w.now = tt.aAt
			first, _ := readAll(server)
			w.now = tt.bAt
			second, _ := readAll(server)
			if got := first + "|" + second; tt.aAt == tt.bAt && got != "ab|" || tt.aAt != tt.bAt && got != "a|b" {
				t.Errorf("read %q at %d then %q at %d", first, tt.aAt, second, tt.bAt)
			}
			if st := server.Status(); st != 0 {
				t.Errorf("server Status = %v, want 0: faults show no error", st)
			}
		})
	}
}

// Held segments keep their order and their own latency draws: at the heal
// each leaves with its draw, never overtaking the one before it.
func TestHeldTrafficKeepsOrder(t *testing.T) {
	w, l := faultWorld(t)
	client, server := w.connect(l, 0, 1000, 1000)
	w.now = 5000
	w.n.Partition([][]int{{0}, {1}})
	w.draws = []int64{3000, 1000, 2000, 500}
	for _, s := range []string{"x", "y", "z"} {
		w.write(client, s)
	}
	if err := client.Shutdown(false, true); err != 0 {
		t.Fatal(err)
	}
	w.now = 7000
	w.n.HealPartition()
	if r := server.ReadableAt(); r != 10000 {
		t.Errorf("ReadableAt after heal = %d, want 10000 (heal 7000 + first draw 3000)", r)
	}
	w.now = 9999
	if s, e := readAll(server); s != "" || e != errno.EAGAIN {
		t.Errorf("read %q, %v before the first arrival", s, e)
	}
	w.now = 10000
	if s, e := readAll(server); s != "xyz" || e != 0 {
		t.Errorf("read %q, %v; want \"xyz\" then EOF (the FIN came after)", s, e)
	}
	want := []string{
		"7000 h0 release 10.0.0.1:32768 -> 10.0.0.2:80 1B @10000 data",
		"7000 h0 release 10.0.0.1:32768 -> 10.0.0.2:80 1B @10000 data",
		"7000 h0 release 10.0.0.1:32768 -> 10.0.0.2:80 1B @10000 data",
		"7000 h0 release 10.0.0.1:32768 -> 10.0.0.2:80 @10000 fin",
	}
	var got []string
	for _, e := range w.log {
		if strings.Contains(e, "release") {
			got = append(got, e)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("release events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Faults stack: a link is held while any partition, stop or jam covers it,
// and a slow clog adds its delay to what is released.
func TestFaultsStack(t *testing.T) {
	w, l := faultWorld(t)
	client, server := w.connect(l, 0, 1000, 1000)
	w.now = 5000
	w.n.Partition([][]int{{0}, {1}})
	slow := w.n.ClogLink(0, 1, ClogSlow, 400)
	jam := w.n.ClogHost(1, DirIn, ClogJam, 0)
	w.write(client, "a")
	w.now = 6000
	w.n.HealPartition()
	if r := server.ReadableAt(); r != -1 {
		t.Fatalf("ReadableAt = %d after the partition healed under a jam, want -1", r)
	}
	w.now = 7000
	w.n.Unclog(jam)
	if r := server.ReadableAt(); r != 7000+1000+400 {
		t.Errorf("ReadableAt = %d, want 8400 (release + draw + slow delay)", r)
	}
	w.n.Unclog(slow)
	w.n.Unclog(slow) // twice does nothing
	w.now = 9000
	w.write(client, "b")
	if r := server.ReadableAt(); r != 9000 {
		t.Errorf("ReadableAt = %d, want now: \"a\" has arrived", r)
	}
	w.now = 10000
	if s, _ := readAll(server); s != "ab" {
		t.Errorf("read %q, want \"ab\"", s)
	}
}

// A new partition replaces the one in force: what the new one no longer
// cuts is released, what it cuts now is held.
func TestPartitionReplaces(t *testing.T) {
	w, l := faultWorld(t)
	c01, s01 := w.connect(l, 0, 1000, 1000)
	c21, s21 := w.connect(l, 2, 1000, 1000)
	w.now = 5000
	w.n.Partition([][]int{{0}, {1, 2}})
	w.write(c01, "from0")
	w.now = 6000
	w.n.Partition([][]int{{0, 1}, {2}})
	w.write(c21, "from2")
	if r := s01.ReadableAt(); r != 7000 {
		t.Errorf("n1<-n0 ReadableAt = %d, want 7000 (released by the new partition)", r)
	}
	if r := s21.ReadableAt(); r != -1 {
		t.Errorf("n1<-n2 ReadableAt = %d, want -1 (held by the new partition)", r)
	}
	if w.n.Reachable(2, 1) || !w.n.Reachable(0, 1) || !w.n.Reachable(1, 1) {
		t.Errorf("Reachable disagrees with the partition {0,1} {2}")
	}
	w.now = 8000
	w.n.HealAll()
	if r := s21.ReadableAt(); r != 9000 {
		t.Errorf("n1<-n2 ReadableAt after HealAll = %d, want 9000", r)
	}
}

// A FIN or an RST is held like data: a close during a partition is seen
// after the heal, and a crash's RST only after the heal too.
func TestControlSegmentsHeld(t *testing.T) {
	w, l := faultWorld(t)
	c1, s1 := w.connect(l, 0, 1000, 1000)
	c2, s2 := w.connect(l, 2, 1000, 1000)
	w.now = 5000
	w.n.Partition([][]int{{0}, {1}, {2}})
	c1.Close()
	w.n.HostDown(2)
	w.now = 9000
	if r1, r2 := s1.ReadableAt(), s2.ReadableAt(); r1 != -1 || r2 != -1 {
		t.Errorf("ReadableAt = %d, %d during the partition, want -1, -1", r1, r2)
	}
	if st := s2.Status(); st != 0 {
		t.Errorf("Status = %v before the held RST arrived", st)
	}
	w.n.HealPartition()
	w.now = 10000
	if _, e := s1.Read(make([]byte, 1)); e != 0 {
		t.Errorf("read after the held FIN = %v, want EOF", e)
	}
	if _, e := s2.Read(make([]byte, 1)); e != errno.ECONNRESET {
		t.Errorf("read after the held RST = %v, want ECONNRESET", e)
	}
	_ = c2
}

// A SYN-ACK in flight when a cut begins is held too: the dialer connects
// after the heal.
func TestSynAckHeld(t *testing.T) {
	w, l := faultWorld(t)
	w.draws = []int64{1000, 1000}
	c := w.dial(0, "10.0.0.2", 80)
	w.now = 1500 // the SYN arrived, the SYN-ACK travels
	id := w.n.ClogLink(1, 0, ClogStop, 0)
	if got := c.WritableAt(); got != -1 {
		t.Errorf("WritableAt = %d with the SYN-ACK held, want -1", got)
	}
	s, e := l.Accept()
	if e != 0 {
		t.Fatal("the SYN did not arrive", e)
	}
	w.write(s, "hi")
	w.now = 4000
	w.n.Unclog(id)
	if got := c.WritableAt(); got != 5000 {
		t.Errorf("WritableAt after the heal = %d, want 5000", got)
	}
	w.now = 5000
	if st := c.Status(); st != 0 {
		t.Errorf("Status = %v", st)
	}
	if got, _ := readAll(c); got != "hi" {
		t.Errorf("read %q", got)
	}
}

// A full window of held data keeps the writer waiting (-1) until the heal
// lets the reader drain it.
func TestWindowFullWhileHeld(t *testing.T) {
	w, l := faultWorld(t)
	client, server := w.connect(l, 0, 1000, 1000)
	w.now = 5000
	w.n.ClogHost(0, DirOut, ClogJam, 0)
	if n, _ := client.Write(make([]byte, Window+10)); n != Window {
		t.Fatalf("wrote %d, want the window %d", n, Window)
	}
	if got := client.WritableAt(); got != -1 {
		t.Errorf("WritableAt = %d, want -1", got)
	}
	w.now = 6000
	w.n.HealAll()
	w.now = 7000
	if n, _ := server.Read(make([]byte, Window)); n != Window {
		t.Errorf("read %d after the heal, want %d", n, Window)
	}
	if got := client.WritableAt(); got != 7000 {
		t.Errorf("WritableAt = %d after the read, want now", got)
	}
}

// Loopback traffic never crosses a link: no fault touches it.
func TestLoopbackIgnoresFaults(t *testing.T) {
	w := newWorld(t, "n1", "n2")
	l := w.listen(0, "", 80)
	w.n.Partition([][]int{{0}, {1}})
	w.n.ClogHost(0, DirBoth, ClogStop, 0)
	c := w.dial(0, "127.0.0.1", 80)
	w.now = c.WritableAt()
	if st := c.Status(); st != 0 {
		t.Errorf("loopback Status = %v under faults", st)
	}
	if _, e := l.Accept(); e != 0 {
		t.Errorf("loopback Accept = %v", e)
	}
}

// A dialer that gives up while its SYN-ACK is held resets the accepted end
// at once over the open direction, instead of leaving the RST stuck.
func TestCloseWhileSynAckHeld(t *testing.T) {
	w, l := faultWorld(t)
	w.draws = []int64{1000, 1000}
	c := w.dial(0, "10.0.0.2", 80)
	w.now = 1500
	w.n.ClogLink(1, 0, ClogJam, 0)
	s, e := l.Accept()
	if e != 0 {
		t.Fatal(e)
	}
	c.Close()
	if r := s.ReadableAt(); r != 1500+1000 {
		t.Errorf("accepted end ReadableAt = %d, want the RST at 2500", r)
	}
	w.now = 2500
	if _, e := s.Read(make([]byte, 1)); e != errno.ECONNRESET {
		t.Errorf("read = %v, want ECONNRESET", e)
	}
}

// Marking a host fault-free releases what its links held, at once.
func TestSetFaultFreeReleases(t *testing.T) {
	w, l := faultWorld(t)
	client, server := w.connect(l, 0, 1000, 1000)
	w.now = 5000
	w.n.Partition([][]int{{0}, {1, 2}})
	w.write(client, "x")
	if w.n.Reachable(0, 1) {
		t.Fatal("the partition does not cut 0 -> 1")
	}
	w.now = 6000
	w.n.SetFaultFree(1, true)
	if !w.n.Reachable(0, 1) || w.n.Reachable(0, 2) {
		t.Errorf("fault-free host 1: Reachable(0,1)=%v Reachable(0,2)=%v, want true, false", w.n.Reachable(0, 1), w.n.Reachable(0, 2))
	}
	if r := server.ReadableAt(); r != 7000 {
		t.Errorf("ReadableAt = %d, want 7000", r)
	}
}
