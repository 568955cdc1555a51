package cause

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

var (
	prepMu   sync.Mutex
	prepared = map[string]*engine.Prepared{}
)

// prepare prepares the world at path once for all the tests.
func prepare(t testing.TB, path string) *engine.Prepared {
	prepMu.Lock()
	defer prepMu.Unlock()
	if p := prepared[path]; p != nil {
		return p
	}
	w, err := world.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(context.Background(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Prepare(context.Background(), w)
	if err != nil {
		e.Close(context.Background())
		t.Fatal(err)
	}
	prepared[path] = p
	return p
}

func find(t *testing.T, p *engine.Prepared, seed uint64, opt Options) *Result {
	t.Helper()
	res, err := Find(context.Background(), p, seed, nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameAnswer fails t unless a and b find the same interval, faults and
// events.
func sameAnswer(t *testing.T, what string, a, b *Result) {
	t.Helper()
	if a.After != b.After || a.Inevitable != b.Inevitable || !reflect.DeepEqual(a.Faults, b.Faults) || !reflect.DeepEqual(a.Events, b.Events) {
		t.Errorf("%s: (%v, %v] with %v and %v; against (%v, %v] with %v and %v", what,
			a.After, a.Inevitable, a.Faults, a.Events, b.After, b.Inevitable, b.Faults, b.Events)
	}
}

// kvlog acknowledges writes before it fsyncs them: its failure becomes
// inevitable at the crash that loses them. cause names that crash, to the
// nanosecond, as running every fork of every moment does, in a fraction
// of the runs.
func TestCauseFindsTheCrash(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	opt := Options{Moments: 8, Branches: 4, Parallel: 2}
	res := find(t, p, 1, opt)
	if res.Failure.Passed {
		t.Fatal("kvlog seed 1 passed; the test needs its failure")
	}
	if len(res.Faults) != 1 || res.Faults[0].Kind != faults.Crash || res.Faults[0].Node != "server" {
		t.Fatalf("faults in (%v, %v]: %v; want the server's crash", res.After, res.Inevitable, res.Faults)
	}
	crash := res.Faults[0].At
	if res.After != crash || res.Inevitable != crash+1 {
		t.Errorf("the crash at %v: the interval is (%v, %v], not its nanosecond", crash, res.After, res.Inevitable)
	}
	opt.Exhaustive = true
	all := find(t, p, 1, opt)
	sameAnswer(t, "kvlog seed 1, exhaustive", res, all)
	for _, m := range all.Moments {
		if m.At <= crash && m.Failed > 0 {
			t.Errorf("a fork at %v, before the crash, failed %d times: without the crash kvlog keeps every write", m.At, m.Failed)
		}
	}
	// Each moment both tried has the same verdict; those that pass took
	// one fork, and a moment left undecided, one.
	verdicts := map[time.Duration]Verdict{}
	for _, m := range all.Moments {
		verdicts[m.At] = m.Verdict
	}
	for _, m := range res.Moments {
		v, ok := verdicts[m.At]
		if ok && m.Verdict != Undecided && v != m.Verdict || (m.Verdict != Fails && m.Runs != 1) {
			t.Errorf("moment %+v; the exhaustive search's: %v (tried: %v)", m, v, ok)
		}
	}
	if res.Runs*3 > all.Runs {
		t.Errorf("%d runs; the exhaustive search took %d", res.Runs, all.Runs)
	}
	// The search tries the faults' edges first, and the crash is one: it
	// tries no other moment, which spares it the forks before the crash,
	// each of which passes and so runs the whole workload.
	for _, m := range res.Moments {
		if !slices.ContainsFunc(res.Failure.Schedule.Faults, func(f faults.Fault) bool { return m.At == f.At || m.At == f.At+1 }) {
			t.Errorf("moment %+v is no fault's edge; the faults: %v", m, res.Failure.Schedule.Faults)
		}
	}
	if res.Steps < uint64(res.Runs)*res.Failure.Steps/2 {
		t.Errorf("%d runs took %d steps; the failing run alone %d", res.Runs, res.Steps, res.Failure.Steps)
	}
}

// The same result every time, whatever the parallelism; only the runs a
// parallel batch made past a moment's deciding fork differ.
func TestCauseDeterministic(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	opt := Options{Moments: 4, Branches: 3, Refine: 3, Parallel: 2}
	a, b := find(t, p, 2, opt), find(t, p, 2, opt)
	opt.Parallel = 1
	one := find(t, p, 2, opt)
	for _, r := range []*Result{a, b, one} {
		if r.Failure.WallNs == 0 {
			t.Fatal("the failing run took no wall time")
		}
		r.Failure.WallNs, r.Forked = 0, 0 // the only fields not a function of the seed
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("twice, two results:\n%+v\n%+v", a, b)
	}
	n := 0
	for _, m := range one.Moments {
		n += m.Runs
	}
	if one.Runs != n || a.Runs < n {
		t.Errorf("the moments count %d forks; one at a time made %d runs, two at a time %d", n, one.Runs, a.Runs)
	}
	one.Runs, one.Steps = a.Runs, a.Steps
	if !reflect.DeepEqual(a, one) {
		t.Errorf("parallel 1 and 2 differ:\n%+v\n%+v", one, a)
	}
}

// A moment's other forks start from the checkpoint its first fork took on
// its way, and the search is the search from t=0, to the steps of its runs
// and the moments' outcomes, one fork at a time or several.
func TestOtherForksStartFromTheFirst(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	for _, par := range []int{1, 3} {
		opt := Options{Moments: 8, Branches: 4, Parallel: par, NoForks: true}
		scratch := find(t, p, 2, opt)
		opt.NoForks, opt.minSaved = false, -1 // fork whatever it saves: kvlog's runs take milliseconds
		forked := find(t, p, 2, opt)
		// The end that fails ran its 3 other forks from its first's.
		if forked.Forked < opt.Branches-1 || scratch.Forked != 0 {
			t.Errorf("parallel %d: %d forks started from a first fork's checkpoint (from t=0: %d); want at least %d",
				par, forked.Forked, scratch.Forked, opt.Branches-1)
		}
		forked.Forked, forked.Failure.WallNs, scratch.Failure.WallNs = 0, 0, 0
		if !reflect.DeepEqual(scratch, forked) {
			t.Errorf("parallel %d: forking changed the search:\n%+v\n%+v", par, scratch, forked)
		}
	}
}

// failing returns the n-th failing seed of p from seed 1 on.
func failing(t *testing.T, p *engine.Prepared, n int) uint64 {
	t.Helper()
	for seed := uint64(1); seed <= 50; seed++ {
		res, err := p.Run(context.Background(), engine.RunOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Passed {
			if n--; n == 0 {
				return seed
			}
		}
	}
	t.Fatalf("%s: not that many failing seeds in 1-50", p.World.File)
	return 0
}

// On another seed, the search finds what running every fork of every
// moment finds, with fewer runs. bank's quick handlers race, with no
// fault at all: the ends of its interval are what all their forks decide.
// (Its signing handlers race in every fork from t=0 since requests that
// arrive during a handler run at its next preemption: no interval there.)
func TestCauseSameAsExhaustive(t *testing.T) {
	for _, c := range []struct {
		world string
		nth   int // which failing seed
	}{
		{"../../examples/kvlog/seedfall.json", 3},
		{"../../examples/bank/seedfall.handlers.json", 1},
	} {
		p := prepare(t, c.world)
		seed := failing(t, p, c.nth)
		opt := Options{Moments: 6, Branches: 3, Refine: 3, Parallel: 2}
		res := find(t, p, seed, opt)
		opt.Exhaustive = true
		all := find(t, p, seed, opt)
		if len(res.Faults) > 0 {
			sameAnswer(t, c.world, res, all)
		}
		ends := 0
		for _, m := range res.Moments {
			if m.At == res.Inevitable && m.Verdict == Fails && m.Failed == opt.Branches || m.At == res.After && m.Verdict == Passes {
				ends++
			}
		}
		if ends != 2 {
			t.Errorf("%s seed %d: (%v, %v]: its ends are not a moment that passes and one whose every fork fails: %+v", c.world, seed, res.After, res.Inevitable, res.Moments)
		}
		if res.Runs >= all.Runs {
			t.Errorf("%s seed %d: %d runs; the exhaustive search took %d", c.world, seed, res.Runs, all.Runs)
		}
		t.Logf("%s seed %d: (%v, %v], %d runs; exhaustive (%v, %v], %d runs", c.world, seed, res.After, res.Inevitable, res.Runs, all.After, all.Inevitable, all.Runs)
	}
}

// Options past the bounds are refused before anything runs: a search
// never holds more moments, forks or worlds than an explanation needs.
func TestCauseBounds(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	for _, c := range []struct {
		opt  Options
		want string
	}{
		{Options{Moments: 1 << 30}, "moments is 1073741824; at most 1024"},
		{Options{Branches: 65}, "branches is 65; at most 64"},
		{Options{Refine: 63}, "refine is 63; at most 20"},
		{Options{Parallel: 1 << 20}, "parallel is 1048576; at most 256"},
		{Options{Threshold: 2}, "threshold is 2; it is a share of the forks, at most 1"},
	} {
		res, err := Find(context.Background(), p, 1, nil, c.opt)
		if err == nil || err.Error() != c.want || res != nil {
			t.Errorf("%+v: %v, want %q", c.opt, err, c.want)
		}
	}
}

// A passing seed has nothing to explain.
func TestCauseOfAPass(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.fixed.json")
	_, err := Find(context.Background(), p, 1, nil, Options{Moments: 2, Branches: 1})
	if err == nil || err.Error() != `seed 1 passes (every workload exited 0): there is no failure to explain` {
		t.Errorf("err = %v", err)
	}
}

// Interrupted (Ctrl-C), cause returns what it established: the moments
// whose forks finished, and an interval that still holds the crash.
func TestCauseInterrupted(t *testing.T) {
	p := prepare(t, "../../examples/kvlog/seedfall.json")
	opt := Options{Moments: 8, Branches: 4, Parallel: 2}
	whole := find(t, p, 1, opt)
	if whole.Interrupted {
		t.Fatal("interrupted without a cancel")
	}
	for _, after := range []int{3, whole.Runs / 2, whole.Runs - 2} {
		ctx, cancel := context.WithCancel(context.Background())
		o := opt
		o.Progress = func(done, most int) {
			if done == after {
				cancel()
			}
		}
		res, err := Find(ctx, p, 1, nil, o)
		cancel()
		if err != nil {
			t.Fatalf("after %d runs: %v", after, err)
		}
		if !res.Interrupted || res.Runs < after || res.Runs > after+2 {
			t.Errorf("after %d runs: interrupted %v, %d runs", after, res.Interrupted, res.Runs)
		}
		n := 0
		for _, m := range res.Moments {
			if m.Runs < 1 || m.Runs > 4 || m.Failed > m.Runs {
				t.Errorf("after %d runs: moment %+v", after, m)
			}
			n += m.Runs
		}
		if n > res.Runs {
			t.Errorf("after %d runs: the moments count %d forks, the result %d", after, n, res.Runs)
		}
		if !(res.After <= whole.After && whole.Inevitable <= res.Inevitable) || res.Inevitable > time.Duration(res.Failure.SimNs) {
			t.Errorf("after %d runs: (%v, %v] does not hold (%v, %v], the interval of the whole search", after, res.After, res.Inevitable, whole.After, whole.Inevitable)
		}
		t.Logf("after %d runs: %d moments, (%v, %v]", after, len(res.Moments), res.After, res.Inevitable)
	}
}

// Forks from checkpoints are the forks from t=0: every moment's forks end
// as they do from scratch, so the search tries the same moments and finds
// the same answer.
func TestCauseFromCheckpointsIsFromScratch(t *testing.T) {
	for _, c := range []struct {
		world string
		nth   int
	}{
		{"../../examples/kvlog/seedfall.json", 1},
		{"../../examples/kvlog/seedfall.json", 3},
		{"../../examples/bank/seedfall.json", 1},
	} {
		p := prepare(t, c.world)
		seed := failing(t, p, c.nth)
		for _, all := range []bool{true, false} {
			opt := Options{Moments: 6, Branches: 3, Refine: 3, Parallel: 2, Exhaustive: all}
			scratch := find(t, p, seed, opt)
			opt.Checkpoints = true
			forked := find(t, p, seed, opt)
			if forked.Checkpoints == 0 {
				t.Errorf("%s seed %d: no fork started from a checkpoint", c.world, seed)
			}
			sameAnswer(t, c.world, forked, scratch)
			if !reflect.DeepEqual(forked.Moments, scratch.Moments) {
				t.Errorf("%s seed %d, exhaustive %v: the moments' forks ended otherwise:\nfrom checkpoints %+v\nfrom t=0         %+v", c.world, seed, all, forked.Moments, scratch.Moments)
			}
		}
	}
}
