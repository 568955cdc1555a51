package shrink

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

func prepare(t testing.TB, path string) *engine.Prepared {
	t.Helper()
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Prepare(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The bundled examples' bugs (engine/examples_test.go says which seed of
// each fails) shrink to at most 3 faults, and the shrunk schedule fails
// the same way on replay, with the trace the shrink saw.
func TestExamples(t *testing.T) {
	for _, ex := range []struct {
		name  string
		seed  uint64
		short bool // also run with -short
	}{
		{"kvlog", 1, true}, {"snapshot", 1, false}, {"symswap", 1, true}, {"walretry", 1, true},
		{"primarybackup", 1, false}, {"retries", 1, false}, {"lease", 2, true},
	} {
		t.Run(ex.name, func(t *testing.T) {
			if testing.Short() && !ex.short {
				t.Skip("slow example; runs without -short")
			}
			p := prepare(t, fmt.Sprintf("../../examples/%s/seedfall.json", ex.name))
			begin := time.Now()
			res, err := Shrink(context.Background(), p, ex.seed, nil, Options{Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			wall := time.Since(begin)
			if res.Start.Passed {
				t.Fatalf("seed %d of %s passes: pick a failing one", ex.seed, ex.name)
			}
			sch := res.Schedule
			t.Logf("%s seed %d: %d faults -> %d in %d runs, duration %v, %v wall", ex.name, ex.seed, sch.ShrunkFrom, len(sch.Faults), res.Runs, sch.Duration, wall.Round(time.Millisecond))
			for _, f := range sch.Faults {
				t.Logf("  %s", faults.Describe(f))
			}
			if res.Exhausted {
				t.Fatal("shrink said its budget ran out, with no budget")
			}
			if len(sch.Faults) > 3 {
				t.Errorf("shrunk to %d faults, want at most 3", len(sch.Faults))
			}
			if sch.ShrunkFrom != len(res.Start.Schedule.Faults) || sch.ShrinkRuns != res.Runs {
				t.Errorf("shrunk_from %d (started with %d), shrink_runs %d (took %d)", sch.ShrunkFrom, len(res.Start.Schedule.Faults), sch.ShrinkRuns, res.Runs)
			}
			// Through the file, as a user replays it.
			b, err := sch.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var back faults.Schedule
			if err := back.UnmarshalJSON(b); err != nil {
				t.Fatal(err)
			}
			again, err := p.Run(context.Background(), engine.RunOptions{Seed: ex.seed, Schedule: &back})
			if err != nil {
				t.Fatal(err)
			}
			if again.Passed || again.Class != res.Start.Class || again.Node != res.Start.Node {
				t.Fatalf("the shrunk schedule replays as passed=%v %s on %q, want %s on %q", again.Passed, again.Class, again.Node, res.Start.Class, res.Start.Node)
			}
			if again.Digest != res.Run.Digest {
				t.Errorf("the replay's trace differs from the shrunk run's")
			}
		})
	}
}

// A schedule shrinks to the same bytes with one run at a time and with
// several.
func TestSameWhateverParallel(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	var first []byte
	for _, par := range []int{1, 3} {
		res, err := Shrink(context.Background(), p, 3, nil, Options{Parallel: par})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := res.Schedule.MarshalJSON()
		if first == nil {
			first = b
		} else if string(b) != string(first) {
			t.Fatalf("parallel %d shrank to\n%s\nparallel 1 to\n%s", par, b, first)
		}
	}
}

func TestPassingSeed(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.fixed.json")
	res, err := Shrink(context.Background(), p, 1, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Start.Passed || res.Schedule != nil || res.Runs != 1 {
		t.Fatalf("a passing seed: passed %v, schedule %v, %d runs", res.Start.Passed, res.Schedule, res.Runs)
	}
}

// Candidates that keep the smallest schedule's past late into its run fork
// from a recording of it, and the shrink ends as it does from t=0: the same
// schedule, runs and trace. testdata/late's failure needs a crash after a
// second of a run of a second and a half, so moving the crash earlier
// tries late moments, and its client's setup makes that past cost.
func TestForkedCandidates(t *testing.T) {
	p := prepare(t, "testdata/late/seedfall.json")
	start := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 200 * time.Millisecond, Kind: "crash", Node: "server", Until: 230 * time.Millisecond},
		{At: 700 * time.Millisecond, Kind: "pause", Node: "client", Until: 720 * time.Millisecond},
		{At: 1300 * time.Millisecond, Kind: "crash", Node: "server", Until: 1320 * time.Millisecond},
		{At: 1350 * time.Millisecond, Kind: "pause", Node: "server", Until: 1360 * time.Millisecond},
	}}
	var got [3]string
	// Fork whatever a fork saves, however fast the machine runs the past.
	for i, o := range []Options{{NoForks: true}, {minSaved: -1}, {Parallel: 3, minSaved: -1}} {
		res, err := Shrink(context.Background(), p, 1, start, o)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case o.NoForks && res.Forked != 0:
			t.Errorf("%d runs forked with NoForks", res.Forked)
		case !o.NoForks && res.Forked == 0:
			t.Errorf("no candidate forked (parallel %d)", o.Parallel)
		}
		b, _ := res.Schedule.MarshalJSON()
		got[i] = fmt.Sprintf("%s\nruns %d, digest %s", b, res.Runs, res.Run.Digest)
		t.Logf("parallel %d, forks %v: %d runs, %d forked", o.Parallel, !o.NoForks, res.Runs, res.Forked)
	}
	if got[1] != got[0] || got[2] != got[0] {
		t.Errorf("shrinks differ:\nfrom t=0:\n%s\nforking:\n%s\nforking, 3 at once:\n%s", got[0], got[1], got[2])
	}
	if !strings.Contains(got[0], `"at":"1.0`) {
		t.Errorf("the crash did not shrink to about a second:\n%s", got[0])
	}
}

// agreeUntil is the latest moment before which a fork of the parent's run
// keeps its past.
func TestAgreeUntil(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	crash := func(at, until int) faults.Fault {
		return faults.Fault{At: ms(at), Kind: "crash", Node: "server", Until: ms(until)}
	}
	parent := &faults.Schedule{Seed: 1, Duration: time.Second, Faults: []faults.Fault{crash(100, 110), crash(500, 510), crash(800, 810)}}
	with := func(fs ...faults.Fault) *faults.Schedule {
		return &faults.Schedule{Seed: 1, Duration: time.Second, Faults: fs}
	}
	for _, tc := range []struct {
		sch  *faults.Schedule
		at   time.Duration
		fork bool
	}{
		{with(crash(100, 110), crash(500, 510)), ms(800), true},                        // the last removed
		{with(crash(100, 110), crash(800, 810)), ms(500), true},                        // the middle removed
		{with(crash(100, 110), crash(300, 310), crash(800, 810)), ms(300), true},       // one moved earlier
		{with(crash(100, 110), crash(500, 505), crash(800, 810)), ms(500), true},       // one shortened
		{with(crash(0, 110), crash(500, 510), crash(800, 810)), 0, false},              // moved to t=0
		{with(crash(500, 510), crash(800, 810)), ms(100), true},                        // the first removed
		{with(crash(100, 110), crash(500, 510), crash(800, 810)), 0, false},            // the same
		{&faults.Schedule{Duration: 2 * time.Second, Faults: parent.Faults}, 0, false}, // another duration
		{nil, 0, false},
	} {
		at, ok := agreeUntil(parent, tc.sch)
		if at != tc.at || ok != tc.fork {
			t.Errorf("%v: %v %v, want %v %v", tc.sch, at, ok, tc.at, tc.fork)
		}
	}
}

// BenchmarkShrink shrinks testdata/late's schedule (its candidates keep
// most of the run's past, which its client's setup makes cost) and kvlog
// seed 1's (whose crash moves to the run's first milliseconds, so nothing
// forks), from t=0 and forking.
//
//	go test ./engine/shrink -run '^$' -bench BenchmarkShrink -benchtime 5x -count 2
func BenchmarkShrink(b *testing.B) {
	late := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 200 * time.Millisecond, Kind: "crash", Node: "server", Until: 230 * time.Millisecond},
		{At: 700 * time.Millisecond, Kind: "pause", Node: "client", Until: 720 * time.Millisecond},
		{At: 1300 * time.Millisecond, Kind: "crash", Node: "server", Until: 1320 * time.Millisecond},
		{At: 1350 * time.Millisecond, Kind: "pause", Node: "server", Until: 1360 * time.Millisecond},
	}}
	for _, w := range []struct {
		name, path string
		start      *faults.Schedule
	}{{"late", "testdata/late/seedfall.json", late}, {"kvlog", "../../examples/kvlog/seedfall.json", nil}} {
		p := prepare(b, w.path)
		for _, noForks := range []bool{true, false} {
			name := w.name + ", forks"
			if noForks {
				name = w.name + ", t=0"
			}
			b.Run(name, func(b *testing.B) {
				forked := 0
				for range b.N {
					res, err := Shrink(context.Background(), p, 1, w.start, Options{Parallel: 1, NoForks: noForks})
					if err != nil {
						b.Fatal(err)
					}
					forked += res.Forked
				}
				b.ReportMetric(float64(forked)/float64(b.N), "forks/op")
			})
		}
	}
}

