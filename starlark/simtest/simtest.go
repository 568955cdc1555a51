// Package simtest runs a seedfall world inside `go test`: each seed is a
// subtest, so a failing seed fails the test with its verdict and the
// commands that reproduce it, and `go test -run 'TestKV/seed=17'` runs
// that seed alone.
//
//	func TestKV(t *testing.T) {
//		simtest.Run(t, "seedfall.json")
//	}
//
// Run loads the world file (JSON, TOML or a .star script, relative to the
// test's directory), builds its programs through seedfall's cache (the one
// the seedfall command uses: $SEEDFALL_CACHE, else the user cache
// directory), and runs seeds 1-100, or the first 10 of them under
// `go test -short`. A seed runs exactly as `seedfall run` runs it, to the
// same digest, and a failing seed's schedule is saved next to the world
// file as `seedfall run` saves it, so the printed `seedfall replay`
// command replays it.
//
// simtest is a skin over the engine, as the command line, the MCP server
// and the REPL are: it lives beside package starlark, with which it loads
// .star worlds, because the engine knows nothing of Starlark and
// seedfall's top-level directories are fixed.
package simtest

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/sweep"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark"
)

// DefaultSeeds are the seeds Run runs without the Seeds option.
const DefaultSeeds = "1-100"

// DefaultShort is how many seeds of the list Run runs under
// `go test -short`, without the Short option: the first ones.
const DefaultShort = 10

// failureLines is how many lines of a failing seed's output the failure
// shows, as many as `seedfall run` prints.
const failureLines = 8

// An Option changes what Run runs.
type Option func(*options) error

type options struct {
	seeds    string
	short    int
	profile  string
	sets     []string
	parallel int
}

// Seeds sets the seeds to run, written as `seedfall run -seeds` takes
// them: "1-500", "7" or "2-3,9". The default is DefaultSeeds.
func Seeds(spec string) Option {
	return func(o *options) error {
		if _, err := engine.ParseSeeds(spec); err != nil {
			return fmt.Errorf("simtest.Seeds(%q): %v", spec, err)
		}
		o.seeds = spec
		return nil
	}
}

// Short sets how many seeds, the first ones of the list, run under
// `go test -short`. The default is DefaultShort; with 0 the test skips
// there.
func Short(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("simtest.Short(%d): want 0 or more seeds", n)
		}
		o.short = n
		return nil
	}
}

// Profile merges an entry of the world file's "profiles" over the world,
// as `seedfall run -profile` does.
func Profile(name string) Option {
	return func(o *options) error { o.profile = name; return nil }
}

// Set overrides fields of the world, each written path=value as
// `seedfall run -set` takes it: "faults.crash_per_sec=0.5".
func Set(overrides ...string) Option {
	return func(o *options) error { o.sets = append(o.sets, overrides...); return nil }
}

// Parallel sets how many seeds run at once, each a world on one core.
// The default is GOMAXPROCS. The subtests still report one after another,
// in seed order: the seeds run ahead of them.
func Parallel(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("simtest.Parallel(%d): want 1 or more seeds at once", n)
		}
		o.parallel = n
		return nil
	}
}

// Run runs the seeds of the world file as subtests of t named "seed=N".
// A seed that fails fails its subtest with the verdict's class and
// reason, the last lines of the output, a `seedfall replay` command and a
// `go test -run` command that reproduce it (both to run from the root of
// the test's module). Under `go test -v` each seed logs its digest, a
// hash of its whole trace, the same on every run. A world that cannot be
// loaded or built fails t at once.
func Run(t *testing.T, worldFile string, opts ...Option) {
	t.Helper()
	o := options{seeds: DefaultSeeds, short: DefaultShort, parallel: runtime.GOMAXPROCS(0)}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	seeds, err := engine.ParseSeeds(o.seeds)
	if err != nil {
		t.Fatal(err) // checked by Seeds; the default parses
	}
	if testing.Short() {
		if o.short == 0 {
			t.Skip("simtest: no seeds under -short (simtest.Short(0))")
		}
		seeds = seeds.Slice(0, min(o.short, seeds.Len()))
	}
	w, err := load(t, worldFile, world.Options{Profile: o.profile, Set: o.sets})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	ctx := t.Context()
	e, err := engine.New(ctx, engine.Options{})
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	defer e.Close(ctx)
	p, err := e.Prepare(ctx, w)
	if err != nil {
		t.Fatalf("simtest: %v", err)
	}
	c := commands{world: w, file: worldFile}
	c.locate()
	// The seeds go test will run are started ahead, parallel at a time,
	// and each subtest waits for its own: the subtests run one after
	// another, in seed order, so go test's output is the same on every
	// run, and all are done when Run returns.
	sel := selector(t)
	var next func() (sweep.Done[uint64, *engine.Result], bool)
	stop := func() {}
	if o.parallel > 1 {
		picked := func(yield func(uint64) bool) {
			for seed := range seeds.All() {
				if sel(seedName(seed)) && !yield(seed) {
					return
				}
			}
		}
		run := func(ctx context.Context, seed uint64) (*engine.Result, error) {
			return p.Run(ctx, engine.RunOptions{Seed: seed})
		}
		next, stop = iter.Pull(sweep.Ordered(ctx, picked, o.parallel, run))
		defer func() { stop() }()
	}
	var passed int
	var failed results.Tally
	// Not a range over seeds.All(): t.Run must be called from Run itself,
	// a helper, for failures to name the line of the test that called it.
	for i := range seeds.Len() {
		seed := seeds.At(i)
		name := seedName(seed)
		var ahead *sweep.Done[uint64, *engine.Result]
		if next != nil && sel(name) {
			if d, ok := next(); ok {
				ahead = &d
			}
		}
		called := false
		t.Run(name, func(t *testing.T) {
			t.Helper()
			called = true
			var res *engine.Result
			var err error
			if ahead != nil {
				res, err = ahead.Res, ahead.Err
			} else {
				res, err = p.Run(t.Context(), engine.RunOptions{Seed: seed})
			}
			if err != nil {
				t.Fatalf("seed %d did not run: %v", seed, err)
			}
			if res.Passed {
				passed++
				t.Logf("seed %d passed at t=%s (%s; %d scheduler steps), digest %s",
					seed, time.Duration(res.SimNs), res.Reason, res.Steps, res.Digest)
				return
			}
			failed.Add(seed)
			t.Error(c.failure(t, res))
		})
		if ahead != nil && !called {
			// go test did not run a seed selector said it would (or
			// -failfast stops the test): run the rest only when asked.
			stop()
			next = nil
		}
	}
	if n := passed + failed.N(); n > 1 && failed.N() > 0 {
		t.Logf("%d seeds: %d passed, %d failed%s", n, passed, failed.N(), &failed)
	}
}

