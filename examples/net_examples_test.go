package examples_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// serve starts a long-running example program and stops it with the test.
func serve(t *testing.T, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}

// waitListening waits until something accepts connections on addr.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s", addr)
}

// Without network faults both replication modes keep every acknowledged
// write, and the client checks them all.
func TestPrimaryBackupPassesOnAHealthyNetwork(t *testing.T) {
	node, client := build(t, "primarybackup/node"), build(t, "primarybackup/client")
	for _, mode := range []string{"async", "sync"} {
		t.Run(mode, func(t *testing.T) {
			a, b := freeAddr(t), freeAddr(t)
			serve(t, node, "-listen", a, "-me", a, "-peer", b, "-replicate", mode)
			serve(t, node, "-listen", b, "-me", b, "-peer", a, "-replicate", mode)
			waitListening(t, a)
			waitListening(t, b)
			out, err := exec.Command(client, "-replicas", a+","+b, "-n", "30", "-settle", "200ms").CombinedOutput()
			if code := exitCode(t, err); code != 0 || !strings.Contains(string(out), "all 30 acknowledged writes read back") {
				t.Fatalf("client exited %d:\n%s", code, out)
			}
		})
	}
}

// The client catches a store that acknowledges writes and then loses them.
func TestPrimaryBackupClientCatchesALostWrite(t *testing.T) {
	client := build(t, "primarybackup/client")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/kv/k3" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		fmt.Fprint(w, "v"+strings.TrimPrefix(r.URL.Path, "/kv/k"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	out, err := exec.Command(client, "-replicas", addr, "-n", "5", "-settle", "0s").CombinedOutput()
	if code := exitCode(t, err); code != 1 || !strings.Contains(string(out), "lost acknowledged write k3=v3") {
		t.Fatalf("client exited %d:\n%s", code, out)
	}
}

// On a healthy network no deposit is retried, so both servers keep the
// balance right.
func TestRetriesPassOnAHealthyNetwork(t *testing.T) {
	server, client := build(t, "retries/server"), build(t, "retries/client")
	for _, args := range [][]string{nil, {"-dedup"}} {
		t.Run(fmt.Sprint(args), func(t *testing.T) {
			addr := freeAddr(t)
			serve(t, server, append([]string{"-listen", addr}, args...)...)
			waitListening(t, addr)
			out, err := exec.Command(client, "-server", addr, "-n", "20").CombinedOutput()
			if code := exitCode(t, err); code != 0 || !strings.Contains(string(out), "balance 20") {
				t.Fatalf("client exited %d:\n%s", code, out)
			}
		})
	}
}

// A retry after a lost answer: the server without -dedup deposits twice,
// the client notices; the server with -dedup answers the retry from memory.
func TestRetriedDepositIsAppliedOnceOnlyWithDedup(t *testing.T) {
	server, client := build(t, "retries/server"), build(t, "retries/client")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 1, "balance 11 after 10 deposits"},
		{[]string{"-dedup"}, 0, "balance 10"},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			addr := freeAddr(t)
			serve(t, server, append([]string{"-listen", addr}, tc.args...)...)
			waitListening(t, addr)
			// A proxy that swallows the answer to the first deposit, as a
			// partition that heals too late for the client's timeout does.
			swallowed := false
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				req, _ := http.NewRequest(r.Method, "http://"+addr+r.URL.RequestURI(), nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadGateway)
					return
				}
				defer resp.Body.Close()
				if !swallowed && r.URL.Path == "/deposit" {
					swallowed = true
					time.Sleep(300 * time.Millisecond) // past the client's 200ms timeout
				}
				w.WriteHeader(resp.StatusCode)
				buf := make([]byte, 64)
				n, _ := resp.Body.Read(buf)
				w.Write(buf[:n])
			}))
			defer proxy.Close()
			out, err := exec.Command(client, "-server", strings.TrimPrefix(proxy.URL, "http://"), "-n", "10").CombinedOutput()
			if code := exitCode(t, err); code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Fatalf("client exited %d, want %d and %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}
