package examples_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without crashes both syncers keep every write, however many writers wait on one
// fsync, and a restart over the same directory brings every write back. Natively the
// bug needs a power loss to show; under seedfall a crash is one.
func TestGroupCommitRunsNatively(t *testing.T) {
	for _, tc := range []struct{ file, mode string }{
		{"groupcommit/seedfall.json", "durable-end after-sync"},
		{"groupcommit/seedfall.fixed.json", "durable-end before-sync"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			w := readWorld(t, tc.file)
			server := build(t, filepath.Join("groupcommit", w.Nodes[0].Pkg))
			client := build(t, filepath.Join("groupcommit", w.Workload.Pkg))
			dir := t.TempDir()
			addr, mode, stop := startServer(t, server, dir, w.Nodes[0].Args...)
			if mode != tc.mode {
				t.Errorf("server runs with %q, want %q", mode, tc.mode)
			}
			args := append(w.Workload.Args, "-addr", addr, "-workers", "8", "-ops", "25", "-pause", "0")
			out, err := exec.Command(client, args...).CombinedOutput()
			stop()
			if want := "ok: 200 of 200 writes acknowledged, 0 with unknown outcome, all 200 read back intact\n"; err != nil || string(out) != want {
				t.Fatalf("client: %v\n%s\nwant %q", err, out, want)
			}
			addr, _, stop = startServer(t, server, dir, w.Nodes[0].Args...)
			defer stop()
			for _, key := range [][2]int{{0, 1}, {3, 12}, {7, 25}} {
				if got, want := get(t, addr, fmt.Sprintf("w%dk%d", key[0], key[1])), fmt.Sprintf("VALUE v%d", key[1]); got != want {
					t.Errorf("after restart GET w%dk%d = %q, want %q", key[0], key[1], got, want)
				}
			}
		})
	}
}

// The concurrent client retries a dropped write and catches one the server
// acknowledged and then lost.
func TestGroupCommitClientCatchesALostWrite(t *testing.T) {
	client := build(t, "groupcommit/client")
	addr := fakeServer(t, "PUT w0k2 v2", "w1k3", false)
	out, err := exec.Command(client, "-addr", addr, "-workers", "2", "-ops", "5", "-pause", "0").CombinedOutput()
	if code := exitCode(t, err); code != 1 {
		t.Errorf("client exited %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"PUT w0k2 v2: answered on attempt 2",
		`lost acknowledged write w1k3=v3: GET w1k3 returned "NOTFOUND"`,
		"FAIL: 1 of 10 acknowledged writes lost",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("client output lacks %q:\n%s", want, out)
		}
	}
}
