// Package examples_test runs each example natively on loopback: the servers really write
// and fsync in a temporary directory, and the clients check them. No crashes happen here,
// so both the buggy and the fixed modes must pass; finding the bugs is seedfall's job.
package examples_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var bin string // directory holding the built example programs

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "seedfall-examples-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build compiles pkg (relative to this module) once per test binary run.
func build(t *testing.T, pkg string) string {
	t.Helper()
	pkg = filepath.ToSlash(filepath.Clean(pkg))
	out := filepath.Join(bin, strings.ReplaceAll(pkg, "/", "-"))
	if _, err := os.Stat(out); err == nil {
		return out
	}
	cmd := exec.Command("go", "build", "-o", out, "./"+pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./%s: %v\n%s", pkg, err, b)
	}
	return out
}

// startServer runs the server in dir on a random loopback port. It returns the address
// and mode from the server's "listening on <addr>, <mode>" line and a function that
// kills the server.
func startServer(t *testing.T, server, dir string, args ...string) (addr, mode string, stop func()) {
	t.Helper()
	cmd := exec.Command(server, append(args, "-listen", "127.0.0.1:0")...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop = func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	listening := make(chan string, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			log.WriteString(line + "\n")
			if rest, ok := strings.CutPrefix(line, "server: listening on "); ok {
				listening <- rest
			}
		}
		close(listening)
	}()
	select {
	case rest, ok := <-listening:
		if !ok {
			stop()
			t.Fatalf("server exited before listening:\n%s", log.String())
		}
		addr, mode, _ = strings.Cut(rest, ", ")
		return addr, mode, stop
	case <-time.After(10 * time.Second):
		stop()
		t.Fatalf("server did not report its address within 10s")
	}
	return "", "", nil
}

func get(t *testing.T, addr, key string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s\n", key)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// world is the part of a seedfall world file these tests read.
type world struct {
	Nodes []struct {
		Name string   `json:"name"`
		Pkg  string   `json:"pkg"`
		Args []string `json:"args"`
	} `json:"nodes"`
	Workload struct {
		Name string   `json:"name"`
		Pkg  string   `json:"pkg"`
		Args []string `json:"args"`
	} `json:"workload"`
	Duration string `json:"duration"`
}

// clientTimeout is the clients' -timeout default. A world must run longer, so that a
// client stuck on a dead server fails the run instead of reaching the time horizon,
// which counts as a pass.
const clientTimeout = 15 * time.Second

// The world files are run natively with the args they give, so a flag they pass that
// a program does not know fails here, not in the first seedfall run.
func TestWorldsPassWithoutCrashes(t *testing.T) {
	tests := []struct {
		file    string
		logMode string // what the server's "listening on" line must say about its mode
	}{
		{"kvlog/seedfall.json", "ack before-sync"},
		{"kvlog/seedfall.fixed.json", "ack after-sync"},
		{"snapshot/seedfall.json", "syncdir false"},
		{"snapshot/seedfall.fixed.json", "syncdir true"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var w world
			if err := json.Unmarshal(b, &w); err != nil {
				t.Fatalf("%s: %v", tt.file, err)
			}
			if d, err := time.ParseDuration(w.Duration); err != nil || d <= clientTimeout {
				t.Errorf("duration %q must be longer than the client's %v limit", w.Duration, clientTimeout)
			}
			if len(w.Nodes) != 1 || w.Nodes[0].Name != "server" || w.Workload.Name != "client" {
				t.Fatalf("want one node named server and a workload named client, got %+v", w)
			}
			example := filepath.Dir(tt.file)
			server := build(t, filepath.Join(example, w.Nodes[0].Pkg))
			client := build(t, filepath.Join(example, w.Workload.Pkg))

			dir := t.TempDir()
			addr, mode, stop := startServer(t, server, dir, w.Nodes[0].Args...)
			if mode != tt.logMode {
				t.Errorf("server runs with %q, want %q", mode, tt.logMode)
			}
			args := append(w.Workload.Args, "-addr", addr, "-ops", "40", "-pause", "0")
			out, err := exec.Command(client, args...).CombinedOutput()
			stop()
			if err != nil {
				t.Fatalf("client failed: %v\n%s", err, out)
			}
			if want := "ok: 40 of 40 writes acknowledged, 0 with unknown outcome, all 40 read back intact\n"; string(out) != want {
				t.Errorf("client printed %q, want %q", out, want)
			}

			// A restart over the same directory must bring every write back.
			addr, _, stop = startServer(t, server, dir, w.Nodes[0].Args...)
			defer stop()
			for _, i := range []int{1, 17, 40} {
				if got, want := get(t, addr, fmt.Sprintf("k%d", i)), fmt.Sprintf("VALUE v%d", i); got != want {
					t.Errorf("after restart GET k%d = %q, want %q", i, got, want)
				}
			}
		})
	}
}

