//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests here start the seedfall command (the test binary, which
// testscript.Main puts in $PATH under that name), press Ctrl-C (SIGINT) at
// it, and check what it prints and writes, and how soon it exits.

// copyKVLog copies the kvlog example into a fresh directory, as the
// scripts do: commands write .seedfall/ next to the world. It returns
// the directory of kvlog's seedfall.json.
func copyKVLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "kvlog/seedfall.json", "kvlog/server/main.go", "kvlog/server/store.go", "kvclient/main.go"} {
		b, err := os.ReadFile(filepath.Join("../../examples", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(b))
	}
	return filepath.Join(dir, "kvlog")
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// proc is a seedfall command running in the background.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string      // stdout so far
	more   chan struct{} // a line came, or stdout closed
	stderr bytes.Buffer
	read   chan struct{} // stdout is read to the end
	sent   time.Time     // the first SIGINT
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, more: make(chan struct{}, 1), read: make(chan struct{})}
	p.cmd = exec.Command("seedfall", args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+sharedCache)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readStdout(out)
	t.Cleanup(func() { p.cmd.Process.Kill() })
	return p
}

func (p *proc) readStdout(out io.Reader) {
	defer close(p.read)
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		p.mu.Lock()
		p.lines = append(p.lines, sc.Text())
		p.mu.Unlock()
		select {
		case p.more <- struct{}{}:
		default:
		}
	}
	io.Copy(io.Discard, out)
}

// waitLines waits until n lines of stdout match re.
func (p *proc) waitLines(re string, n int) {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(2 * time.Minute)
	for {
		p.mu.Lock()
		got := 0
		for _, l := range p.lines {
			if rx.MatchString(l) {
				got++
			}
		}
		p.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-p.more:
		case <-p.read:
			p.t.Fatalf("stdout ended with %d lines matching %s, want %d; stderr:\n%s", got, re, n, p.stderr.String())
		case <-deadline:
			p.t.Fatalf("no %d lines matching %s in 2 minutes", n, re)
		}
	}
}

func (p *proc) interrupt() {
	p.t.Helper()
	if p.sent.IsZero() {
		p.sent = time.Now()
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the exit, and returns the status and how long it took
// after the first SIGINT.
func (p *proc) wait() (int, time.Duration) {
	p.t.Helper()
	<-p.read
	err := p.cmd.Wait()
	took := time.Since(p.sent)
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			p.t.Fatal(err)
		}
	}
	return p.cmd.ProcessState.ExitCode(), took
}

func (p *proc) stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.lines, "\n") + "\n"
}

// maxRSS is the peak resident memory of the exited command, in bytes.
func (p *proc) maxRSS() int64 {
	ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || runtime.GOOS != "linux" {
		return 0
	}
	return ru.Maxrss << 10 // KiB on Linux
}

// timed runs a seedfall command to its end, twice (the first builds the
// world's programs, if they are not in the cache yet), and returns its
// stdout and how long the second took.
func timed(t *testing.T, dir string, args ...string) (string, time.Duration) {
	t.Helper()
	once(t, dir, args...)
	return once(t, dir, args...)
}

func once(t *testing.T, dir string, args ...string) (string, time.Duration) {
	t.Helper()
	cmd := exec.Command("seedfall", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+sharedCache)
	began := time.Now()
	out, err := cmd.Output()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), time.Since(began)
}

