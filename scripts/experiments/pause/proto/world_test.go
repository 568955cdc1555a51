package proto

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// worldGo is the part of testMain (proto_test.go) that the World's tests
// run: a sleeper (sleeps, timers, an fsync), and an echo server and its
// client on the net overlay. Every line it prints carries the virtual time.
const worldGo = `package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

var start = time.Now()

func say(format string, args ...any) {
	fmt.Printf("%v %s\n", time.Since(start), fmt.Sprintf(format, args...))
}

func sleeper() {
	for i := 0; i < 3; i++ {
		time.Sleep(100 * time.Millisecond)
		say("slept %d", i)
	}
	t := time.NewTimer(50 * time.Millisecond)
	done := make(chan bool)
	go func() {
		time.Sleep(20 * time.Millisecond)
		done <- true
	}()
	<-done
	say("goroutine woke")
	<-t.C
	say("timer fired")
	if err := os.Stdout.Sync(); err != nil {
		say("sync: %v", err)
	}
	say("synced")
}

func server() {
	ln, err := net.Listen("tcp", ":7000")
	if err != nil {
		say("listen: %v", err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		c, err := ln.Accept()
		if err != nil {
			say("accept: %v", err)
			os.Exit(1)
		}
		say("accepted %s", c.RemoteAddr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			sc := bufio.NewScanner(c)
			for sc.Scan() {
				fmt.Fprintf(c, "echo %s\n", sc.Text())
			}
			say("%s closed", c.RemoteAddr())
		}()
	}
	wg.Wait()
}

func client(name string) {
	c, err := net.Dial("tcp", "10.0.0.1:7000")
	if err != nil {
		say("dial: %v", err)
		os.Exit(1)
	}
	say("%s connected from %s", name, c.LocalAddr())
	r := bufio.NewReader(c)
	for _, word := range []string{"hello", "bye"} {
		fmt.Fprintf(c, "%s from %s\n", word, name)
		line, err := r.ReadString('\n')
		if err != nil {
			say("read: %v", err)
			os.Exit(1)
		}
		say("%s got %q", name, line)
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
}
`

var worldRT struct {
	ctx  context.Context
	r    wazero.Runtime
	prog *Program
}

// worldHost compiles wasm into a runtime prepared by InstallWorldHost,
// once for the tests that use it.
func worldHost(t *testing.T, wasm []byte) (context.Context, wazero.Runtime, *Program) {
	t.Helper()
	if worldRT.r == nil {
		ctx := context.Background()
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(compiled))
		prog, err := Compile(ctx, r, wasm)
		if err != nil {
			t.Fatal(err)
		}
		if err := InstallWorldHost(ctx, r, prog.Module); err != nil {
			t.Fatal(err)
		}
		worldRT.ctx, worldRT.r, worldRT.prog = ctx, r, prog
	}
	return worldRT.ctx, worldRT.r, worldRT.prog
}

// A guest that sleeps, waits on timers and channels and fsyncs (through
// the runtime's netpoll) runs the same, at the same virtual times, whether
// it pauses when idle or blocks in poll_oneoff.
func TestIdleSleeper(t *testing.T) {
	ctx, r, prog := worldHost(t, buildGuest(t))
	// Each line follows from the waits: three sleeps of 100ms; a goroutine
	// that sleeps 20ms while a 50ms timer runs; an fsync of 5ms.
	want := "100ms slept 0\n200ms slept 1\n300ms slept 2\n320ms goroutine woke\n350ms timer fired\n355ms synced\n"
	for _, block := range []bool{false, true} {
		w := NewWorld()
		w.Block = block
		p, err := w.Spawn(ctx, r, prog, wazero.NewModuleConfig(), "10.0.0.1", "sleeper", "sleeper")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(); err != nil {
			t.Fatal(err)
		}
		if p.Code != 0 || p.Out.String() != want {
			t.Fatalf("block %v: exit %d, printed\n%s\nwant\n%s", block, p.Code, p.Out.String(), want)
		}
		// Pausing: once per wait (three sleeps, the goroutine's sleep, the
		// timer, the fsync); blocking: never.
		if wantPauses := map[bool]int{false: 6, true: 0}[block]; p.Pauses != wantPauses {
			t.Errorf("block %v: paused %d times, want %d", block, p.Pauses, wantPauses)
		}
		p.M.Close(ctx)
	}
}

