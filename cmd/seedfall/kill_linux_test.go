package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// procInfo is one process as /proc shows it.
type procInfo struct {
	pid, ppid int
	state     byte
	cmdline   string
	environ   string
}

func processes() map[int]procInfo {
	ents, _ := os.ReadDir("/proc")
	ps := map[int]procInfo{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		environ, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		ps[pid] = procInfo{pid: pid, ppid: ppid, state: f[0][0],
			cmdline: string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})), environ: string(environ)}
	}
	return ps
}

// descendants are the live processes below pid.
func descendants(ps map[int]procInfo, pid int) []procInfo {
	var out []procInfo
	for _, p := range ps {
		for q := p; q.ppid > 1; q = ps[q.ppid] {
			if q.ppid == pid {
				if p.state != 'Z' {
					out = append(out, p)
				}
				break
			}
			if _, ok := ps[q.ppid]; !ok {
				break
			}
		}
	}
	return out
}

// A seedfall killed with SIGKILL in the middle of building a guest leaves
// no process behind (not the go command, not the compilers it started),
// and the next run removes the directory that the build left in the cache.
func TestKilledSeedfallLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a guest")
	}
	k := newKillTest(t)
	// An empty Go build cache: the build compiles the standard library,
	// so the go command has compilers running when seedfall is killed.
	k.killDuringBuild([]string{"GOCACHE=" + t.TempDir()}, "/compile ")

	leftovers, _ := filepath.Glob(filepath.Join(k.cache, "tmp", "*"))
	if len(leftovers) == 0 {
		t.Fatal("the killed build left no directory in the cache: the test killed nothing")
	}
	// The next run (with the usual Go build cache) removes them.
	cmd, out := k.start()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run after the kill: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "PASS seed 1") {
		t.Fatalf("the run after the kill:\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(k.cache, "tmp", "*")); len(left) != 0 {
		t.Errorf("the next run left the killed build's %q in the cache", left)
	}
	for _, sub := range []string{"sim", "overlay", "compat"} {
		if left, _ := filepath.Glob(filepath.Join(k.cache, sub, ".tmp-*")); len(left) != 0 {
			t.Errorf("half-made %q left in the cache", left)
		}
	}
}

// The go command's own children die with a killed seedfall too, however
// long they would run: here a go command that starts a long sleep.
func TestKilledSeedfallLeavesNoGrandchildren(t *testing.T) {
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	fake := "#!/bin/sh\nif [ \"$1\" = build ]; then sleep 300 & sleep 301; exit 1; fi\nexec " + realGo + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	k := newKillTest(t)
	below := k.killDuringBuild([]string{"PATH=" + bin + string(filepath.ListSeparator) + os.Getenv("PATH")}, "sleep 300")
	t.Logf("below seedfall: %v", below)
}

type killTest struct {
	t          *testing.T
	seedfall   string
	dir, cache string
}

func newKillTest(t *testing.T) *killTest {
	seedfall, err := exec.LookPath("seedfall") // testscript.Main put this binary there
	if err != nil {
		t.Fatal(err)
	}
	k := &killTest{t: t, seedfall: seedfall, dir: t.TempDir(), cache: t.TempDir()}
	for name, content := range map[string]string{
		"go.mod":         "module example.com/killed\n\ngo 1.21\n",
		"client/main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
		"seedfall.json":  `{"nodes": [], "workload": {"name": "client", "pkg": "./client"}}`,
	} {
		p := filepath.Join(k.dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// start starts seedfall run on the test's world and cache.
func (k *killTest) start(env ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(k.seedfall, "run", "-c", "seedfall.json", "-seed", "1")
	cmd.Dir = k.dir
	cmd.Env = append(os.Environ(), append(env, "SEEDFALL_CACHE="+k.cache)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		k.t.Fatal(err)
	}
	return cmd, &out
}

// killDuringBuild starts seedfall with env, kills it with SIGKILL as soon
// as a process below it has a command line with busy in it, and fails the
// test unless every process below it, and every process with its cache in
// the environment, is gone within seconds.
func (k *killTest) killDuringBuild(env []string, busy string) []string {
	t := k.t
	cmd, out := k.start(env...)
	deadline := time.Now().Add(2 * time.Minute)
	var below []procInfo
	for {
		below = descendants(processes(), cmd.Process.Pid)
		found := false
		for _, p := range below {
			found = found || strings.Contains(p.cmdline, busy)
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no %q ever ran below seedfall; it said:\n%s", busy, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	marker := "SEEDFALL_CACHE=" + k.cache + "\x00"
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		ps := processes()
		for _, p := range ps {
			if p.state != 'Z' && strings.Contains(p.environ, marker) {
				left = append(left, fmt.Sprintf("%d (parent %d): %.160s", p.pid, p.ppid, p.cmdline))
			}
		}
		for _, p := range below {
			if q, ok := ps[p.pid]; ok && q.state != 'Z' && q.cmdline == p.cmdline && !strings.Contains(q.environ, marker) {
				left = append(left, fmt.Sprintf("%d: %.160s", p.pid, p.cmdline))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) != 0 {
		for _, p := range left {
			if pid, err := strconv.Atoi(strings.Fields(p)[0]); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("processes outlived the killed seedfall (%d were below it):\n%s", len(below), strings.Join(left, "\n"))
	}
	var cmdlines []string
	for _, p := range below {
		cmdlines = append(cmdlines, fmt.Sprintf("%.60s", p.cmdline))
	}
	return cmdlines
}
