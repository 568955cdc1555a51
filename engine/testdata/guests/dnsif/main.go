// dnsif checks name resolution and network interfaces from inside a node
// built with the net overlay. With -role server it listens on :7000 and
// accepts forever; with -role client (the default) it runs the checks and
// prints "ok <name>: <detail>" or "FAIL <name>: ..." per check, then the
// interface table as "iface ..." and "addr ..." lines, and exits 1 if any
// check failed.
//
// What a user of the network sees: a lookup that /etc/hosts cannot answer
// (any record type, any Lookup function or Resolver) fails at once with a
// *net.DNSError whose IsNotFound is true, no query reaches 127.0.0.1:53,
// node names keep resolving, and net.Interfaces reports lo and eth0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

var server = flag.String("server", "server", "the server node's name")

type check struct {
	name string
	fn   func() (string, error)
}

func main() {
	role := flag.String("role", "client", "server or client")
	flag.Parse()
	if *role == "server" {
		serve()
		return
	}
	waitForServer()
	// A DNS "server" on the resolver's default address: whatever Go's
	// resolver sends there arrives here.
	dns := startDNSCatcher()
	failed := 0
	checks := []check{
		{"dns_nxdomain_at_once", nxdomainAtOnce},
		{"dns_no_traffic", func() (string, error) { return dns.none() }},
		{"dns_custom_dial_goes_out", func() (string, error) { return dns.customDial() }},
		{"hosts_node_name", nodeName},
		{"hosts_localhost", localhostResolves},
		{"hosts_reverse", reverse},
		{"interfaces", interfaces},
		{"interface_by", interfaceBy},
		{"listen_any_reaches_every_addr", listenAnyReachesEveryAddr},
	}
	for _, c := range checks {
		detail, err := c.fn()
		if err != nil {
			fmt.Printf("FAIL %s: %v\n", c.name, err)
			failed++
		} else {
			fmt.Printf("ok %s: %s\n", c.name, detail)
		}
	}
	printInterfaces()
	fmt.Printf("%d checks, %d failed\n", len(checks), failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func serve() {
	l, err := net.Listen("tcp", ":7000")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Println("accept:", err)
			os.Exit(1)
		}
		go func() { io.Copy(c, c); c.Close() }()
	}
}