func seedName(seed uint64) string { return fmt.Sprintf("seed=%d", seed) }

// load reads the world file with its profile and overrides, as the
// command line does: a .star world is the `world` global of the script,
// whose printing goes to the test's log.
func load(t *testing.T, file string, o world.Options) (*world.World, error) {
	if strings.HasSuffix(file, ".star") {
		var out bytes.Buffer
		w, err := starlark.LoadWorldWith(file, starlark.Options{Stdout: &out}, o)
		if out.Len() > 0 {
			t.Logf("%s printed:\n%s", file, strings.TrimSuffix(out.String(), "\n"))
		}
		return w, err
	}
	return world.LoadWith(file, o)
}

// commands writes the commands that reproduce a seed, to run from the
// root of the test's module: the directory a user runs `go test ./...`
// from.
type commands struct {
	world *world.World
	file  string // the world file as Run was given it
	root  string // the module root, or "" if none was found
	cfg   string // the world file from the module root
	pkg   string // the test's package from the module root: ./starlark/simtest
}

// fromRoot writes path relative to the module root (with ../ when it is
// outside it), else absolute.
func (c *commands) fromRoot(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if c.root != "" {
		if rel, err := filepath.Rel(c.root, path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return path
}

// locate finds the module root above the test's directory (its working
// directory under go test). Without one, the commands name the world
// file by its absolute path and the package as ".".
func (c *commands) locate() {
	c.cfg, c.pkg = c.file, "."
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			c.root = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	c.cfg = c.fromRoot(c.file)
	if c.root != "" && c.root != wd {
		c.pkg = "./" + c.fromRoot(wd)
	}
}

// replay is the seedfall replay command of a seed whose schedule is at
// schedule ("" when it could not be saved: replay then draws the seed's
// faults again, which are the same).
func (c *commands) replay(seed uint64, schedule string) string {
	cmd := "seedfall replay -c " + engine.ShellQuote(c.cfg)
	if c.world.Profile != "" {
		cmd += " -profile " + engine.ShellQuote(c.world.Profile)
	}
	for _, s := range c.world.Sets {
		cmd += " -set " + engine.ShellQuote(s)
	}
	cmd += fmt.Sprintf(" -seed %d", seed)
	if schedule != "" && schedule != engine.SchedulePath(c.world, seed) {
		// Kept beside a shrunk or explored schedule: name it.
		cmd += " -faults " + engine.ShellQuote(c.fromRoot(schedule))
	}
	return cmd
}

// rerun is the go test command that runs this subtest alone: -run with
// each level of its name matched whole.
func (c *commands) rerun(t *testing.T) string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return fmt.Sprintf("go test %s -run %s -count=1", c.pkg, engine.ShellQuote(strings.Join(parts, "/")))
}

// failure saves a failing seed's schedule and writes its failure: the
// verdict, the last lines, and the commands that reproduce it.
func (c *commands) failure(t *testing.T, res *engine.Result) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d failed at t=%s (%d scheduler steps), digest %s\n", res.Seed, time.Duration(res.SimNs), res.Steps, res.Digest)
	fmt.Fprintf(&b, "%s: %s\n", res.Class, res.Reason)
	for _, l := range res.FailureLines(failureLines) {
		fmt.Fprintf(&b, "  %s\n", l.String())
	}
	sv, err := engine.SaveFailure(c.world, res)
	if err != nil {
		t.Logf("could not save the schedule of seed %d: %v", res.Seed, err)
	}
	if sv.Kept != "" {
		t.Logf("kept %s (%s); wrote %s instead", c.fromRoot(sv.Kept), sv.Why, c.fromRoot(sv.Path))
	}
	fmt.Fprintf(&b, "replay: %s\n", c.replay(res.Seed, sv.Path))
	if res.History != nil && len(res.History.HTML) > 0 && err == nil {
		fmt.Fprintf(&b, "history: %s (open it in a browser)\n", c.fromRoot(engine.HistoryPath(c.world, res.Seed)))
	}
	fmt.Fprintf(&b, "rerun:  %s\n", c.rerun(t))
	b.WriteString("(both from the module root)")
	return b.String()
}