// fakeServer speaks the examples' protocol from memory. It drops the connection
// without answering the first time it sees dropPut, and forgets loseKey after
// acknowledging it, as a crash before an fsync would. reject answers every PUT with ERR.
func fakeServer(t *testing.T, dropPut, loseKey string, reject bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	data := make(chan map[string]string, 1)
	data <- map[string]string{}
	dropped := false
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
					f := strings.Fields(sc.Text())
					m := <-data
					reply := "ERR bad request"
					switch {
					case len(f) == 3 && f[0] == "PUT" && reject:
					case len(f) == 3 && f[0] == "PUT" && sc.Text() == dropPut && !dropped:
						dropped = true
						data <- m
						return
					case len(f) == 3 && f[0] == "PUT":
						if f[1] != loseKey {
							m[f[1]] = f[2]
						}
						reply = "OK"
					case len(f) == 2 && f[0] == "GET":
						reply = "NOTFOUND"
						if v, ok := m[f[1]]; ok {
							reply = "VALUE " + v
						}
					}
					data <- m
					fmt.Fprintln(c, reply)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestClientsCatchLostWrites(t *testing.T) {
	tests := []struct {
		name, dropPut, loseKey string
		reject                 bool
		args                   []string
		wantExit               int
		want                   []string
	}{
		{
			name: "retried write is counted", dropPut: "PUT k3 v3",
			wantExit: 0, want: []string{"PUT k3 v3: answered on attempt 2", "ok: 10 of 10 writes acknowledged"},
		},
		{
			name: "lost write", dropPut: "PUT k3 v3", loseKey: "k7",
			wantExit: 1, want: []string{`lost acknowledged write k7=v7 (acked at op 7): GET k7 returned "NOTFOUND"`, "FAIL: 1 of 10 acknowledged writes lost"},
		},
		{
			name: "nothing acknowledged", reject: true,
			wantExit: 1, want: []string{"op 1: PUT k1 v1 was not acknowledged: ERR bad request", "FAIL: none of 10 writes was acknowledged"},
		},
	}
	client := build(t, "kvclient")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := fakeServer(t, tt.dropPut, tt.loseKey, tt.reject)
			out, err := exec.Command(client, "-addr", addr, "-ops", "10", "-pause", "0").CombinedOutput()
			if code := exitCode(t, err); code != tt.wantExit {
				t.Errorf("client exited %d, want %d\n%s", code, tt.wantExit, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("client output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestClientsGiveUpOnASilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and never answer; the connections close with the listener's test
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	client := build(t, "kvclient")
	start := time.Now()
	out, err := exec.Command(client, "-addr", ln.Addr().String(), "-timeout", "1s").CombinedOutput()
	if code := exitCode(t, err); code != 1 {
		t.Errorf("client exited %d, want 1\n%s", code, out)
	}
	if !strings.Contains(string(out), "FAIL: gave up during PUT k1 v1: the run's time limit passed") {
		t.Errorf("client output does not say it gave up:\n%s", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("client took %v with -timeout 1s", took)
	}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// The programs are written for seedfall, which builds them for wasip1 (with
// -trimpath, as here: the standard library compiled for seedfall's builds is
// reused from the Go build cache, not compiled again).
func TestExamplesBuildForWasip1(t *testing.T) {
	cmd := exec.Command("go", "build", "-trimpath", "./...")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=wasip1 GOARCH=wasm go build -trimpath ./...: %v\n%s", err, out)
	}
}
