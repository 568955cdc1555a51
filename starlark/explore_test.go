package starlark

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
)

func TestParseBudget(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Budget
		err  string
	}{
		{in: "500", want: Budget{Runs: 500}},
		{in: "500 runs", want: Budget{Runs: 500}},
		{in: "1 run", want: Budget{Runs: 1}},
		{in: "10m", want: Budget{Time: 10 * time.Minute}},
		{in: "1m30s", want: Budget{Time: 90 * time.Second}},
		{in: "0", err: `budget "0": a run count is at least 1`},
		{in: "-5s", err: `budget "-5s" is neither a run count like 500 nor a wall time like "10m"`},
		{in: "soon", err: `budget "soon" is neither a run count`},
	} {
		got, err := ParseBudget(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseBudget(%q) = %v, %v; want error %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseBudget(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	// String reads back.
	for _, b := range []Budget{{Runs: 7}, {Time: 3 * time.Minute}} {
		if got, err := ParseBudget(b.String()); err != nil || got != b {
			t.Errorf("ParseBudget(%q) = %v, %v; want %v", b.String(), got, err, b)
		}
	}
}

// TestStrategyScripts runs every strategy in scripts/strategies through
// Explore, as `seedfall explore -strategy FILE` does, twice: it must end
// within its run budget and find the same failures both times, whatever
// the parallelism.
func TestStrategyScripts(t *testing.T) {
	files, err := filepath.Glob("../scripts/strategies/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no strategies in scripts/strategies: %v", err)
	}
	var out bytes.Buffer
	env := NewEnv(Options{Engine: testEngine(t), Stdout: &out, Parallel: 4})
	th := env.NewThread("test")
	w, err := sl.Call(th, env.Predeclared()["load_config"], sl.Tuple{sl.String("testdata/explore/seedfall.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Two fault types, so that a strategy comparing them has something to compare.
	w, err = sl.Call(th, mustAttr(t, w, "replace"), nil, []sl.Tuple{{sl.String("faults"), dictOf(map[string]sl.Value{"torn_writes": sl.True})}})
	if err != nil {
		t.Fatal(err)
	}
	seeds := engine.SeedRange(40, 59)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			g, err := env.ExecFile(file)
			if err != nil {
				t.Fatal(ScriptError(err))
			}
			fn, ok := g["strategy"].(sl.Callable)
			if !ok {
				t.Fatalf("%s defines no function strategy(ctx), which seedfall explore -strategy FILE calls", file)
			}
			var digests [2][]string
			for i := range digests {
				x, err := env.Explore(th, w.(*World), fn, ExploreOptions{Seeds: seeds, Budget: Budget{Runs: 40}, Parallel: 1 + 3*i})
				if err != nil {
					t.Fatal(ScriptError(err))
				}
				if x.Runs > 40 || x.Runs == 0 {
					t.Errorf("%d runs with a budget of 40", x.Runs)
				}
				if filepath.Base(file) == "fault_types.star" {
					if got := x.Value.String(); got != `{"crash_per_sec": 2, "torn_writes": 0}` {
						t.Errorf("fault_types found %s; want the two crashes of seeds 40-59 and nothing from torn writes alone", got)
					}
				}
				for _, r := range x.Failures {
					digests[i] = append(digests[i], r.Result.Digest)
				}
			}
			if !slices.Equal(digests[0], digests[1]) {
				t.Errorf("two explorations with the same run budget found different failures:\n%v\n%v", digests[0], digests[1])
			}
		})
	}
	if testing.Verbose() {
		t.Logf("output:\n%s", out.String())
	}
}

func mustAttr(t *testing.T, v sl.Value, name string) sl.Value {
	a, err := v.(sl.HasAttrs).Attr(name)
	if err != nil || a == nil {
		t.Fatalf("%s has no .%s: %v", v.Type(), name, err)
	}
	return a
}

func dictOf(m map[string]sl.Value) *sl.Dict {
	d := sl.NewDict(len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.SetKey(sl.String(k), m[k])
	}
	return d
}

// TestExploreDoc runs the ```star blocks of docs/explore.md in order, as
// one script whose lines are the document's, from a copy of docs/ next to
// copies of the examples and strategies it uses, so what it writes stays
// out of the tree.
func TestExploreDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples")
	}
	out, _ := runDoc(t, "explore.md", 4, "examples/kvlog", "examples/kvclient", "scripts/strategies")
	for _, want := range []string{
		"<exploration random_seeds: 40 runs, 7 failures (seeds 1, 12, 20, 23, 28, 30, 31)>",
		"12 1 client#1 exited with status 1", "45 budget", "True block", "0", "True budget", "[True]", "1 1 strategy", "30 1 False", "32 0", "budget True",
		"crash_per_sec alone:    3 of 20 seeds fail (first: seed 1)", `{"crash_per_sec": 3, "torn_writes": 0}`,
	} {
		if !strings.Contains(out, "\n"+want+"\n") && !strings.HasPrefix(out, want+"\n") {
			t.Errorf("the examples' output has no line %q; the comments in the document say it does:\n%s", want, out)
		}
	}
}

// An exploration's coverage is the union of its runs', the same at
// -parallel 1 and 3, and x.coverage says how much it is; without coverage
// it is None.
func TestExplorationCoverage(t *testing.T) {
	env := NewEnv(Options{Engine: testEngine(t), Parallel: 3})
	th := env.NewThread("test")
	w, err := sl.Call(th, env.Predeclared()["load_config"], sl.Tuple{sl.String("testdata/explore/seedfall.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := env.StdStrategy(th, sl.String("random_seeds"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := env.Explore(th, w.(*World), fn, ExploreOptions{Seeds: engine.SeedRange(1, 100), Budget: Budget{Runs: 2}, Parallel: 1})
	if err != nil {
		t.Fatal(ScriptError(err))
	}
	if v, _ := x.Attr("coverage"); x.Coverage != nil || v != sl.None {
		t.Errorf("coverage off: x.coverage is %v", v)
	}
	cw, err := sl.Call(th, mustAttr(t, w, "replace"), nil, []sl.Tuple{{sl.String("coverage"), sl.True}})
	if err != nil {
		t.Fatal(err)
	}
	var profiles [2][]byte
	for i := range profiles {
		x, err := env.Explore(th, cw.(*World), fn, ExploreOptions{Seeds: engine.SeedRange(1, 100), Budget: Budget{Runs: 6}, Parallel: 1 + 2*i})
		if err != nil {
			t.Fatal(ScriptError(err))
		}
		if x.Coverage == nil {
			t.Fatal("coverage on: the exploration has none")
		}
		profiles[i] = x.Coverage.Profile().Bytes()
		// The union holds every block each run reached.
		var union *cover.Run
		for _, r := range x.Failures {
			union = cover.MergeRun(union, r.Result.Coverage)
		}
		if union != nil && x.Coverage.Hit.Missing(union.Hit) != 0 {
			t.Error("a failing run reached blocks the exploration's coverage lacks")
		}
		v, _ := x.Attr("coverage")
		hit, all := x.Coverage.Stmts()
		if got, want := v.String(), fmt.Sprintf(`{"blocks": %d, "stmts": %d, "all_stmts": %d}`, x.Coverage.Hit.Len(), hit, all); got != want || hit == 0 {
			t.Errorf("x.coverage = %s, want %s", got, want)
		}
	}
	if !bytes.Equal(profiles[0], profiles[1]) {
		t.Errorf("the coverage of an exploration at -parallel 1 and 3 differs:\n%s\n%s", profiles[0], profiles[1])
	}
}