func waitForServer() {
	for i := 0; i < 100; i++ {
		c, err := net.Dial("tcp", *server+":7000")
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("the server never listened")
	os.Exit(1)
}

// lookup is one name lookup that /etc/hosts cannot answer.
type lookup struct {
	what string
	fn   func(ctx context.Context) error
}

func lookups() []lookup {
	goRes := &net.Resolver{PreferGo: true}
	plain := &net.Resolver{}
	ls := []lookup{
		{"LookupTXT _grpc_config.server", func(ctx context.Context) error { _, err := net.LookupTXT("_grpc_config." + *server); return err }},
		{"LookupTXT _grpc_config.nosuch.example.com", func(ctx context.Context) error {
			_, err := net.LookupTXT("_grpc_config.nosuch.example.com")
			return err
		}},
		{"LookupSRV _grpclb._tcp.server", func(ctx context.Context) error { _, _, err := net.LookupSRV("grpclb", "tcp", *server); return err }},
		{"LookupSRV _nats._tcp.example.com", func(ctx context.Context) error {
			_, _, err := net.LookupSRV("", "", "_nats._tcp.example.com")
			return err
		}},
		{"LookupMX example.com", func(ctx context.Context) error { _, err := net.LookupMX("example.com"); return err }},
		{"LookupNS example.com", func(ctx context.Context) error { _, err := net.LookupNS("example.com"); return err }},
		{"LookupCNAME www.example.com", func(ctx context.Context) error { _, err := net.LookupCNAME("www.example.com"); return err }},
		{"LookupHost nosuch", func(ctx context.Context) error { _, err := net.LookupHost("nosuch"); return err }},
		{"LookupIP nosuch.example.com", func(ctx context.Context) error { _, err := net.LookupIP("nosuch.example.com"); return err }},
		{"LookupAddr 192.0.2.1", func(ctx context.Context) error { _, err := net.LookupAddr("192.0.2.1"); return err }},
		{"LookupAddr 2001:db8::1", func(ctx context.Context) error { _, err := net.LookupAddr("2001:db8::1"); return err }},
		{"ResolveTCPAddr nosuch:80", func(ctx context.Context) error { _, err := net.ResolveTCPAddr("tcp", "nosuch:80"); return err }},
		{"Dial nosuch.example.com:443", func(ctx context.Context) error {
			c, err := net.Dial("tcp", "nosuch.example.com:443")
			if err == nil {
				c.Close()
			}
			return err
		}},
	}
	for _, r := range []struct {
		name string
		r    *net.Resolver
	}{{"DefaultResolver", net.DefaultResolver}, {"Resolver{PreferGo}", goRes}, {"Resolver{}", plain}} {
		r := r
		ls = append(ls,
			lookup{r.name + ".LookupTXT _grpc_config.server", func(ctx context.Context) error {
				_, err := r.r.LookupTXT(ctx, "_grpc_config."+*server)
				return err
			}},
			lookup{r.name + ".LookupSRV _grpclb._tcp.server", func(ctx context.Context) error {
				_, _, err := r.r.LookupSRV(ctx, "grpclb", "tcp", *server)
				return err
			}},
			lookup{r.name + ".LookupMX example.org", func(ctx context.Context) error { _, err := r.r.LookupMX(ctx, "example.org"); return err }},
			lookup{r.name + ".LookupNS example.org", func(ctx context.Context) error { _, err := r.r.LookupNS(ctx, "example.org"); return err }},
			lookup{r.name + ".LookupCNAME nosuch.example.org", func(ctx context.Context) error {
				_, err := r.r.LookupCNAME(ctx, "nosuch.example.org")
				return err
			}},
			lookup{r.name + ".LookupHost nosuch.example.org", func(ctx context.Context) error {
				_, err := r.r.LookupHost(ctx, "nosuch.example.org")
				return err
			}},
			lookup{r.name + ".LookupIPAddr nosuch.example.org", func(ctx context.Context) error {
				_, err := r.r.LookupIPAddr(ctx, "nosuch.example.org")
				return err
			}},
			lookup{r.name + ".LookupNetIP ip6 nosuch.example.org", func(ctx context.Context) error {
				_, err := r.r.LookupNetIP(ctx, "ip6", "nosuch.example.org")
				return err
			}},
			lookup{r.name + ".LookupAddr 198.51.100.7", func(ctx context.Context) error {
				_, err := r.r.LookupAddr(ctx, "198.51.100.7")
				return err
			}},
		)
	}
	return ls
}

// nxdomainAtOnce runs every lookup: each must fail with a not-found
// DNSError, and all of them together must take no virtual time.
func nxdomainAtOnce() (string, error) {
	start := time.Now()
	var bad []string
	for _, l := range lookups() {
		t0 := time.Now()
		err := l.fn(context.Background())
		took := time.Since(t0)
		var de *net.DNSError
		switch {
		case !errors.As(err, &de):
			bad = append(bad, fmt.Sprintf("%s: %v, want a *net.DNSError", l.what, err))
		case !de.IsNotFound || de.IsTimeout || de.IsTemporary:
			bad = append(bad, fmt.Sprintf("%s: %v (IsNotFound %v, IsTimeout %v, IsTemporary %v), want IsNotFound only", l.what, err, de.IsNotFound, de.IsTimeout, de.IsTemporary))
		}
		fmt.Printf("lookup %s: %v (notfound %v) in %v\n", l.what, err, de != nil && de.IsNotFound, took)
	}
	took := time.Since(start)
	if took != 0 {
		bad = append(bad, fmt.Sprintf("the lookups took %v of virtual time, want 0", took))
	}
	if len(bad) > 0 {
		return "", errors.New(strings.Join(bad, "; "))
	}
	return fmt.Sprintf("%d lookups, not found, in %v", len(lookups()), took), nil
}

// dnsCatcher listens where Go's resolver sends queries by default
// (127.0.0.1:53, UDP then TCP) and counts what arrives. To a query it
// answers NXDOMAIN, echoing the question, as a DNS server would.
type dnsCatcher struct {
	udp, tcp atomic.Int64
	err      error
}

func startDNSCatcher() *dnsCatcher {
	d := &dnsCatcher{}
	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	if err != nil {
		d.err = err
		return d
	}
	l, err := net.Listen("tcp", "127.0.0.1:53")
	if err != nil {
		d.err = err
		return d
	}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			d.udp.Add(1)
			if n >= 12 {
				pc.WriteTo(nxdomain(buf[:n]), from)
			}
		}
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			d.tcp.Add(1)
			c.Close()
		}
	}()
	return d
}

