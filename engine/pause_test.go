package engine

import (
	"context"
	"errors"
	"github.com/seedfall/seedfall/engine/cover"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

// pauseWorlds are worlds whose guests wait in every way there is: for
// timers and sockets (poll_oneoff), for their CPU debt, on a slow fsync
// (parked and in the host), after a failed Always, at a yield; under
// crashes, partitions, disk latency and preemption.
var pauseWorlds = []struct {
	name, world, file string
}{
	{name: "kvlog crashes", file: "../examples/kvlog/seedfall.json"},
	{name: "liveness chaos", file: "../examples/liveness/seedfall.chaos.json"},
	{name: "groupcommit", file: "../examples/groupcommit/seedfall.json"},
	{name: "bank preempts", file: "../examples/bank/seedfall.json"},
	{name: "slow fsyncs", world: groupsyncWorld},
	{name: "cpu-bound handlers", world: `{"net_overlay": true, "latency": ["1ms", "1ms"],
		"nodes": [{"name": "server", "pkg": "./cpuwork", "args": ["server", "-work", "20000"]}],
		"workload": {"name": "client", "pkg": "./cpuwork", "args": ["client", "-n", "8"]}}`},
	{name: "a failed Always", world: `{"nodes": [], "workload": {"name": "client", "pkg": "./props", "args": ["-bad", "3"]}}`},
}

func preparePauseWorld(t *testing.T, name, js, file string) *Prepared {
	t.Helper()
	if file != "" {
		return prepareFile(t, file)
	}
	return prepare(t, js)
}

// A guest that pauses to wait (wasi/pause.go) runs the same run as one
// that waits inside its host calls: the same trace, to the byte, over
// every way of waiting and every kind of fault; and each seed run twice
// gives the same digest.
func TestPausingIsWaiting(t *testing.T) {
	for _, tc := range pauseWorlds {
		t.Run(tc.name, func(t *testing.T) {
			p := preparePauseWorld(t, tc.name, tc.world, tc.file)
			pauses := uint64(0)
			for seed := uint64(1); seed <= 3; seed++ {
				paused := twice(t, p, seed, nil)
				waited, err := p.Run(context.Background(), RunOptions{Seed: seed, NoPause: true})
				if err != nil {
					t.Fatal(err)
				}
				if waited.Pauses != 0 {
					t.Fatalf("seed %d: NoPause paused %d times", seed, waited.Pauses)
				}
				if paused.Digest != waited.Digest {
					t.Fatalf("seed %d: pausing changed the run:\n%s\n--- waiting in host calls:\n%s", seed,
						trace.Render(paused.Lines, ""), trace.Render(waited.Lines, ""))
				}
				pauses += paused.Pauses
			}
			if pauses == 0 {
				t.Fatal("no guest paused: the world tests nothing")
			}
		})
	}
}

// While a guest is paused, its memory and globals are all of it: moving it
// into a new instance of its module, a copy of both, at every pause, runs
// the same run.
func TestPausedGuestIsItsMemoryAndGlobals(t *testing.T) {
	// Moving a guest copies all of its memory, at every pause: kvlog's
	// crashes, two seeds, keep it to seconds (the forks' tests restore
	// copies in every world).
	for _, tc := range pauseWorlds[:1] {
		t.Run(tc.name, func(t *testing.T) {
			p := preparePauseWorld(t, tc.name, tc.world, tc.file)
			for seed := uint64(1); seed <= 2; seed++ {
				stay := run(t, p, seed, nil)
				moved, probe, err := p.runProbed(context.Background(), RunOptions{Seed: seed}, true)
				if err != nil {
					t.Fatal(err)
				}
				if probe.relocated == 0 {
					t.Fatalf("seed %d: no guest was moved", seed)
				}
				if stay.Digest != moved.Digest {
					t.Fatalf("seed %d: moving paused guests (%d times) changed the run:\n%s\n--- staying:\n%s", seed, probe.relocated,
						trace.Render(moved.Lines, ""), trace.Render(stay.Lines, ""))
				}
			}
		})
	}
}

// forked is a fork's result, and how many guests it copied from its
// checkpoint.
type forked struct {
	*Result
	switched uint64
}

// forksOf runs seed of p, then runs it again under its own schedule with a
// checkpoint at each of the moments k/parts of it (k from 1 to parts-1),
// which must change nothing, and forks it at each, every stream re-keyed
// there. Every checkpoint must take a fork, and every fork's digest must
// be the digest of the same run from t=0. It returns the forks.
func forksOf(t *testing.T, p *Prepared, seed uint64, parts int) []forked {
	t.Helper()
	first := run(t, p, seed, nil)
	sch, end := first.Schedule, time.Duration(first.SimNs)
	var moments []time.Duration
	for k := 1; k < parts; k++ {
		moments = append(moments, end*time.Duration(k)/time.Duration(parts))
	}
	base, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: sch, Checkpoints: moments})
	if err != nil {
		t.Fatal(err)
	}
	if base.Digest != first.Digest {
		t.Fatalf("seed %d: taking checkpoints changed the run:\n%s\n--- without:\n%s", seed, trace.Render(base.Lines, ""), trace.Render(first.Lines, ""))
	}
	// The tapes close at the last checkpoint: no fork plays past it, so
	// nothing a guest did after it is recorded.
	if last := base.Checkpoints[len(base.Checkpoints)-1]; last.Reason == "" {
		for name, g := range last.guests {
			if tp := last.tapes[incKey{name, g.inc}]; g.snap != nil && tp.Len() > g.pos {
				t.Fatalf("seed %d: %s's tape went on after the last checkpoint at %v: %d items, %d then", seed, name, last.At, tp.Len(), g.pos)
			}
		}
	}
	var forks []forked
	for i, c := range base.Checkpoints {
		if c.Reason != "" {
			t.Fatalf("seed %d: no fork at %v: %s", seed, c.At, c.Reason)
		}
		fs := sch.ForkAt(c.At, uint64(i+1))
		scratch := run(t, p, seed, fs)
		fork, probe, err := p.runProbed(context.Background(), RunOptions{Seed: seed, Schedule: fs, From: c}, false)
		if err != nil {
			t.Fatal(err)
		}
		if fork.Digest != scratch.Digest {
			t.Fatalf("seed %d: the fork at %v is not the run from scratch (%s %s; from scratch %s %s):\n%s\n--- from scratch:\n%s", seed, c.At,
				fork.Class, fork.Reason, scratch.Class, scratch.Reason, trace.Render(fork.Lines, ""), trace.Render(scratch.Lines, ""))
		}
		// What a user sees of a run besides its trace is the same too.
		type seen struct {
			Passed              bool
			Class, Reason, Node string
			SimNs               int64
			Steps               uint64
			Properties          []Property
			History             *HistorySummary
			Reach               disk.Reach
			Weakened            uint64
			Coverage            *cover.Run
			Guidance            []Guidance
		}
		see := func(r *Result) seen {
			return seen{r.Passed, r.Class, r.Reason, r.Node, r.SimNs, r.Steps, r.Properties, r.History, r.Reach, r.Weakened, r.Coverage, r.Guidance}
		}
		if a, b := see(fork), see(scratch); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d: the fork at %v has the run's trace but not its result:\nfork    %+v\nscratch %+v", seed, c.At, a, b)
		}
		forks = append(forks, forked{fork, probe.switched})
	}
	return forks
}