// One host goroutine runs a server and two clients that talk over the net
// overlay, every guest pausing whenever it waits; the same world run twice
// prints the same.
func TestIdleNetworkWorld(t *testing.T) {
	ctx, r, prog := worldHost(t, buildGuest(t))
	guests := [][]string{{"server", "server"}, {"c1", "client", "c1"}, {"c2", "client", "c2"}}
	// run runs the world, each guest booted or, from snaps, restored: into
	// the instances of reuse if there are, else new ones. It keeps the
	// instances in reuse.
	run := func(snaps map[string]*pauseoverlay.Snapshot, reuse map[string]*Proc) string {
		w := NewWorld()
		var procs []*Proc
		for i, args := range guests {
			addr := fmt.Sprintf("10.0.0.%d", i+1)
			var p *Proc
			var err error
			switch s, prev := snaps[args[0]], reuse[args[0]]; {
			case prev != nil:
				p, err = w.SpawnReset(ctx, prog, s, prev, addr, args[0])
			case s != nil:
				p, err = w.SpawnFrom(ctx, r, prog, s, wazero.NewModuleConfig(), addr, args[0])
			default:
				p, err = w.Spawn(ctx, r, prog, wazero.NewModuleConfig(), addr, args...)
			}
			if err != nil {
				t.Fatal(err)
			}
			procs = append(procs, p)
		}
		err := w.Run()
		var b strings.Builder
		for _, p := range procs {
			fmt.Fprintf(&b, "== %s: exit %d, %d pauses\n%s", p.Name, p.Code, p.Pauses, p.Out.String())
			if reuse != nil {
				reuse[p.Name] = p
			} else {
				p.M.Close(ctx)
			}
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		return b.String()
	}
	got := run(nil, nil)
	// With 1ms of latency each way: a connect completes in 2ms (the server
	// accepts at 1ms); each exchange takes 2ms (hello answered at 4ms, bye
	// sent at 14ms after a sleep of 10ms, answered at 16ms); a client
	// sleeps 10ms more and closes, which reaches the server 1ms later.
	for _, line := range []string{
		"== server: exit 0,", "1ms accepted 10.0.0.2:", "1ms accepted 10.0.0.3:", "27ms 10.0.0.2:40001 closed", "27ms 10.0.0.3:40002 closed",
		"== c1: exit 0,", "2ms c1 connected from 10.0.0.2:40001", `4ms c1 got "echo hello from c1\n"`, `16ms c1 got "echo bye from c1\n"`,
		"== c2: exit 0,", `16ms c2 got "echo bye from c2\n"`,
	} {
		if !strings.Contains(got, line) {
			t.Errorf("the world's output lacks %q", line)
		}
	}
	if again := run(nil, nil); again != got {
		t.Fatalf("a second run printed differently:\n%s", again)
	}

	// Every guest restored from a snapshot taken before its main: the same
	// world, the same output.
	snaps := map[string]*pauseoverlay.Snapshot{}
	boot := NewWorld()
	boot.PauseAtMain = true
	for _, args := range guests {
		p, err := boot.Spawn(ctx, r, prog, wazero.NewModuleConfig(), "10.0.0.99", args...)
		if err != nil || p.Exited {
			t.Fatalf("%s did not pause before main: %v\n%s", args[0], err, p.Out.String())
		}
		if snaps[args[0]], err = prog.Take(p.M); err != nil {
			t.Fatal(err)
		}
		p.M.Close(ctx)
	}
	if restored := run(snaps, nil); restored != got {
		t.Fatalf("restored from snapshots, the world printed\n%s\nwant\n%s", restored, got)
	}
	// And the same instances, reset after they exited, twice.
	reuse := map[string]*Proc{}
	for i := 0; i < 3; i++ {
		if again := run(snaps, reuse); again != got {
			t.Fatalf("run %d of reset instances printed\n%s\nwant\n%s", i, again, got)
		}
	}
	for _, p := range reuse {
		p.M.Close(ctx)
	}
}

// The network world, stopped at a moment when every guest waits, forks:
// the copy and the original, run on, each print what the world run
// straight through prints.
func TestIdleNetworkWorldFork(t *testing.T) {
	ctx, r, prog := worldHost(t, buildGuest(t))
	guests := [][]string{{"server", "server"}, {"c1", "client", "c1"}, {"c2", "client", "c2"}}
	start := func() *World {
		w := NewWorld()
		for i, args := range guests {
			if _, err := w.Spawn(ctx, r, prog, wazero.NewModuleConfig(), fmt.Sprintf("10.0.0.%d", i+1), args...); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}
	finish := func(w *World) string {
		if err := w.Run(); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, p := range w.procs {
			fmt.Fprintf(&b, "== %s: exit %d, %d pauses\n%s", p.Name, p.Code, p.Pauses, p.Out.String())
			if p.M != nil {
				p.M.Close(ctx)
			}
		}
		return b.String()
	}
	want := finish(start())
	// Before the first accept, with data on its way, mid-exchange, and
	// after the clients closed.
	for _, at := range []int64{500e3, 3e6, 15e6, 26500e3} {
		w := start()
		if err := w.RunUntil(at); err != nil {
			t.Fatal(err)
		}
		f, err := w.Fork(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if got := finish(f); got != want {
			t.Fatalf("forked at %dns, the copy printed\n%s\nwant\n%s", at, got, want)
		}
		if got := finish(w); got != want {
			t.Fatalf("forked at %dns, the original printed\n%s\nwant\n%s", at, got, want)
		}
	}
}
