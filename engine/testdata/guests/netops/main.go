// netops checks that TCP behaves as Go programs expect on Linux. With
// -role server it serves a few ports with different manners; with -role
// client it runs the checks against that server and prints "ok <name>" or
// "FAIL <name>: ..." per check, exiting 1 if any failed.
//
// Server ports: 7000 echoes until EOF; 7001 reads to EOF, then answers with
// the byte count (half-close); 7002 accepts and never reads or writes; 7003
// writes the peer's address as it sees it; 7004 closes at once; 7005 closes
// without reading what it was sent (a reset). Port 7999 is never listened on.
//
// Natively: go build, run "netops -role server" and "netops -role client
// -server <own address> -slow <unused address of the local subnet>:80".
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	server string // host name or address of the server node
	slow   string // an address whose dial takes longer than 1ms to answer
)

type check struct {
	name string
	fn   func() error
}

var checks = []check{
	{"refused", refused},
	{"dial_timeout", dialTimeout},
	{"dial_context_cancel", dialContextCancel},
	{"dial_context_deadline", dialContextDeadline},
	{"dial_unknown_host", dialUnknownHost},
	{"addrs_match", addrsMatch},
	{"half_close", halfClose},
	{"read_deadline", readDeadline},
	{"deadline_in_past", deadlineInPast},
	{"deadline_extend", deadlineExtend},
	{"write_deadline_backpressure", writeDeadlineBackpressure},
	{"listener_close_unblocks_accept", listenerCloseUnblocksAccept},
	{"addr_in_use", addrInUse},
	{"addr_not_avail", addrNotAvail},
	{"ephemeral_port", ephemeralPort},
	{"loopback", loopback},
	{"loopback_only_listener", loopbackOnlyListener},
	{"concurrent_conns", concurrentConns},
	{"large_transfer", largeTransfer},
	{"sockopts", sockopts},
	{"peer_close_eof", peerCloseEOF},
	{"write_after_peer_close", writeAfterPeerClose},
	{"reset_by_peer", resetByPeer},
	{"closed_conn", closedConn},
	{"zero_length_io", zeroLengthIO},
	{"files_next_to_etc", filesNextToEtc},
	{"ipv6_loopback", ipv6Loopback},
	{"localhost", localhost},
	{"accept_deadline", acceptDeadline},
	{"close_unblocks_read", closeUnblocksRead},
	{"listener_close_resets_queued", listenerCloseResetsQueued},
	{"close_read", closeRead},
}

func main() {
	role := flag.String("role", "client", "server or client")
	flag.StringVar(&server, "server", "server", "the server's host")
	flag.StringVar(&slow, "slow", "server:7000", "an address whose dial takes more than 1ms (a slow link, or a black hole)")
	skip := flag.String("skip", "", "comma-separated checks to skip")
	flag.Parse()
	if *role == "server" {
		serve()
		return
	}
	waitForServer()
	skipped := map[string]bool{}
	for _, n := range strings.Split(*skip, ",") {
		skipped[n] = true
	}
	failed := 0
	for _, c := range checks {
		if skipped[c.name] {
			fmt.Println("skip", c.name)
			continue
		}
		if err := c.fn(); err != nil {
			fmt.Printf("FAIL %s: %v\n", c.name, err)
			failed++
		} else {
			fmt.Println("ok", c.name)
		}
	}
	fmt.Printf("%d checks, %d failed\n", len(checks), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func addr(port int) string { return net.JoinHostPort(server, strconv.Itoa(port)) }

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// waitForServer dials until the server listens: the nodes start together.
func waitForServer() {
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", addr(7000))
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Println("FAIL the server never listened")
	os.Exit(1)
}

// ---- server ----

func serve() {
	handlers := map[int]func(net.Conn){
		7000: func(c net.Conn) { io.Copy(c, c); c.Close() },
		7001: func(c net.Conn) {
			n, err := io.Copy(io.Discard, c)
			fmt.Fprintf(c, "got %d bytes, %v\n", n, err)
			c.Close()
		},
		7002: func(c net.Conn) { time.Sleep(time.Hour); c.Close() },
		7003: func(c net.Conn) { fmt.Fprintf(c, "%s\n", c.RemoteAddr()); c.Close() },
		7004: func(c net.Conn) { c.Close() },
		7005: func(c net.Conn) {
			// Wait for the client's data to arrive, then close unread.
			time.Sleep(50 * time.Millisecond)
			c.Close()
		},
	}
	for port := 7000; port <= 7005; port++ {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			fmt.Println("listen:", err)
			os.Exit(1)
		}
		h := handlers[port]
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					fmt.Println("accept:", err)
					os.Exit(1)
				}
				go h(c)
			}
		}()
	}
	fmt.Println("serving")
	select {}
}