// nxdomain turns a query into its NXDOMAIN answer: QR and RA set, RCODE 3.
func nxdomain(q []byte) []byte {
	a := slices.Clone(q)
	a[2] |= 0x80                // QR: a response
	a[3] = a[3]&0x70 | 0x80 | 3 // RA, NXDOMAIN
	return a
}

// none checks that the lookups sent nothing to the resolver's address.
func (d *dnsCatcher) none() (string, error) {
	if d.err != nil {
		return "", d.err
	}
	time.Sleep(100 * time.Millisecond) // anything sent has arrived by now
	if u, t := d.udp.Load(), d.tcp.Load(); u != 0 || t != 0 {
		return "", fmt.Errorf("127.0.0.1:53 received %d datagrams and %d connections during the lookups, want none", u, t)
	}
	return "127.0.0.1:53 received nothing", nil
}

// customDial checks that a Resolver with its own Dial still talks to the
// server it dials (here the catcher), whose NXDOMAIN it reports.
func (d *dnsCatcher) customDial() (string, error) {
	if d.err != nil {
		return "", d.err
	}
	var dials atomic.Int64
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		dials.Add(1)
		var dd net.Dialer
		return dd.DialContext(ctx, "udp", "127.0.0.1:53")
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := r.LookupTXT(ctx, "_grpc_config.elsewhere.example.com")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		return "", fmt.Errorf("LookupTXT through the catcher: %v, want not found", err)
	}
	if dials.Load() == 0 || d.udp.Load() == 0 {
		return "", fmt.Errorf("%d dials, %d datagrams at 127.0.0.1:53: the query never went out", dials.Load(), d.udp.Load())
	}
	return fmt.Sprintf("%d dials, %d queries answered by the node's own server: %v", dials.Load(), d.udp.Load(), err), nil
}

func nodeName() (string, error) {
	addrs, err := net.LookupHost(*server)
	if err != nil || len(addrs) != 1 {
		return "", fmt.Errorf("LookupHost(%s) = %v %v", *server, addrs, err)
	}
	ips, err := net.LookupIP(*server)
	if err != nil || len(ips) != 1 || ips[0].String() != addrs[0] {
		return "", fmt.Errorf("LookupIP(%s) = %v %v, want %s", *server, ips, err, addrs[0])
	}
	ta, err := net.ResolveTCPAddr("tcp", *server+":7000")
	if err != nil || ta.IP.String() != addrs[0] {
		return "", fmt.Errorf("ResolveTCPAddr = %v %v", ta, err)
	}
	cname, err := net.LookupCNAME(*server)
	if err != nil {
		return "", fmt.Errorf("LookupCNAME(%s) = %q %v", *server, cname, err)
	}
	c, err := net.Dial("tcp", *server+":7000")
	if err != nil {
		return "", err
	}
	defer c.Close()
	if got := c.RemoteAddr().(*net.TCPAddr).IP.String(); got != addrs[0] {
		return "", fmt.Errorf("dialed %s, connected to %s", addrs[0], got)
	}
	return fmt.Sprintf("%s is %s (CNAME %s), dialed", *server, addrs[0], cname), nil
}

func localhostResolves() (string, error) {
	addrs, err := net.LookupHost("localhost")
	if err != nil || !slices.Contains(addrs, "127.0.0.1") {
		return "", fmt.Errorf("LookupHost(localhost) = %v %v", addrs, err)
	}
	return fmt.Sprintf("localhost is %v", addrs), nil
}

func reverse() (string, error) {
	addrs, err := net.LookupHost(*server)
	if err != nil {
		return "", err
	}
	names, err := net.LookupAddr(addrs[0])
	if err != nil || len(names) == 0 || strings.TrimSuffix(names[0], ".") != *server {
		return "", fmt.Errorf("LookupAddr(%s) = %v %v, want %s", addrs[0], names, err, *server)
	}
	lo, err := net.LookupAddr("127.0.0.1")
	if err != nil || len(lo) == 0 {
		return "", fmt.Errorf("LookupAddr(127.0.0.1) = %v %v", lo, err)
	}
	return fmt.Sprintf("%s is %v, 127.0.0.1 is %v", addrs[0], names, lo), nil
}

