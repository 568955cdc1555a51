package engine

import (
	"cmp"
	"context"
	"github.com/seedfall/seedfall/engine/cover"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// prepareCovered prepares an example world with coverage on.
func prepareCovered(t *testing.T, path string) *Prepared {
	t.Helper()
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Coverage = true
	p, err := testEngine(t).Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// What a user asks of coverage: the blocks of their own code that ran, and
// when each ran first. kvlog's server replays its log only when it restarts
// after a crash, so a seed with crashes reaches replay's loop after 0.
func TestCoverageOfTheUsersCode(t *testing.T) {
	p := prepareCovered(t, "../examples/kvlog/seedfall.json")
	res := run(t, p, 1, nil)
	cov := res.Coverage
	if cov == nil {
		t.Fatal("a world with coverage on gave no coverage")
	}
	server := cov.Maps["server"]
	if server == nil {
		t.Fatalf("no coverage layout for the server; programs %v", cov.Hit.Programs())
	}
	hit, all := cov.Stmts()
	if hit == 0 || hit >= all {
		t.Fatalf("%d of %d statements ran, want some but not all", hit, all)
	}
	var crashed time.Duration
	for _, f := range res.Schedule.Faults {
		if f.Kind == "crash" {
			crashed = f.At
			break
		}
	}
	if crashed == 0 {
		t.Fatal("seed 1 of kvlog has no crash: pick another seed")
	}
	// The block of replayWith that applies a record (`data[key] = value`)
	// runs first after a crash, and the standard library is not covered.
	src, err := os.ReadFile("../examples/kvlog/server/store.go")
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := strings.Cut(string(src), "data[key] = value")
	line := uint32(strings.Count(before, "\n") + 1)
	replayAt := time.Duration(-1)
	for _, e := range cov.First {
		where := cov.Maps[e.Program].Where(e.Unit)
		if !strings.HasPrefix(where, "kvlog/") && !strings.HasPrefix(where, "kvclient/") {
			t.Errorf("covered %s: not the user's code", where)
		}
		u := cov.Maps[e.Program].Units[e.Unit]
		if e.Program == "server" && server.Funcs[u.Func].Name == "replayWith" && u.StLine <= line && u.EnLine >= line && replayAt < 0 {
			replayAt = e.At
		}
	}
	if replayAt < 0 {
		t.Fatal("the server's replayWith never ran past its first lines in a run with a crash")
	}
	t.Logf("%d of %d statements; replay first seen at %v, first crash at %v", hit, all, replayAt, crashed)
	if replayAt < crashed {
		t.Errorf("replay's data[key] = value first seen at %v, before the first crash at %v: the first boot has no log to replay", replayAt, crashed)
	}
	// The same seed twice: the same digest, and the same coverage, to the
	// moment and the count.
	again := run(t, p, 1, nil)
	if again.Digest != res.Digest {
		t.Fatalf("seed 1 twice: digests %s and %s", res.Digest, again.Digest)
	}
	if !reflect.DeepEqual(again.Coverage.Counts, cov.Counts) {
		t.Error("seed 1 twice: the blocks ran different numbers of times")
	}
	if len(again.Coverage.First) != len(cov.First) {
		t.Fatalf("seed 1 twice: %d then %d first moments", len(cov.First), len(again.Coverage.First))
	}
	for i, e := range cov.First {
		if again.Coverage.First[i] != e {
			t.Fatalf("seed 1 twice: moment %d is %+v, then %+v", i, e, again.Coverage.First[i])
		}
	}
	if !reflect.DeepEqual(again.Coverage.Rises, cov.Rises) {
		t.Error("seed 1 twice: the blocks reached their counts at different moments")
	}
	// Each block that ran n times reached each count up to n, once, in
	// order, after it first ran.
	first := map[int]time.Duration{}
	for _, e := range cov.First {
		if e.Program == "server" {
			first[e.Unit] = e.At
		}
	}
	reached := map[int][]uint32{}
	var last time.Duration
	for _, e := range cov.Rises {
		if e.At < last {
			t.Fatalf("rise %+v comes after one at %v", e, last)
		}
		last = e.At
		if e.Program != "server" {
			continue
		}
		if e.At < first[e.Unit] {
			t.Errorf("%s reached %d runs at %v, before it first ran at %v", server.Where(e.Unit), e.N, e.At, first[e.Unit])
		}
		reached[e.Unit] = append(reached[e.Unit], e.N)
	}
	for u, n := range cov.Counts["server"] {
		var want []uint32
		for _, th := range cover.Thresholds[1:] {
			if th <= n {
				want = append(want, th)
			}
		}
		if !slices.Equal(reached[u], want) {
			t.Errorf("%s ran %d times and reached the counts %v, want %v", server.Where(u), n, reached[u], want)
		}
	}
}

// A fork's coverage is the run's from scratch: forksOf compares it with
// the rest of the result (blocks, first moments, counts, layouts), in one
// node's world and in semisync's three programs, whose crashes leave
// incarnations that end before a checkpoint.
func TestCoverageForkIsARunFromScratch(t *testing.T) {
	for _, tc := range []struct {
		world string
		seed  uint64
	}{{"../examples/kvlog/seedfall.json", 2}, {"../examples/semisync/seedfall.json", 3}} {
		p := prepareCovered(t, tc.world)
		for _, fork := range forksOf(t, p, tc.seed, 4) {
			if fork.switched == 0 {
				t.Fatalf("%s: a fork copied no guest from its checkpoint", tc.world)
			}
			if fork.Coverage == nil || fork.Coverage.Hit.Len() == 0 || len(fork.Coverage.Counts) == 0 {
				t.Fatalf("%s: a fork has no coverage", tc.world)
			}
		}
	}
}

// A fork whose future differs from its checkpoint's run (a crash just after
// the moment, as guided search adds) has the coverage of the same schedule
// run from scratch: the layouts of programs that crash before they run
// again come from the checkpoint.
func TestCoverageForkWithANewFault(t *testing.T) {
	p := prepareCovered(t, "../examples/semisync/seedfall.json")
	const seed = 3
	first := run(t, p, seed, nil)
	end := time.Duration(first.SimNs)
	moments := []time.Duration{end / 4, end / 2, end * 3 / 4}
	rec, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: first.Schedule, Checkpoints: moments})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rec.Checkpoints {
		if c.Reason != "" {
			t.Fatalf("no fork at %v: %s", c.At, c.Reason)
		}
		for _, node := range []string{"a", "b"} {
			sch := *first.Schedule
			sch.Faults = append(slices.Clone(sch.Faults), faults.Fault{At: c.At + 10*time.Microsecond, Kind: faults.Crash, Node: node, Until: c.At + 20*time.Millisecond})
			slices.SortStableFunc(sch.Faults, func(a, b faults.Fault) int { return cmp.Compare(a.At, b.At) })
			scratch := run(t, p, seed, &sch)
			fork, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: &sch, From: c})
			if err != nil {
				t.Fatal(err)
			}
			if fork.Digest != scratch.Digest {
				t.Fatalf("crash of %s after %v: the fork is not the run from scratch", node, c.At)
			}
			if !reflect.DeepEqual(fork.Coverage, scratch.Coverage) {
				t.Errorf("crash of %s after %v: the fork's coverage differs from the run's from scratch (layouts of %v, from scratch %v)",
					node, c.At, slices.Sorted(maps.Keys(fork.Coverage.Maps)), slices.Sorted(maps.Keys(scratch.Coverage.Maps)))
			}
		}
	}
}