// ---- checks ----

func refused() error {
	_, err := net.Dial("tcp", addr(7999))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return errf("dial a port nobody listens on: %v, want ECONNREFUSED", err)
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "dial" {
		return errf("error %T %v, want *net.OpError from dial", err, err)
	}
	return nil
}

// isTimeout reports whether err is a net.Error whose Timeout() is true.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func dialTimeout() error {
	d := net.Dialer{Timeout: time.Millisecond}
	start := time.Now()
	c, err := d.Dial("tcp", slow)
	if err == nil {
		c.Close()
		return errf("a 1ms dial to %s succeeded", slow)
	}
	// Linux gives os.ErrDeadlineExceeded or the context's timeout,
	// whichever timer fires first; both are timeouts.
	if !isTimeout(err) {
		return errf("dial timeout: %v, want an i/o timeout", err)
	}
	if el := time.Since(start); el < time.Millisecond || el > 100*time.Millisecond {
		return errf("dial timed out after %v, want about 1ms", el)
	}
	return nil
}

func dialContextCancel() error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(500 * time.Microsecond)
		cancel()
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", slow)
	if err == nil {
		c.Close()
		return errf("dial to %s succeeded despite the cancellation", slow)
	}
	if !errors.Is(err, context.Canceled) {
		return errf("cancelled dial: %v, want context.Canceled", err)
	}
	// Cancelling an established connection's context changes nothing.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	c, err = d.DialContext(ctx2, "tcp", addr(7000))
	if err != nil {
		return err
	}
	defer c.Close()
	cancel2()
	return echoOnce(c, "after cancel")
}

func dialContextDeadline() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", slow)
	if err == nil {
		c.Close()
		return errf("dial to %s beat a 1ms context deadline", slow)
	}
	// As on Linux, the socket's deadline (set from the context's) and the
	// context's own timer race: either error may come first.
	if !(errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)) || !isTimeout(err) {
		return errf("dial past the context deadline: %v, want context.DeadlineExceeded or os.ErrDeadlineExceeded, and Timeout()", err)
	}
	return nil
}

func dialUnknownHost() error {
	_, err := net.Dial("tcp", "no-such-host.invalid:80")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		return errf("dial an unknown host: %v, want a *net.DNSError with IsNotFound", err)
	}
	return nil
}

func echoOnce(c net.Conn, msg string) error {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	b := make([]byte, len(msg))
	if _, err := io.ReadFull(c, b); err != nil || string(b) != msg {
		return errf("echo of %q = %q %v", msg, b, err)
	}
	return nil
}

func addrsMatch() error {
	c, err := net.Dial("tcp", addr(7003))
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	seen := strings.TrimSpace(string(b))
	if seen != c.LocalAddr().String() {
		return errf("server saw the dialer as %s, the dialer's LocalAddr is %s", seen, c.LocalAddr())
	}
	ra, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok || ra.Port != 7003 {
		return errf("RemoteAddr = %v, want port 7003", c.RemoteAddr())
	}
	la, ok := c.LocalAddr().(*net.TCPAddr)
	if !ok || la.Port == 0 || la.IP.IsUnspecified() {
		return errf("LocalAddr = %v, want a concrete address and port", c.LocalAddr())
	}
	return nil
}

func halfClose() error {
	c, err := net.Dial("tcp", addr(7001))
	if err != nil {
		return err
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	io.WriteString(tc, "hello, half-closed world")
	if err := tc.CloseWrite(); err != nil {
		return errf("CloseWrite: %v", err)
	}
	if _, err := tc.Write([]byte("x")); !errors.Is(err, syscall.EPIPE) {
		return errf("write after CloseWrite: %v, want EPIPE", err)
	}
	tc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := io.ReadAll(tc)
	if err != nil {
		return errf("read the answer after CloseWrite: %v", err)
	}
	if want := "got 24 bytes, <nil>\n"; string(b) != want {
		return errf("server answered %q, want %q", b, want)
	}
	return nil
}

func readDeadline() error {
	c, err := net.Dial("tcp", addr(7002))
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(start.Add(50 * time.Millisecond))
	n, err := c.Read(make([]byte, 10))
	if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
		return errf("read past the deadline = %d %v, want os.ErrDeadlineExceeded", n, err)
	}
	if el := time.Since(start); el < 50*time.Millisecond || el > time.Second {
		return errf("read timed out after %v, want 50ms", el)
	}
	// The deadline sticks until it is moved.
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		return errf("second read: %v, want os.ErrDeadlineExceeded", err)
	}
	return nil
}

