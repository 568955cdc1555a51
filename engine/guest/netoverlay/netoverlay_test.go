package netoverlay

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(goTool(), "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestFilesOnThisGoroot(t *testing.T) {
	root := goroot(t)
	files, err := Files(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(patches)+2 {
		t.Errorf("%d files, want %d", len(files), len(patches)+2)
	}
	if !bytes.Equal(files[NewDNSIfFile], seedfallDNSIfGo) || !bytes.HasPrefix(seedfallDNSIfGo, []byte("// Added to package net")) {
		t.Errorf("%s is not the embedded file", NewDNSIfFile)
	}
	withUDP, err := FilesWith(root, Options{UDP: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(withUDP) != len(patches)+3 || !bytes.Equal(withUDP[NewUDPFile], seedfallUDPGo) {
		t.Errorf("FilesWith UDP: %d files, want %d with %s", len(withUDP), len(patches)+3, NewUDPFile)
	}
	if !bytes.Equal(files[NewFile], seedfallGo) || !bytes.HasPrefix(seedfallGo, []byte("// Added to package net")) {
		t.Errorf("%s is not the embedded file", NewFile)
	}
	for _, p := range patches {
		got := string(files[p.file])
		orig, err := os.ReadFile(filepath.Join(root, p.file))
		if err != nil {
			t.Fatal(err)
		}
		// Each hook sits right after its anchor, once.
		for _, h := range p.hooks {
			if n := strings.Count(got, h.anchor+"\n"+h.insert); n != 1 {
				t.Errorf("%s: hook after %q found %d times, want 1", p.file, h.anchor, n)
			}
		}
		// Nothing else changed.
		stripped := got
		for _, h := range p.hooks {
			stripped = strings.Replace(stripped, h.anchor+"\n"+h.insert, h.anchor+"\n", 1)
		}
		if stripped != string(orig) {
			t.Errorf("%s: the patch changed more than the hooks", p.file)
		}
	}
	for file, want := range map[string]string{
		"src/net/net_fake.go":       "seedfallSocket(ctx, net, family, sotype, laddr, raddr)",
		"src/net/dnsclient_unix.go": "seedfallExchange(r, q)",
		"src/net/interface_stub.go": "seedfallInterfaceTable(ifindex)",
	} {
		if !strings.Contains(string(files[file]), want) {
			t.Errorf("%s does not call %s", file, want)
		}
	}
	// The DNS answer comes before the query is built and sent.
	dns := string(files["src/net/dnsclient_unix.go"])
	if i, j := strings.Index(dns, "seedfallExchange(r, q)"), strings.Index(dns, "newRequest(q, ad)"); i < 0 || j < 0 || i > j {
		t.Errorf("dnsclient_unix.go: seedfallExchange at %d, newRequest at %d: the answer must come first", i, j)
	}
	ifs := string(files["src/net/interface_stub.go"])
	if !strings.Contains(ifs, "func interfaceAddrTable(ifi *Interface) ([]Addr, error) {\n\treturn seedfallInterfaceAddrTable(ifi)") {
		t.Errorf("interface_stub.go: interfaceAddrTable does not return seedfallInterfaceAddrTable:\n%s", ifs)
	}
}

// fakeGoroot copies the patched files of this machine's GOROOT into a
// temporary one, after edit has had its way with them.
func fakeGoroot(t *testing.T, version string, edit func(file, src string) string) string {
	t.Helper()
	real := goroot(t)
	dir := t.TempDir()
	if version != "" {
		if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte(version+"\ntime 2030-01-01\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range patches {
		src, err := os.ReadFile(filepath.Join(real, p.file))
		if err != nil {
			t.Fatal(err)
		}
		s := edit(p.file, string(src))
		if s == "\x00delete" {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(p.file))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFilesFailsClearly(t *testing.T) {
	const acceptLine = `netfd = newFD("tcp", d)`
	tests := []struct {
		name    string
		version string
		edit    func(file, src string) string
		want    []string // substrings of the error
	}{
		{
			"anchor renamed in a future Go",
			"go1.99.0",
			func(file, src string) string {
				if file == "src/net/fd_fake.go" {
					return strings.Replace(src, acceptLine, `netfd = newNetFD("tcp", d)`, 1)
				}
				return src
			},
			[]string{"go1.99.0", "src/net/fd_fake.go", acceptLine, "appears 0 times", "net_overlay"},
		},
		{
			"anchor twice",
			"go1.99.1",
			func(file, src string) string {
				if file == "src/net/tcpsockopt_stub.go" {
					return src + "\nfunc setNoDelay(fd *netFD, noDelay bool) error {\n"
				}
				return src
			},
			[]string{"go1.99.1", "src/net/tcpsockopt_stub.go", "setNoDelay", "appears 2 times"},
		},
		{
			"file gone",
			"go1.99.2",
			func(file, src string) string {
				if file == "src/net/sockopt_fake.go" {
					return "\x00delete"
				}
				return src
			},
			[]string{"go1.99.2", "cannot read src/net/sockopt_fake.go"},
		},
		{
			"GOROOT already patched",
			"go1.26.0",
			func(file, src string) string { return src + "\n// seedfall was here\n" },
			[]string{"go1.26.0", "already patched"},
		},
		{
			"no VERSION file",
			"",
			func(file, src string) string { return strings.Replace(src, "func socket(", "func sock(", 1) },
			[]string{"unknown Go version", "src/net/net_fake.go"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Files(fakeGoroot(t, tt.version, tt.edit))
			if err == nil {
				t.Fatal("Files succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestFilesOnUntouchedCopy(t *testing.T) {
	dir := fakeGoroot(t, "go1.26.8", func(_, src string) string { return src })
	if _, err := Files(dir); err != nil {
		t.Errorf("Files on a faithful copy: %v", err)
	}
}

func TestEtcFiles(t *testing.T) {
	files, err := EtcFiles([]string{"n1", "client"}, []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(files["hosts"]), "127.0.0.1\tlocalhost\n10.0.0.1\tn1\n10.0.0.2\tclient\n"; got != want {
		t.Errorf("hosts = %q, want %q", got, want)
	}
	if got := string(files["nsswitch.conf"]); got != "hosts: files\n" {
		t.Errorf("nsswitch.conf = %q", got)
	}
	for _, bad := range [][]string{{"a b"}, {""}, {"x#y"}} {
		if _, err := EtcFiles(bad, []netip.Addr{netip.MustParseAddr("10.0.0.1")}); err == nil || !strings.Contains(err.Error(), "cannot be a host name") {
			t.Errorf("EtcFiles(%q) error = %v", bad, err)
		}
	}
	if _, err := EtcFiles([]string{"a"}, nil); err == nil {
		t.Error("EtcFiles with a missing address succeeded")
	}
}

const guestMain = `package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	ln, err := net.Listen("tcp", ":8080")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.RemoteAddr)
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := (&net.Dialer{KeepAlive: time.Second}).DialContext(ctx, "tcp", "server:8080")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	tc := c.(*net.TCPConn)
	fmt.Println(tc.SetKeepAlive(true), tc.SetKeepAlivePeriod(time.Second), tc.SetNoDelay(true), tc.SetLinger(0))
	fmt.Println(tc.SetReadBuffer(1<<16), tc.SetWriteBuffer(1<<16), tc.SetDeadline(time.Now().Add(time.Second)))
	c.Close()
	resp, err := http.Get("http://server:8080/")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(string(b))
	}
	udp()
	dnsif()
}

// dnsif uses the DNS answer and the interface table.
func dnsif() {
	_, err := net.LookupTXT("_grpc_config.server")
	fmt.Println(err)
	ift, err := net.Interfaces()
	fmt.Println(ift, err)
	addrs, err := net.InterfaceAddrs()
	fmt.Println(addrs, err)
}

// udp uses every datagram entry point of package net.
func udp() {
	pc, err := net.ListenPacket("udp", ":5353")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pc.Close()
	pc.SetReadDeadline(time.Now().Add(time.Second))
	uc, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5353})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer uc.Close()
	uc.Write([]byte("ping"))
	buf := make([]byte, 1500)
	n, from, err := pc.ReadFrom(buf)
	fmt.Println(n, from, err)
	pc.WriteTo(buf[:n], from)
	n, err = uc.Read(buf)
	fmt.Println(n, err, uc.LocalAddr(), uc.RemoteAddr())
	u := pc.(*net.UDPConn)
	n, ap, err := u.ReadFromUDPAddrPort(buf)
	fmt.Println(n, ap, err)
	u.WriteToUDPAddrPort(buf[:n], ap)
	n, _, _, ua, err := u.ReadMsgUDP(buf, nil)
	fmt.Println(n, ua, err)
	u.WriteMsgUDP(buf[:n], nil, ua)
}
`

// TestOverlayCompiles builds a guest that uses plain net and net/http with
// the overlay, and checks that the binary imports the seedfall host calls.
func TestOverlayCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds wasip1 binaries (several seconds)")
	}
	udpCalls := []string{"sock_udp_bind", "sock_udp_connect", "sock_send_to", "sock_recv_from"}
	// Without the UDP part, no guest imports a UDP call: hosts that do not
	// export them can still run it.
	wasm := buildGuest(t, Options{})
	for _, name := range udpCalls {
		if bytes.Contains(wasm, []byte(name)) {
			t.Errorf("the guest built without Options.UDP imports %s", name)
		}
	}
	wasm = buildGuest(t, Options{UDP: true})
	for _, name := range append([]string{"seedfall", "sock_listen", "sock_connect", "sock_status", "sock_addrs", "sock_accept", "net_addrs"}, udpCalls...) {
		if !bytes.Contains(wasm, []byte(name)) {
			t.Errorf("the guest does not import %s", name)
		}
	}
}

// buildGuest builds guestMain for wasip1 with the overlay and returns the
// binary.
func buildGuest(t *testing.T, opts Options) []byte {
	t.Helper()
	root := goroot(t)
	files, err := FilesWith(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	replace := map[string]string{}
	for rel, content := range files {
		p := filepath.Join(dir, "overlay", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, filepath.FromSlash(rel))] = p
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": replace})
	overlayPath := filepath.Join(dir, "overlay.json")
	must(t, os.WriteFile(overlayPath, overlay, 0o644))
	src := filepath.Join(dir, "guest")
	must(t, os.MkdirAll(src, 0o755))
	must(t, os.WriteFile(filepath.Join(src, "go.mod"), []byte("module guest\n\ngo 1.26\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(src, "main.go"), []byte(guestMain), 0o644))

	out := filepath.Join(dir, "guest.wasm")
	cmd := exec.Command(goTool(), "build", "-trimpath", "-overlay", overlayPath, "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build with the overlay: %v\n%s", err, b)
	}
	wasm, err := os.ReadFile(out)
	must(t, err)
	return wasm
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHostABIDocumented checks that every host import of the guest file is
// documented in the package doc, which is the integrator's contract.
func TestHostABIDocumented(t *testing.T) {
	doc, err := os.ReadFile("netoverlay.go")
	must(t, err)
	var imports []string
	for _, line := range strings.Split(string(seedfallGo)+string(seedfallUDPGo)+string(seedfallDNSIfGo), "\n") {
		if name, ok := strings.CutPrefix(line, "//go:wasmimport seedfall "); ok {
			imports = append(imports, name)
		}
	}
	if len(imports) < 9 {
		t.Fatalf("found %d seedfall imports in the guest files, want at least 9: %v", len(imports), imports)
	}
	for _, name := range imports {
		if !strings.Contains(string(doc), "// "+name+"(") {
			t.Errorf("host import %s is not documented in the package doc", name)
		}
	}
}