// A fork from a checkpoint (RunOptions.From) is the same run as the fork
// run from t=0: the same trace, to the byte, over every way of waiting and
// every kind of fault, at moments across the run; and taking checkpoints
// changes nothing in the run that takes them.
func TestForkIsARunFromScratch(t *testing.T) {
	for _, tc := range pauseWorlds {
		t.Run(tc.name, func(t *testing.T) {
			p := preparePauseWorld(t, tc.name, tc.world, tc.file)
			for seed := uint64(1); seed <= 2; seed++ {
				for _, fork := range forksOf(t, p, seed, 4) {
					if fork.switched == 0 {
						t.Fatalf("seed %d: a fork copied no guest from its checkpoint", seed)
					}
				}
			}
		})
	}
}

// A guest that maps a file stores into the file's pages without host
// calls; the disk learns of the stores by comparing the mapped memory with
// its cache (at msync, munmap, exit, a crash), and the tapes keep what it
// found: a fork after mappings, msyncs and a crash is the run from scratch.
func TestForkAfterMappings(t *testing.T) {
	for _, js := range []string{
		`{"nodes": [], "workload": {"name": "m", "pkg": "./mmapops"}}`,
		`{"faults": {"crash_per_sec": 2}, "nodes": [{"name": "d", "pkg": "./groupsync", "args": ["-how", "msync"]}], "compat_overlay": true,
			"workload": {"name": "w", "pkg": "./clockwatch", "args": ["-n", "3", "-every", "1s"]}}`,
	} {
		p := prepare(t, js)
		copied := uint64(0)
		for seed := uint64(1); seed <= 2; seed++ {
			for _, fork := range forksOf(t, p, seed, 3) {
				copied += fork.switched
			}
		}
		if copied == 0 {
			t.Fatal("no fork copied a guest from its checkpoint")
		}
	}
}

