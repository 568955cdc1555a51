package liveness_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func build(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, "./"+pkg).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// start runs a server until stop is called, and waits until it listens.
func start(t *testing.T, bin string, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stop)
	for i := 0; i < 100; i++ {
		if c, err := net.Dial("tcp", args[1]); err == nil {
			c.Close()
			return stop
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s does not listen on %s", bin, args[1])
	return nil
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The writer's fifth add reaches the server and the writer dies before it
// saves its progress: restarted, it sends request 5 again. Only a server
// that deduplicates, durably, across its own restart and its upgrade to
// v2, keeps the total at 5.
func TestResendAfterAClientCrash(t *testing.T) {
	server, serverv2, client := build(t, "server"), build(t, "serverv2"), build(t, "client")
	for _, tc := range []struct {
		name    string
		args    []string
		restart string // the server that comes back before the resend
		code    int
		want    string
	}{
		{"no dedup", nil, server, 1, "FAIL: total 6 after 5 adds: an add was applied twice"},
		{"dedup", []string{"-dedup"}, server, 0, "total 5"},
		{"dedup across the upgrade", []string{"-dedup"}, serverv2, 0, "total 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, data, progress := freeAddr(t), t.TempDir(), t.TempDir()
			srv := append([]string{"-listen", addr, "-dir", data}, tc.args...)
			stop := start(t, server, srv...)
			writer := []string{"-server", addr, "-id", "w", "-n", "5", "-dir", progress, "-every", "0s", "-quiet", "0s"}
			if out, err := exec.Command(client, writer...).CombinedOutput(); err != nil {
				t.Fatalf("first writer: %v\n%s", err, out)
			}
			// The state a crash leaves after request 5 was applied but
			// before the writer saved that it was.
			if err := os.WriteFile(filepath.Join(progress, "progress"), []byte("next 5 done 4\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stop()
			start(t, tc.restart, srv...)
			out, err := exec.Command(client, writer...).CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "resuming at request 5") {
				t.Fatalf("writer exited %d, want %d and %q:\n%s", code, tc.code, tc.want, out)
			}
			reader := exec.Command(client, "-mode", "read", "-server", addr, "-n", "5", "-quiet", "0s")
			if out, err := reader.CombinedOutput(); (err == nil) != (tc.code == 0) {
				t.Fatalf("reader: %v\n%s", err, out)
			}
		})
	}
}
