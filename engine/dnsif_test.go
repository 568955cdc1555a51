package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Free CPU: the test times name lookups to the nanosecond.
const dnsifWorld = `{"net_overlay": true, "latency": ["1ms", "3ms"], "cpu": {"ns_per_call": 0},
	"nodes": [{"name": "server", "pkg": "./dnsif", "args": ["-role", "server"]}],
	"workload": {"name": "client", "pkg": "./dnsif"}}`

// dnsifRun runs the dnsif guest (seed 1, twice: the same digest) and fails
// the test on any FAIL line or a failed verdict.
func dnsifRun(t *testing.T) (*Result, string) {
	t.Helper()
	r := twice(t, prepare(t, dnsifWorld), 1, nil)
	out := output(r, "client")
	for _, l := range r.Lines {
		if strings.HasPrefix(l.Text, "FAIL ") {
			t.Error(l.Text)
		}
	}
	if !r.Passed || !strings.Contains(out, "9 checks, 0 failed") {
		t.Fatalf("%v %s: %s\n%s", r.Passed, r.Class, r.Reason, out)
	}
	return r, out
}

// A lookup that /etc/hosts cannot answer gets NXDOMAIN at once, as from a
// resolver that does not know the name; gRPC's first LookupTXT no longer
// waits 20 virtual seconds. Node names still resolve.
func TestDNSAnswersNXDOMAINAtOnce(t *testing.T) {
	r, out := dnsifRun(t)
	for _, want := range []string{
		// What gRPC's dns resolver asks first, as Linux reports it.
		"lookup LookupTXT _grpc_config.server: lookup _grpc_config.server on 127.0.0.1:53: no such host (notfound true) in 0s",
		"lookup LookupSRV _grpclb._tcp.server: lookup _grpclb._tcp.server on 127.0.0.1:53: no such host (notfound true) in 0s",
		"lookup Resolver{PreferGo}.LookupMX example.org: lookup example.org on 127.0.0.1:53: no such host (notfound true) in 0s",
		"lookup Resolver{}.LookupNS example.org: lookup example.org on 127.0.0.1:53: no such host (notfound true) in 0s",
		// /etc/hosts answers the rest, and has no such name.
		"lookup LookupHost nosuch: lookup nosuch: no such host (notfound true) in 0s",
		"lookup Dial nosuch.example.com:443: dial tcp: lookup nosuch.example.com: no such host (notfound true) in 0s",
		"lookup LookupAddr 192.0.2.1: lookup 192.0.2.1: no such host (notfound true) in 0s",
		"ok dns_nxdomain_at_once: 40 lookups, not found, in 0s",
		"ok dns_no_traffic: 127.0.0.1:53 received nothing",
		"ok dns_custom_dial_goes_out: 1 dials, 1 queries answered by the node's own server",
		"ok hosts_node_name: server is 10.0.0.1 (CNAME server), dialed",
		"ok hosts_localhost: localhost is [127.0.0.1]",
		"ok hosts_reverse: 10.0.0.1 is [server]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("client output:\n%s", out)
	}
	// The client's checks, server waits and dials included, take
	// milliseconds: no lookup waited for a DNS timeout.
	if r.SimNs > 2_000_000_000 {
		t.Errorf("the run took %dns of virtual time", r.SimNs)
	}
}

// net.Interfaces and InterfaceAddrs report lo and eth0 with the node's
// address, so that a server on 0.0.0.0 (NATS, say) can list its addresses.
func TestInterfacesReportLoopbackAndEth0(t *testing.T) {
	_, out := dnsifRun(t)
	for _, want := range []string{
		`iface 1 lo mtu=65536 mac="" flags=up|loopback|running addrs=[127.0.0.1/8 ::1/128]`,
		`iface 2 eth0 mtu=1500 mac="02:00:0a:00:00:02" flags=up|broadcast|multicast|running addrs=[10.0.0.2/8]`,
		"addrs [127.0.0.1/8 10.0.0.2/8 ::1/128] <nil>",
		"ok interface_by: eth0 is 2, 1 is lo, index 7: route ip+net: no such network interface",
		"ok listen_any_reaches_every_addr: reached [127.0.0.1:7100 10.0.0.2:7100]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("client output:\n%s", out)
	}
}

// gRPC's default dns:/// resolver looks up TXT _grpc_config.<host> before
// its first connection; that lookup used to wait 20 virtual seconds for DNS
// timeouts. The grpcdns guest is its own module (gRPC is no dependency of
// seedfall): the test skips when its modules cannot be downloaded.
//
// Building gRPC for wasip1 takes one and a half minutes of a cold go test
// ./... on two cores, so this test is in the slow tier, which CI runs as a
// step of its own (SEEDFALL_SLOW=1, .ci/run). TestDNSAnswersNXDOMAINAtOnce
// checks the lookups gRPC's resolver makes, in every go test.
func TestDNSGRPCFirstCallIsQuick(t *testing.T) {
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("builds gRPC for wasip1 (a minute and a half on a cold cache); run with SEEDFALL_SLOW=1")
	}
	dir, _ := filepath.Abs("testdata/guests/grpcdns")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dl := exec.CommandContext(ctx, "go", "mod", "download")
	dl.Dir = dir
	if out, err := dl.CombinedOutput(); err != nil {
		t.Skipf("gRPC check skipped: cannot download the modules of testdata/guests/grpcdns (google.golang.org/grpc): %v\n%s", err, out)
	}
	r := twice(t, prepare(t, `{"net_overlay": true, "latency": ["1ms", "3ms"],
		"nodes": [{"name": "server", "pkg": "./grpcdns", "args": ["-role", "server"]}],
		"workload": {"name": "client", "pkg": "./grpcdns"}}`), 1, nil)
	out := output(r, "client")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	m := regexp.MustCompile(`health SERVING after (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no health check answer:\n%s", out)
	}
	took, err := time.ParseDuration(m[1])
	if err != nil || took > time.Second {
		t.Errorf("the first gRPC call took %s of virtual time, want well under a second (no DNS timeouts)\n%s", m[1], out)
	}
	t.Logf("first gRPC call through dns:/// took %v of virtual time", took)
}