// myAddr is the node's address as the server sees it.
func myAddr() (netip.Addr, error) {
	c, err := net.Dial("tcp", *server+":7000")
	if err != nil {
		return netip.Addr{}, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap(), nil
}

func interfaces() (string, error) {
	me, err := myAddr()
	if err != nil {
		return "", err
	}
	ift, err := net.Interfaces()
	if err != nil || len(ift) != 2 {
		return "", fmt.Errorf("Interfaces() = %v %v, want lo and eth0", ift, err)
	}
	lo, eth := ift[0], ift[1]
	if lo.Name != "lo" || lo.Index != 1 || lo.Flags != net.FlagUp|net.FlagLoopback|net.FlagRunning || len(lo.HardwareAddr) != 0 {
		return "", fmt.Errorf("lo = %+v", lo)
	}
	if eth.Name != "eth0" || eth.Index != 2 || eth.Flags != net.FlagUp|net.FlagBroadcast|net.FlagMulticast|net.FlagRunning || len(eth.HardwareAddr) != 6 {
		return "", fmt.Errorf("eth0 = %+v", eth)
	}
	loAddrs, err := lo.Addrs()
	if err != nil || fmt.Sprint(loAddrs) != "[127.0.0.1/8 ::1/128]" {
		return "", fmt.Errorf("lo.Addrs() = %v %v", loAddrs, err)
	}
	ethAddrs, err := eth.Addrs()
	if err != nil || len(ethAddrs) != 1 {
		return "", fmt.Errorf("eth0.Addrs() = %v %v", ethAddrs, err)
	}
	ipn := ethAddrs[0].(*net.IPNet)
	if a, _ := netip.AddrFromSlice(ipn.IP); a.Unmap() != me {
		return "", fmt.Errorf("eth0 has %v, but the node dials from %v", ipn, me)
	}
	all, err := net.InterfaceAddrs()
	if err != nil || len(all) != 3 {
		return "", fmt.Errorf("InterfaceAddrs() = %v %v", all, err)
	}
	// As NATS does for a server on 0.0.0.0: every unicast address.
	var unicast []string
	for _, a := range all {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsGlobalUnicast() {
			unicast = append(unicast, ipn.IP.String())
		}
	}
	if len(unicast) != 1 || unicast[0] != me.String() {
		return "", fmt.Errorf("global unicast addresses %v, want [%v]", unicast, me)
	}
	return fmt.Sprintf("lo %v, eth0 %v %v, all %v", loAddrs, eth.HardwareAddr, ethAddrs, all), nil
}

func interfaceBy() (string, error) {
	eth, err := net.InterfaceByName("eth0")
	if err != nil || eth.Index != 2 {
		return "", fmt.Errorf("InterfaceByName(eth0) = %v %v", eth, err)
	}
	lo, err := net.InterfaceByIndex(1)
	if err != nil || lo.Name != "lo" {
		return "", fmt.Errorf("InterfaceByIndex(1) = %v %v", lo, err)
	}
	if ifi, err := net.InterfaceByName("wlan0"); err == nil {
		return "", fmt.Errorf("InterfaceByName(wlan0) = %v, want an error", ifi)
	}
	_, errIdx := net.InterfaceByIndex(7)
	if errIdx == nil {
		return "", errors.New("InterfaceByIndex(7) succeeded")
	}
	return fmt.Sprintf("eth0 is %d, 1 is %s, index 7: %v", eth.Index, lo.Name, errIdx), nil
}

// listenAnyReachesEveryAddr listens on 0.0.0.0 and dials each address that
// net.InterfaceAddrs reports, as a server that advertises its addresses
// expects its clients to.
func listenAnyReachesEveryAddr() (string, error) {
	l, err := net.Listen("tcp", "0.0.0.0:7100")
	if err != nil {
		return "", err
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	var reached []string
	for _, a := range addrs {
		ip := a.(*net.IPNet).IP
		if ip.To4() == nil {
			continue // a 0.0.0.0 listener is IPv4 only
		}
		hp := net.JoinHostPort(ip.String(), "7100")
		c, err := net.Dial("tcp", hp)
		if err != nil {
			return "", fmt.Errorf("dial %s: %v", hp, err)
		}
		c.Close()
		reached = append(reached, hp)
	}
	return fmt.Sprintf("reached %v", reached), nil
}

func printInterfaces() {
	ift, err := net.Interfaces()
	if err != nil {
		fmt.Println("interfaces:", err)
		return
	}
	for _, ifi := range ift {
		addrs, _ := ifi.Addrs()
		fmt.Printf("iface %d %s mtu=%d mac=%q flags=%v addrs=%v\n", ifi.Index, ifi.Name, ifi.MTU, ifi.HardwareAddr.String(), ifi.Flags, addrs)
	}
	all, err := net.InterfaceAddrs()
	fmt.Printf("addrs %v %v\n", all, err)
}