// A fault that fires at an operation records in its at only when it fired
// in some run: changed or added, it may fire before that, so a candidate
// that changes one keeps nothing of the past.
func TestAgreeUntilOperationFaults(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	io := func(at int, op uint64) faults.Fault {
		return faults.Fault{At: ms(at), Kind: engine.KindCrashIO, Node: "server", Op: op, Until: ms(at + 10)}
	}
	crash := faults.Fault{At: ms(100), Kind: "crash", Node: "server", Until: ms(110)}
	parent := &faults.Schedule{Duration: time.Second, Faults: []faults.Fault{crash, io(500, 40)}}
	for _, tc := range []struct {
		fs   []faults.Fault
		at   time.Duration
		fork bool
	}{
		{[]faults.Fault{crash, io(500, 20)}, 0, false},              // its op earlier
		{[]faults.Fault{crash, io(500, 40), io(900, 60)}, 0, false}, // one added
		{[]faults.Fault{io(500, 40)}, ms(100), true},                // the timed one removed
		{[]faults.Fault{crash}, ms(500), true},                      // the one at an operation removed
	} {
		at, ok := agreeUntil(parent, &faults.Schedule{Duration: time.Second, Faults: tc.fs})
		if at != tc.at || ok != tc.fork {
			t.Errorf("%v: %v %v, want %v %v", tc.fs, at, ok, tc.at, tc.fork)
		}
	}
}

