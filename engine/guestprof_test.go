package engine

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"strings"
	"testing"
)

// profileStacks lists a profile's stacks, "program: root;...;leaf", with
// their calls and wall time.
func profileStacks(gp *GuestProfile) (calls, wall map[string]int64) {
	calls, wall = map[string]int64{}, map[string]int64{}
	var walk func(prefix string, n *gpNode)
	walk = func(prefix string, n *gpNode) {
		for name, k := range n.kids {
			key := prefix + ";" + name
			if k.calls != 0 || k.wall != 0 {
				calls[key] += k.calls
				wall[key] += k.wall
			}
			walk(key, k)
		}
	}
	for program, root := range gp.roots {
		walk(program+":", root)
	}
	return calls, wall
}

// A guest profile changes nothing a run shows: the digest of a seed is the
// same with and without it, and the same seed profiled twice gives the same
// stacks with the same counts of calls (only wall times differ). The stacks
// are Go's: the server's request handler sits under the goroutine that runs
// it, a goroutine that parks under what it waited in, and host calls under
// the Go function that imports them.
func TestGuestProfileKeepsTheDigest(t *testing.T) {
	p := prepareFile(t, "../examples/kvlog/seedfall.json")
	ctx := context.Background()
	plain := run(t, p, 1, nil)
	var profiles []*GuestProfile
	for range 2 {
		gp := NewGuestProfile()
		res, err := p.Run(ctx, RunOptions{Seed: 1, GuestProfile: gp})
		if err != nil {
			t.Fatal(err)
		}
		if res.Digest != plain.Digest {
			t.Fatalf("seed 1 with a guest profile: digest %s, without %s", res.Digest, plain.Digest)
		}
		if gp.Runs() != 1 {
			t.Fatalf("the profile holds %d runs, want 1", gp.Runs())
		}
		profiles = append(profiles, gp)
	}
	// Its calls are the calls the engine counts: every guest function's
	// entries, but for each instance's first, which asks for the first
	// count.
	counted, err := p.pctCalls(ctx) // seed 1, as kvlog runs it
	if err != nil {
		t.Fatal(err)
	}
	for program, root := range profiles[0].roots {
		var entries int64
		var walk func(n *gpNode)
		walk = func(n *gpNode) {
			if n.guest {
				entries += n.calls
			}
			for _, k := range n.kids {
				walk(k)
			}
		}
		walk(root)
		instances := root.kids[gpInstantiate.name].calls
		if got := entries - instances; got != int64(counted[program]) || instances == 0 {
			t.Errorf("%s: %d calls in %d instances, but the engine counted %d", program, entries, instances, counted[program])
		}
	}
	calls, wall := profileStacks(profiles[0])
	again, _ := profileStacks(profiles[1])
	if !maps.Equal(calls, again) {
		for k, v := range calls {
			if again[k] != v {
				t.Errorf("%s: %d calls, then %d", k, v, again[k])
			}
		}
		t.Fatalf("the same seed profiled twice gave other calls (%d stacks, then %d)", len(calls), len(again))
	}
	var total int64
	for _, w := range wall {
		total += w
	}
	if total <= 0 {
		t.Fatalf("no wall time in the profile")
	}
	for _, want := range []string{
		"server:;runtime.main;main.main",
		"server:;main.main.gowrap2;main.serve;main.handle;main.(*store).put",
		"client:;runtime.main;main.main;main.(*client).request",
	} {
		if !hasStack(calls, want) {
			t.Errorf("no stack starts %q", want)
		}
	}
	// main.main goes on after every time it parked (in time.Sleep, in a
	// read): wasm_pc_f_loop calls it again, and the profile files it under
	// runtime.main still.
	for k := range calls {
		if strings.Contains(k, ":;main.main;") || strings.Contains(k, ":;main.serve;") {
			t.Errorf("a frame lost the stack it was suspended in: %s", k)
			break
		}
	}
	// Host calls are leaves named by their import, under the Go function
	// that imports them.
	for _, want := range []string{
		"server:;runtime.main;main.main;main.openStoreWith;os.OpenFile;os.openFileNolog;os.open;syscall.Open;syscall.openat;syscall.path_open;path_open",
		"client:;runtime.main;main.main;time.Sleep;runtime.gopark;runtime.mcall;runtime.park_m;runtime.schedule;runtime.findRunnable;runtime.netpoll;runtime.poll_oneoff;poll_oneoff",
	} {
		if calls[want] == 0 {
			t.Errorf("no calls of %q", want)
		}
	}
	var out bytes.Buffer
	if _, err := profiles[0].WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&out)
	if err != nil {
		t.Fatalf("the profile is not gzipped: %v", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("main.(*store).put")) || !bytes.Contains(raw, []byte("nanoseconds")) {
		t.Errorf("the written profile lacks main.(*store).put or its wall time's unit")
	}
}

func hasStack(stacks map[string]int64, prefix string) bool {
	for k := range stacks {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