// Ctrl-C during a sweep of a hundred million seeds: seedfall exits within
// a second or two with status 130, and what finished is printed, in
// -json lines and the -report page. The seeds are never stored: the
// process stays small.
func TestInterruptRun(t *testing.T) {
	dir := copyKVLog(t)
	const total = "100000000"
	for _, asJSON := range []bool{true, false} {
		t.Run(fmt.Sprintf("json=%v", asJSON), func(t *testing.T) {
			os.RemoveAll(filepath.Join(dir, ".seedfall"))
			os.Remove(filepath.Join(dir, "out.html"))
			args := []string{"run", "-c", "seedfall.json", "-seeds", "1-" + total, "-parallel", "2", "-report", "out.html"}
			first := `^FAIL seed \d+ `
			if asJSON {
				args, first = append(args, "-json"), `^\{"seed":`
			}
			p := start(t, dir, args...)
			p.waitLines(first, 3) // kvlog fails nearly every seed
			p.interrupt()
			status, took := p.wait()
			stdout, stderr := p.stdout(), p.stderr.String()
			t.Logf("exit %d %v after SIGINT, peak RSS %d MiB; stderr:\n%s", status, took, p.maxRSS()>>20, stderr)
			if status != exitInterrupted {
				t.Fatalf("exit status %d, want %d", status, exitInterrupted)
			}
			if took > 2*time.Second {
				t.Errorf("exited %v after SIGINT", took)
			}
			if rss := p.maxRSS(); rss > 512<<20 {
				t.Errorf("peak RSS %d MiB for a sweep interrupted after a few seeds: the seed list was stored?", rss>>20)
			}
			m := regexp.MustCompile(`(?m)^interrupted: (\d+) of ` + total + ` seeds ran$`).FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("stderr does not say how many seeds ran")
			}
			ran, _ := strconv.Atoi(m[1])
			if ran < 3 {
				t.Errorf("%d seeds ran, but 3 had been printed", ran)
			}
			if !strings.Contains(stderr, fmt.Sprintf("report out.html: %d seeds, ", ran)) {
				t.Errorf("the report line does not count %d seeds", ran)
			}

			// The seeds that ran, and the failing ones, from stdout.
			var seeds, failing []uint64
			if asJSON {
				for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
					var r struct {
						Seed     uint64 `json:"seed"`
						Passed   bool   `json:"passed"`
						Schedule string `json:"schedule"`
					}
					if err := json.Unmarshal([]byte(l), &r); err != nil {
						t.Fatalf("a -json line is not JSON: %q: %v", l, err)
					}
					seeds = append(seeds, r.Seed)
					if !r.Passed {
						failing = append(failing, r.Seed)
						if r.Schedule == "" {
							t.Errorf("seed %d failed without a schedule", r.Seed)
						}
					}
				}
				if len(seeds) != ran {
					t.Errorf("%d -json lines for %d seeds", len(seeds), ran)
				}
			} else {
				if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d seeds: \d+ passed, \d+ failed .* in \S+ \(\d+ seeds/s\)$`, ran)).MatchString(stdout) {
					t.Errorf("no summary line for %d seeds:\n%s", ran, stdout)
				}
				for _, m := range regexp.MustCompile(`(?m)^FAIL seed (\d+) `).FindAllStringSubmatch(stdout, -1) {
					n, _ := strconv.ParseUint(m[1], 10, 64)
					failing = append(failing, n)
				}
			}

			// The page: whole, with the note, the count, and every failure.
			b, err := os.ReadFile(filepath.Join(dir, "out.html"))
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			if !strings.HasPrefix(page, "<!doctype html>") || !strings.HasSuffix(page, "</html>\n") {
				t.Errorf("out.html is not a whole page")
			}
			for _, want := range []string{
				fmt.Sprintf(`<p class="note">interrupted: %d of %s seeds ran</p>`, ran, total),
				fmt.Sprintf("<tr><th>seeds</th><td>%d (", ran),
			} {
				if !strings.Contains(page, want) {
					t.Errorf("out.html lacks %q", want)
				}
			}
			for _, seed := range failing {
				if !strings.Contains(page, fmt.Sprintf(`id="seed-%d"`, seed)) {
					t.Errorf("out.html does not list failing seed %d", seed)
				}
			}

			// Schedules are saved for the failures that finished, and for
			// no seed cut short.
			saved, _ := filepath.Glob(filepath.Join(dir, ".seedfall", "seed-*.faults.json"))
			var savedSeeds []uint64
			for _, f := range saved {
				n, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "seed-"), ".faults.json"), 10, 64)
				savedSeeds = append(savedSeeds, n)
			}
			slices.Sort(savedSeeds)
			slices.Sort(failing)
			if !slices.Equal(savedSeeds, failing) {
				t.Errorf("schedules saved for seeds %v; the failures printed are %v", savedSeeds, failing)
			}
		})
	}
}

// longWorld is a world whose every seed runs for ever, as far as a test
// can tell: both programs sleep a millisecond at a time for 100000 hours.
func longWorld(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/long\n\ngo 1.26\n")
	writeFile(t, filepath.Join(dir, "nap/main.go"), "package main\n\nimport \"time\"\n\nfunc main() {\n\tfor {\n\t\ttime.Sleep(time.Millisecond)\n\t}\n}\n")
	writeFile(t, filepath.Join(dir, "seedfall.json"), `{
  "nodes": [{ "name": "napper", "pkg": "./nap" }],
  "workload": { "name": "client", "pkg": "./nap" },
  "duration": "100000h"
}
`)
	return dir
}

// Ctrl-C in the middle of one long seed stops it within a second; the
// run is no result: nothing printed as passed or failed, nothing saved.
func TestInterruptLongSeed(t *testing.T) {
	dir := longWorld(t)
	// Build the programs, and see how long starting takes.
	_, startup := timed(t, dir, "run", "-c", "seedfall.json", "-seed", "1", "-set", "duration=10ms")
	delay := startup + 500*time.Millisecond
	for try := 0; ; try++ {
		p := start(t, dir, "run", "-c", "seedfall.json", "-seed", "1", "-json")
		time.Sleep(delay)
		p.interrupt()
		status, took := p.wait()
		stderr := p.stderr.String()
		t.Logf("exit %d %v after SIGINT; stderr:\n%s", status, took, stderr)
		if status != exitInterrupted {
			t.Fatalf("exit status %d, want %d", status, exitInterrupted)
		}
		if stderr == "seedfall run: interrupted\n" && try < 3 {
			delay *= 2 // still starting: try again later
			continue
		}
		if stderr != "interrupted: 0 of 1 seed ran\n" || p.stdout() != "\n" {
			t.Errorf("stdout %q, stderr %q", p.stdout(), stderr)
		}
		if took > 1500*time.Millisecond {
			t.Errorf("exited %v after SIGINT", took)
		}
		if _, err := os.Stat(filepath.Join(dir, ".seedfall", "seed-1.faults.json")); err == nil {
			t.Error("the schedule of a seed cut short was saved")
		}
		break
	}
}

// A second Ctrl-C exits at once, whatever the command is still doing
// after the first. The helper (this test binary, run again) is a command
// that takes for ever to finish up.
func TestSecondInterrupt(t *testing.T) {
	if os.Getenv("SEEDFALL_TEST_SLOW_STOP") == "1" {
		ctx, stop := onInterrupt(context.Background())
		defer stop()
		fmt.Println("ready")
		<-ctx.Done()
		fmt.Println("finishing up")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	p := &proc{t: t, more: make(chan struct{}, 1), read: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestSecondInterrupt$")
	p.cmd.Env = append(os.Environ(), "SEEDFALL_TEST_SLOW_STOP=1")
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	lines := bufio.NewScanner(out)
	next := func(want string) {
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("the helper said %q, want %q", lines.Text(), want)
		}
	}
	next("ready")
	p.interrupt()
	next("finishing up")
	time.Sleep(100 * time.Millisecond)
	began := time.Now()
	p.interrupt()
	go io.Copy(io.Discard, out)
	close(p.read)
	status, _ := p.wait()
	if took := time.Since(began); status != exitInterrupted || took > time.Second {
		t.Errorf("after the second SIGINT: exit status %d after %v, want %d at once", status, took, exitInterrupted)
	}

	// And the command itself: two at once end it at once.
	dir := longWorld(t)
	_, startup := timed(t, dir, "run", "-c", "seedfall.json", "-seed", "1", "-set", "duration=10ms")
	q := start(t, dir, "run", "-c", "seedfall.json", "-seeds", "1-10", "-parallel", "2")
	time.Sleep(startup + 500*time.Millisecond)
	q.interrupt()
	q.interrupt()
	if status, took := q.wait(); status != exitInterrupted || took > time.Second {
		t.Errorf("two SIGINTs: exit status %d after %v, want %d at once", status, took, exitInterrupted)
	}
}