// A fault at an operation that a candidate drops must not have fired in
// the parent's run before the fork: its At in the schedule may be stale
// (moved to an earlier operation, it keeps its At), so keepsFired goes by
// when it fired in the parent's run.
func TestKeepsFired(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	io := func(at int, op uint64) faults.Fault {
		return faults.Fault{At: ms(at), Kind: engine.KindCrashIO, Node: "server", Op: op, Until: ms(10)}
	}
	crash := faults.Fault{At: ms(100), Kind: "crash", Node: "server", Until: ms(110)}
	// The parent says its crash at operation 40 comes at 500ms; it came
	// at 300ms in the parent's run.
	parentRun := &engine.Result{Schedule: &faults.Schedule{Faults: []faults.Fault{crash, io(300, 40)}}}
	for _, tc := range []struct {
		fs []faults.Fault
		at time.Duration
	}{
		{[]faults.Fault{crash, io(500, 40)}, math.MaxInt64}, // kept, with its stale At
		{[]faults.Fault{crash}, ms(300)},                    // dropped: before it fired
		{[]faults.Fault{io(500, 40)}, math.MaxInt64},        // a timed fault dropped: agreeUntil's
	} {
		if at := keepsFired(parentRun, &faults.Schedule{Faults: tc.fs}); at != tc.at {
			t.Errorf("%v: %v, want %v", tc.fs, at, tc.at)
		}
	}
	if at := keepsFired(nil, &faults.Schedule{}); at != 0 {
		t.Errorf("no parent run: %v, want 0", at)
	}
}