func deadlineInPast() error {
	c, err := net.Dial("tcp", addr(7000))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(-time.Second))
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		return errf("write with a past deadline: %v", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		return errf("read with a past deadline: %v", err)
	}
	c.SetDeadline(time.Time{})
	return echoOnce(c, "cleared")
}

// Moving a deadline while a read waits takes effect for that read.
func deadlineExtend() error {
	c, err := net.Dial("tcp", addr(7002))
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	c.SetReadDeadline(start.Add(time.Hour))
	go func() {
		time.Sleep(20 * time.Millisecond)
		c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	}()
	_, err = c.Read(make([]byte, 1))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return errf("read: %v, want os.ErrDeadlineExceeded", err)
	}
	if el := time.Since(start); el < 30*time.Millisecond || el > time.Second {
		return errf("read timed out after %v, want 30ms", el)
	}
	return nil
}

// A peer that never reads fills the buffers: the writer blocks, then its
// write deadline fires. Some bytes went through, but not unboundedly many.
func writeDeadlineBackpressure() error {
	c, err := net.Dial("tcp", addr(7002))
	if err != nil {
		return err
	}
	defer c.Close()
	start := time.Now()
	c.SetWriteDeadline(start.Add(200 * time.Millisecond))
	chunk := make([]byte, 64<<10)
	total := 0
	for total < 256<<20 {
		n, err := c.Write(chunk)
		total += n
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
				return errf("write: %v, want os.ErrDeadlineExceeded", err)
			}
			break
		}
	}
	if total == 0 || total >= 256<<20 {
		return errf("wrote %d bytes to a peer that never reads, want some but not all 256 MiB", total)
	}
	if el := time.Since(start); el < 200*time.Millisecond || el > 2*time.Second {
		return errf("write timed out after %v, want 200ms", el)
	}
	return nil
}

func listenerCloseUnblocksAccept() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := l.Close(); err != nil {
		return err
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			return errf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		return errf("Close did not unblock Accept")
	}
	// The port is free again, and dialing it is refused.
	if _, err := net.Dial("tcp", l.Addr().String()); !errors.Is(err, syscall.ECONNREFUSED) {
		return errf("dial a closed listener: %v, want ECONNREFUSED", err)
	}
	return nil
}

func addrInUse() error {
	l, err := net.Listen("tcp", ":7100")
	if err != nil {
		return err
	}
	defer l.Close()
	_, err = net.Listen("tcp", ":7100")
	if !errors.Is(err, syscall.EADDRINUSE) {
		return errf("second Listen on :7100: %v, want EADDRINUSE", err)
	}
	_, err = net.Listen("tcp", "127.0.0.1:7100")
	if !errors.Is(err, syscall.EADDRINUSE) {
		return errf("Listen on 127.0.0.1:7100 under a wildcard listener: %v, want EADDRINUSE", err)
	}
	l.Close()
	l2, err := net.Listen("tcp", ":7100")
	if err != nil {
		return errf("Listen after Close: %v", err)
	}
	return l2.Close()
}

func addrNotAvail() error {
	_, err := net.Listen("tcp", "198.51.100.1:0") // TEST-NET-2: no host has it
	if !errors.Is(err, syscall.EADDRNOTAVAIL) {
		return errf("Listen on a foreign address: %v, want EADDRNOTAVAIL", err)
	}
	return nil
}

func ephemeralPort() error {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return err
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if port < 1024 || port > 65535 {
		return errf("Listen(:0) got port %d, want an ephemeral one", port)
	}
	l2, err := net.Listen("tcp", ":0")
	if err != nil {
		return err
	}
	defer l2.Close()
	if l2.Addr().(*net.TCPAddr).Port == port {
		return errf("two Listen(:0) got the same port %d", port)
	}
	go func() {
		c, err := l.Accept()
		if err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return err
	}
	defer c.Close()
	return echoOnce(c, "ephemeral")
}

func loopback() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
		io.Copy(c, c)
		c.Close()
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	s := <-accepted
	if s == nil {
		return errf("accept failed")
	}
	if s.RemoteAddr().String() != c.LocalAddr().String() || s.LocalAddr().String() != c.RemoteAddr().String() {
		return errf("loopback addresses: accepted %v->%v, dialed %v->%v", s.RemoteAddr(), s.LocalAddr(), c.LocalAddr(), c.RemoteAddr())
	}
	if ip := c.LocalAddr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		return errf("loopback LocalAddr = %v, want 127.0.0.1", ip)
	}
	return echoOnce(c, "over loopback")
}

