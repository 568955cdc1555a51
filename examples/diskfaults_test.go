package examples_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The disk fault worlds run natively with the args they give: without faults every one
// of them must pass, so what fails under seedfall is the fault, not a flag.
func TestDiskFaultWorldsRunNatively(t *testing.T) {
	for _, file := range []string{
		"kvlog/seedfall.readcorrupt.json", "kvlog/seedfall.checksum.json", "kvlog/seedfall.reread.json",
		"kvlog/seedfall.lostwrite.json", "kvlog/seedfall.misdirected.json", "kvlog/seedfall.bitrot.json",
		"walretry/seedfall.json", "walretry/seedfall.fixed.json",
	} {
		t.Run(file, func(t *testing.T) {
			w := readWorld(t, file)
			example := filepath.Dir(file)
			server := build(t, filepath.Join(example, w.Nodes[0].Pkg))
			client := build(t, filepath.Join(example, w.Workload.Pkg))
			addr, mode, stop := startServer(t, server, t.TempDir(), w.Nodes[0].Args...)
			defer stop()
			if mode != "ack after-sync" {
				t.Errorf("server runs with %q, want ack after-sync", mode)
			}
			args := append(w.Workload.Args, "-addr", addr, "-ops", "40", "-pause", "0")
			out, err := exec.Command(client, args...).CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "ok: 40 of 40 writes acknowledged") {
				t.Fatalf("client: %v\n%s", err, out)
			}
		})
	}
}

// symswap publishes generations natively, and a restart over the same directory finds
// "current" leading to one of them.
func TestSymswapRunsNatively(t *testing.T) {
	for _, file := range []string{"symswap/seedfall.json", "symswap/seedfall.fixed.json", "symswap/seedfall.ext4.json"} {
		t.Run(file, func(t *testing.T) {
			w := readWorld(t, file)
			server := build(t, filepath.Join("symswap", w.Nodes[0].Pkg))
			client := build(t, filepath.Join("symswap", w.Workload.Pkg))
			dir := t.TempDir()
			addr, _, stop := startServer(t, server, dir, append(w.Nodes[0].Args, "-every", "5ms")...)
			out, err := exec.Command(client, "-addr", addr, "-every", "10ms", "-for", "300ms").CombinedOutput()
			stop()
			if err != nil || !strings.HasPrefix(string(out), "ok: ") {
				t.Fatalf("client: %v\n%s", err, out)
			}
			addr, _, stop = startServer(t, server, dir, append(w.Nodes[0].Args, "-every", "1h")...)
			defer stop()
			if got := get(t, addr, ""); !strings.HasPrefix(got, "GEN ") || got == "GEN 0" {
				t.Fatalf("after a restart the server answers %q, want a generation", got)
			}
		})
	}
}

func readWorld(t *testing.T, file string) world {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var w world
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d, err := time.ParseDuration(w.Duration); err != nil || d < 2*time.Second {
		t.Errorf("%s: duration %q is too short for its client", file, w.Duration)
	}
	if len(w.Nodes) != 1 || w.Nodes[0].Name != "server" || w.Workload.Name != "client" {
		t.Fatalf("%s: want one node named server and a workload named client, got %+v", file, w)
	}
	return w
}
