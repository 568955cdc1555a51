package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal: the command's stderr is the terminal
// (slave), so that it prints its progress, which the test reads from the
// master to press Ctrl-C at a known point.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("no pseudo-terminal: unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("no pseudo-terminal: ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// terminal is what a command printed to its terminal stderr.
type terminal struct {
	mu   sync.Mutex
	text strings.Builder
}

// startTTY starts a command whose stderr is a terminal.
func startTTY(t *testing.T, dir string, args ...string) (*proc, *terminal) {
	t.Helper()
	master, slave := openPTY(t)
	p := &proc{t: t, more: make(chan struct{}, 1), read: make(chan struct{})}
	p.cmd = exec.Command("seedfall", args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+sharedCache)
	p.cmd.Stderr = slave
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.cmd.Process.Kill() })
	slave.Close() // the child holds it now
	go p.readStdout(out)
	term := &terminal{}
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			term.mu.Lock()
			term.text.Write(b[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return p, term
}

// waitFor waits until the terminal shows a number of at least n in the
// first group of re.
func (term *terminal) waitFor(t *testing.T, re string, n int) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		term.mu.Lock()
		ms := rx.FindAllStringSubmatch(term.text.String(), -1)
		term.mu.Unlock()
		if len(ms) > 0 {
			if k, _ := strconv.Atoi(ms[len(ms)-1][1]); k >= n {
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the terminal never showed %s with %d", re, n)
}

// Ctrl-C during shrink keeps the smallest failing schedule found so far:
// printed, saved, and still failing when replayed.
func TestInterruptShrink(t *testing.T) {
	dir := copyKVLog(t)
	once(t, dir, "run", "-c", "seedfall.json", "-seed", "3") // builds kvlog, saves seed 3's faults
	p, term := startTTY(t, dir, "shrink", "-c", "seedfall.json", "-seed", "3", "-parallel", "1")
	// Past the first run, with some twenty runs to go.
	term.waitFor(t, `shrinking seed 3: [a-z ]+, (\d+) runs so far`, 3)
	p.interrupt()
	status, took := p.wait()
	stdout := p.stdout()
	t.Logf("exit %d %v after SIGINT; stdout:\n%s", status, took, stdout)
	if status != exitInterrupted {
		t.Fatalf("exit status %d, want %d", status, exitInterrupted)
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after SIGINT", took)
	}
	for _, want := range []string{
		`(?m)^seed 3, 3 faults from .seedfall/seed-3.faults.json: shrunk to [0-3] faults? in \d+ runs \(.* real\)$`,
		`(?m)^note: interrupted; this is the smallest failing schedule found so far \(go on from it: seedfall shrink -c seedfall.json -seed 3 -faults .seedfall/seed-3.faults.json\)$`,
		`(?m)^FAIL seed 3 at t=`,
		`(?m)^wrote .seedfall/seed-3.faults.json$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("stdout lacks %s", want)
		}
	}
	// The schedule kept still fails, and shrink goes on from it.
	out, _ := once(t, dir, "replay", "-c", "seedfall.json", "-seed", "3")
	if !regexp.MustCompile(`(?m)^FAIL seed 3 `).MatchString(out) {
		t.Errorf("the schedule shrink kept does not fail:\n%s", out)
	}
	out, _ = once(t, dir, "shrink", "-c", "seedfall.json", "-seed", "3", "-faults", ".seedfall/seed-3.faults.json")
	if !regexp.MustCompile(`(?m)^seed 3, [0-3] faults? from .seedfall/seed-3.faults.json: shrunk to 1 fault in \d+ runs`).MatchString(out) {
		t.Errorf("shrinking on from the schedule kept:\n%s", out)
	}
}

// Ctrl-C during cause prints what the forks that finished establish.
func TestInterruptCause(t *testing.T) {
	dir := copyKVLog(t)
	once(t, dir, "run", "-c", "seedfall.json", "-seed", "1", "-set", "faults.crash_per_sec=0") // builds kvlog
	p, term := startTTY(t, dir, "cause", "-c", "seedfall.json", "-seed", "1", "-parallel", "1")
	term.waitFor(t, `forking: (\d+) runs, at most \d+`, 8)
	p.interrupt()
	status, took := p.wait()
	stdout := p.stdout()
	t.Logf("exit %d %v after SIGINT; stdout:\n%s", status, took, stdout)
	if status != exitInterrupted {
		t.Fatalf("exit status %d, want %d", status, exitInterrupted)
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after SIGINT", took)
	}
	m := regexp.MustCompile(`(?m)^interrupted after (\d+) runs; what the decided moments establish:$`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatal("stdout does not say cause was interrupted")
	}
	// The progress line is drawn now and then, so more runs may have
	// finished than it showed when SIGINT came; never fewer.
	if n, _ := strconv.Atoi(m[1]); n < 8 {
		t.Errorf("%d runs counted; the progress had shown 8 when SIGINT came", n)
	}
	for _, want := range []string{
		`(?m)^seed 1 fails at \S+: workload: `,
		`(?m)^forked up to 8 ways at \d+ moments, `,
		`(?m)^ +\S+  \.         0/1 still fail  \(1 of 8 forks decided it: passes\)$`,
		`(?m)^ +\S+  #+ +\d/\d still fail  \(interrupted: undecided\)$`,
		`(?m)^the failure became inevitable between \S+ and \S+$`,
		`(?m)^` + m[1] + ` runs in all, [\d.]+ times the failing run's scheduler steps; the world at both ends: seedfall debug -c seedfall.json -seed 1 (-at \S+ )?-at \S+$`,
	} {
		if !regexp.MustCompile(want).MatchString(stdout) {
			t.Errorf("stdout lacks %s", want)
		}
	}
}

// Ctrl-C during explore prints the summary so far and saves its failures.
func TestInterruptExplore(t *testing.T) {
	dir := copyKVLog(t)
	once(t, dir, "run", "-c", "seedfall.json", "-seed", "1", "-set", "faults.crash_per_sec=0") // builds kvlog
	p, term := startTTY(t, dir, "explore", "-c", "seedfall.json", "-budget", "100000", "-parallel", "2")
	term.waitFor(t, `explore random_seeds: (\d+) runs`, 32) // random_seeds runs 32 at a time
	p.interrupt()
	status, took := p.wait()
	stdout := p.stdout()
	t.Logf("exit %d %v after SIGINT; stdout:\n%s", status, took, stdout)
	if status != exitInterrupted {
		t.Fatalf("exit status %d, want %d", status, exitInterrupted)
	}
	if took > 2*time.Second {
		t.Errorf("exited %v after SIGINT", took)
	}
	m := regexp.MustCompile(`^(\d+) failures? in (\d+) runs \(random_seeds, \S+; interrupted\):\n`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatal("no summary of the exploration so far")
	}
	if runs, _ := strconv.Atoi(m[2]); runs < 32 || runs >= 64 {
		t.Errorf("%d runs counted: the first batch of 32, and none of the second that was cut short", runs)
	}
	if !regexp.MustCompile(`(?m)^    replay: seedfall replay -c seedfall.json -seed 1 -faults .seedfall/seed-1.faults.json$`).MatchString(stdout) {
		t.Error("the failures found are not saved")
	}
}