// A listener bound to 127.0.0.1 is not reachable on the host's own address.
func loopbackOnlyListener() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	c, err := net.Dial("tcp", addr(7003))
	if err != nil {
		return err
	}
	own := c.LocalAddr().(*net.TCPAddr).IP
	c.Close()
	if own.IsLoopback() {
		return nil // natively against 127.0.0.1 there is no other address to try
	}
	_, err = net.Dial("tcp", net.JoinHostPort(own.String(), strconv.Itoa(port)))
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return errf("dial %v:%d for a 127.0.0.1 listener: %v, want ECONNREFUSED", own, port, err)
	}
	return nil
}

func concurrentConns() error {
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr(7000))
			if err != nil {
				errs[i] = err
				return
			}
			defer c.Close()
			for j := range 5 {
				if err := echoOnce(c, fmt.Sprintf("conn %d message %d", i, j)); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func largeTransfer() error {
	c, err := net.Dial("tcp", addr(7000))
	if err != nil {
		return err
	}
	defer c.Close()
	const size = 8<<20 + 4321
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 31 >> 4)
	}
	want := sha256.Sum256(data)
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(data) // one big write, split by the stack
		if err == nil {
			err = c.(*net.TCPConn).CloseWrite()
		}
		werr <- err
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	h := sha256.New()
	got, err := io.Copy(h, c)
	if err != nil {
		return errf("read the echo: %v after %d bytes", err, got)
	}
	if err := <-werr; err != nil {
		return errf("write: %v", err)
	}
	if got != size || !bytes.Equal(h.Sum(nil), want[:]) {
		return errf("echoed %d bytes with a different digest, want %d", got, size)
	}
	return nil
}

func sockopts() error {
	c, err := net.Dial("tcp", addr(7000))
	if err != nil {
		return err
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	for _, o := range []struct {
		name string
		err  error
	}{
		{"SetKeepAlive", tc.SetKeepAlive(true)},
		{"SetKeepAlivePeriod", tc.SetKeepAlivePeriod(30 * time.Second)},
		{"SetKeepAliveConfig", tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: time.Minute, Interval: 10 * time.Second, Count: 3})},
		{"SetNoDelay", tc.SetNoDelay(true)},
		{"SetLinger", tc.SetLinger(0)},
		{"SetReadBuffer", tc.SetReadBuffer(1 << 20)},
		{"SetWriteBuffer", tc.SetWriteBuffer(1 << 20)},
	} {
		if o.err != nil {
			return errf("%s: %v, want nil", o.name, o.err)
		}
	}
	return echoOnce(c, "after sockopts")
}

func peerCloseEOF() error {
	c, err := net.Dial("tcp", addr(7004))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 10))
	if n != 0 || err != io.EOF {
		return errf("read after the peer closed = %d %v, want 0 io.EOF", n, err)
	}
	// EOF stays.
	if _, err := c.Read(make([]byte, 10)); err != io.EOF {
		return errf("second read = %v, want io.EOF", err)
	}
	return nil
}

// Writing to a peer that closed: the first write is accepted, the peer's RST
// comes back, and later writes fail with EPIPE (or ECONNRESET).
func writeAfterPeerClose() error {
	c, err := net.Dial("tcp", addr(7004))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		return errf("read: %v, want io.EOF", err)
	}
	var werr error
	for i := 0; i < 20 && werr == nil; i++ {
		_, werr = c.Write([]byte("anyone there?"))
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
		return errf("writes to a closed peer: %v, want EPIPE or ECONNRESET", werr)
	}
	return nil
}

// A peer that closes with unread data resets the connection.
func resetByPeer() error {
	c, err := net.Dial("tcp", addr(7005))
	if err != nil {
		return err
	}
	defer c.Close()
	io.WriteString(c, "you will not read this")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 10))
	if !errors.Is(err, syscall.ECONNRESET) {
		return errf("read after the peer closed with unread data: %v, want ECONNRESET", err)
	}
	return nil
}

