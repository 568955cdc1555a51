package examples_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Natively the handlers run in parallel on every core. Built with the race detector,
// the server without -lock is caught at its first pair of concurrent transfers, and the
// one with -lock is not; the fixed server's balances come out right. (Without the
// detector the buggy server natively may or may not lose an update in one run: that
// is the point of running it under seedfall.)
func TestBankRunsNatively(t *testing.T) {
	if out, err := exec.Command("go", "env", "CGO_ENABLED").Output(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Skip("the race detector needs cgo")
	}
	server := filepath.Join(bin, "bank-server-race")
	if out, err := exec.Command("go", "build", "-race", "-o", server, "./bank/server").CombinedOutput(); err != nil {
		t.Fatalf("go build -race ./bank/server: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		file string
		race bool
	}{{"bank/seedfall.json", true}, {"bank/seedfall.fixed.json", false},
		{"bank/seedfall.handlers.json", true}, {"bank/seedfall.handlers.fixed.json", false}} {
		t.Run(tc.file, func(t *testing.T) {
			w := readWorld(t, tc.file)
			client := build(t, filepath.Join("bank", w.Workload.Pkg))
			addr := freeAddr(t)
			var stderr lockedBuffer
			cmd := exec.Command(server, append(w.Nodes[0].Args, "-listen", addr)...)
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			waitListening(t, addr)
			out, err := exec.Command(client, "-addr", addr, "-workers", "8", "-transfers", "100").CombinedOutput()
			raced := strings.Contains(stderr.String(), "WARNING: DATA RACE")
			if raced != tc.race {
				t.Errorf("the race detector reported a race: %v, want %v\n%s", raced, tc.race, stderr.String())
			}
			if !tc.race && (err != nil || !strings.HasPrefix(string(out), "ok: 800 transfers, ")) {
				t.Errorf("client: %v\n%s", err, out)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer that a process's output and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The client catches a bank that acknowledges a transfer it did not apply, or applies
// one it refused, and passes one that gets every transfer right.
func TestBankClientChecksEveryBalance(t *testing.T) {
	client := build(t, "bank/client")
	for _, tc := range []struct {
		name       string
		skip, code int // skip: the number of the transfer acknowledged but not applied, 0 for none
		want       string
	}{
		{"right", 0, 0, "ok: 30 transfers, 0 refused, every balance as expected, total 4000"},
		{"lost transfer", 7, 1, "FAIL: 2 of 4 accounts hold the wrong balance after 30 transfers (0 refused), though the total is right"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := fakeBank(t, 4, 1000, tc.skip)
			out, err := exec.Command(client, "-addr", addr, "-workers", "3", "-transfers", "10", "-accounts", "4", "-initial", "1000", "-max", "5").CombinedOutput()
			if code := exitCode(t, err); code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("client exited %d, want %d and %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}

// fakeBank serves bank's protocol, one transfer at a time, and acknowledges its
// skip-th transfer without applying it.
func fakeBank(t *testing.T, accounts int, initial int64, skip int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	balances, n := make([]int64, accounts), 0
	for i := range balances {
		balances[i] = initial
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					var from, to int
					var amount int64
					reply := "ERR"
					mu.Lock()
					if _, err := fmt.Sscanf(sc.Text(), "TRANSFER %d %d %d", &from, &to, &amount); err == nil {
						n++
						if balances[from] < amount {
							reply = "REFUSED insufficient funds"
						} else {
							if n != skip {
								balances[from] -= amount
								balances[to] += amount
							}
							reply = "OK receipt"
						}
					} else if _, err := fmt.Sscanf(sc.Text(), "BALANCE %d", &from); err == nil {
						reply = fmt.Sprint("BALANCE ", balances[from])
					}
					mu.Unlock()
					fmt.Fprintln(c, reply)
				}
			}()
		}
	}()
	return ln.Addr().String()
}