// Every bundled world, the real software's too, forks as it runs from
// scratch: seed 1 at three moments. Slow (it builds every example), so it
// runs under SEEDFALL_SLOW=1 (.ci/run runs it).
func TestEveryExampleForks(t *testing.T) {
	if os.Getenv("SEEDFALL_SLOW") != "1" {
		t.Skip("slow: set SEEDFALL_SLOW=1")
	}
	files, _ := filepath.Glob("../examples/*/seedfall*.json")
	real, _ := filepath.Glob("../examples/real/*/seedfall*.json")
	for _, file := range append(files, real...) {
		t.Run(strings.TrimPrefix(file, "../examples/"), func(t *testing.T) {
			copied := uint64(0)
			for _, fork := range forksOf(t, prepareFile(t, file), 1, 4) {
				copied += fork.switched
			}
			if copied == 0 {
				t.Fatal("no fork copied a guest from its checkpoint")
			}
		})
	}
}

// A guest's memory_limit counts what it grew, not the size of the instance
// it runs in: a restart reuses an instance as large as the last one grew.
// A fork's copy of the guest keeps that count, so it runs out of memory
// where the run from scratch does (seed 4 at 99.5 ms differed by 0.1 MiB
// when the copy's whole memory counted).
func TestForkKeepsTheMemoryLimit(t *testing.T) {
	p := prepare(t, hogWorld(`"memory_limit": "24MiB", "faults": {"crash_per_sec": 100}, "duration": "1s", `, ""))
	oom := 0
	for seed := uint64(1); seed <= 6; seed++ {
		for _, fork := range forksOf(t, p, seed, 8) {
			if fork.Class == ClassMemory {
				oom++
			}
		}
	}
	if oom == 0 {
		t.Fatal("no fork ran out of memory: the test needs some that do")
	}
}

// A played incarnation killed after its fork's moment before it ran again
// (here: crashed at once) dies as its guest's copy: with the count of
// calls it had at the checkpoint, as in the run from scratch, not the
// tape's last, which the checkpointed run, where it ran on, had at its
// end (or nothing, the tapes closed). Its node's count goes on from
// there, and pct's change points are counts of the node's calls: taking
// the tape's, the forks below preempted at other calls than the runs from
// scratch.
func TestForkCrashesAPlayedGuest(t *testing.T) {
	w, err := world.Load("../examples/bank/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Preempt.Strategy, w.Preempt.Depth, w.Preempt.Steps = world.StrategyPCT, 6, 20000
	p, err := testEngine(t).Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	first := run(t, p, 1, nil)
	sch, end := first.Schedule, time.Duration(first.SimNs)
	for k := 1; k < 8; k++ {
		at := end * time.Duration(k) / 8
		rec, err := p.Run(context.Background(), RunOptions{Seed: 1, Schedule: sch, Checkpoints: []time.Duration{at}})
		if err != nil {
			t.Fatal(err)
		}
		c := rec.Checkpoints[0]
		if c.Reason != "" {
			t.Fatalf("no fork at %v: %s", at, c.Reason)
		}
		fs := sch.ForkAt(at, 1)
		fs.Faults = append(fs.Faults, faults.Fault{At: at + 1, Kind: faults.Crash, Node: "server", Until: at + time.Millisecond})
		scratch := run(t, p, 1, fs)
		fork, err := p.Run(context.Background(), RunOptions{Seed: 1, Schedule: fs, From: c})
		if err != nil {
			t.Fatal(err)
		}
		if fork.Digest != scratch.Digest {
			t.Fatalf("the fork at %v, whose server crashes 1ns later, is not the run from scratch:\n%s\n--- from scratch:\n%s", at,
				trace.Render(fork.Lines, ""), trace.Render(scratch.Lines, ""))
		}
	}
}

// A fork stopped while it still plays its parent's tape (explore's
// -stop-at-first cancels the runs after a failure; an interrupt stops
// all) returns the context's error: the tapes of a recording for forks
// stop at its last checkpoint, before the guests ended, and a played
// guest that ends there has no last count of calls to give (it panicked
// with "playback diverged").
func TestForkStoppedWhilePlaying(t *testing.T) {
	p := prepareFile(t, "../examples/bank/seedfall.json")
	first := run(t, p, 1, nil)
	at := time.Duration(first.SimNs) * 3 / 4
	rec, err := p.Run(context.Background(), RunOptions{Seed: 1, Schedule: first.Schedule, Checkpoints: []time.Duration{at}, StopAt: at + 1})
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Checkpoints[0]
	if c.Reason != "" {
		t.Fatalf("no fork at %v: %s", at, c.Reason)
	}
	fs := first.Schedule.ForkAt(at, 1)
	stopped := 0
	for _, after := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		if after == 0 {
			cancel()
		} else {
			time.AfterFunc(after, cancel)
		}
		_, err := p.Run(ctx, RunOptions{Seed: 1, Schedule: fs, From: c})
		cancel()
		switch {
		case errors.Is(err, context.Canceled):
			stopped++
		case err != nil:
			t.Fatalf("a fork stopped %v in: %v, want the context's error", after, err)
		}
	}
	if stopped == 0 {
		t.Fatal("no fork was stopped: the test needs one that is")
	}
}