func closedConn() error {
	c, err := net.Dial("tcp", addr(7000))
	if err != nil {
		return err
	}
	if err := c.Close(); err != nil {
		return err
	}
	if err := c.Close(); !errors.Is(err, net.ErrClosed) {
		return errf("second Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		return errf("read after Close: %v, want net.ErrClosed", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		return errf("write after Close: %v, want net.ErrClosed", err)
	}
	return nil
}

func zeroLengthIO() error {
	c, err := net.Dial("tcp", addr(7000))
	if err != nil {
		return err
	}
	defer c.Close()
	if n, err := c.Write(nil); n != 0 || err != nil {
		return errf("zero-length write = %d %v", n, err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		return errf("zero-length read = %d %v", n, err)
	}
	return echoOnce(c, "after zero-length io")
}

// A node that resolves names from /etc can still use names that begin with
// "etc" in its working directory (under seedfall, the root).
func filesNextToEtc() error {
	if b, err := os.ReadFile("/etc/hosts"); err != nil || len(b) == 0 {
		return errf("read /etc/hosts: %d bytes, %v", len(b), err)
	}
	if fi, err := os.Stat("/etc"); err != nil || !fi.IsDir() {
		return errf("stat /etc = %v %v, want a directory", fi, err)
	}
	if ents, err := os.ReadDir("/etc"); err != nil || !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == "hosts" }) {
		return errf("ReadDir(/etc) lacks hosts: %v", err)
	}
	if ents, err := os.ReadDir("/"); err != nil || !slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == "etc" && e.IsDir() }) {
		return errf("ReadDir(/) lacks the etc directory: %v", err)
	}
	if err := os.MkdirAll(filepath.Join("etcd-data", "member"), 0o755); err != nil {
		return errf("MkdirAll(etcd-data/member): %v", err)
	}
	defer os.RemoveAll("etcd-data")
	if err := os.WriteFile("etcetera", []byte("x"), 0o644); err != nil {
		return errf("WriteFile(etcetera): %v", err)
	}
	defer os.Remove("etcetera")
	if b, err := os.ReadFile("etcetera"); err != nil || string(b) != "x" {
		return errf("ReadFile(etcetera) = %q %v", b, err)
	}
	return nil
}

func ipv6Loopback() error {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			fmt.Fprintf(c, "%s\n", c.RemoteAddr())
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	b, _ := io.ReadAll(c)
	if got := strings.TrimSpace(string(b)); got != c.LocalAddr().String() || !strings.HasPrefix(got, "[::1]:") {
		return errf("over ::1 the server saw %q, the dialer is %v", got, c.LocalAddr())
	}
	// A listener on ::1 is not reachable over 127.0.0.1.
	port := l.Addr().(*net.TCPAddr).Port
	if _, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port)); !errors.Is(err, syscall.ECONNREFUSED) {
		return errf("dial 127.0.0.1 for a ::1 listener: %v, want ECONNREFUSED", err)
	}
	return nil
}

func localhost() error {
	addrs, err := net.LookupHost("localhost")
	if err != nil || !slices.Contains(addrs, "127.0.0.1") {
		return errf("LookupHost(localhost) = %v %v, want 127.0.0.1 among them", addrs, err)
	}
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		return err
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	c, err := net.Dial("tcp", "localhost:"+strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	if err != nil {
		return err
	}
	defer c.Close()
	if ip := c.RemoteAddr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		return errf("dialing localhost reached %v", ip)
	}
	return echoOnce(c, "via localhost")
}

func acceptDeadline() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	start := time.Now()
	l.(*net.TCPListener).SetDeadline(start.Add(30 * time.Millisecond))
	_, err = l.Accept()
	if !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
		return errf("Accept past its deadline: %v, want os.ErrDeadlineExceeded", err)
	}
	if el := time.Since(start); el < 30*time.Millisecond || el > time.Second {
		return errf("Accept timed out after %v, want 30ms", el)
	}
	// With the deadline cleared, Accept works again.
	l.(*net.TCPListener).SetDeadline(time.Time{})
	go func() {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			c.Close()
		}
	}()
	c, err := l.Accept()
	if err != nil {
		return errf("Accept after clearing the deadline: %v", err)
	}
	return c.Close()
}

func closeUnblocksRead() error {
	c, err := net.Dial("tcp", addr(7002))
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			return errf("Read interrupted by Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		return errf("Close did not unblock Read")
	}
	return nil
}

// Connections the kernel completed but nobody accepted are reset when the
// listener closes.
func listenerCloseResetsQueued() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		l.Close()
		return errf("dial a listener that does not accept: %v", err)
	}
	defer c.Close()
	time.Sleep(10 * time.Millisecond)
	l.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	if !errors.Is(err, syscall.ECONNRESET) {
		return errf("read on a connection its listener dropped: %v, want ECONNRESET", err)
	}
	return nil
}

// After CloseRead, reads see EOF while writes still work.
func closeRead() error {
	c, err := net.Dial("tcp", addr(7001))
	if err != nil {
		return err
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	if err := tc.CloseRead(); err != nil {
		return errf("CloseRead: %v", err)
	}
	if n, err := tc.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		return errf("read after CloseRead = %d %v, want io.EOF", n, err)
	}
	if _, err := io.WriteString(tc, "still writing"); err != nil {
		return errf("write after CloseRead: %v", err)
	}
	return nil
}
