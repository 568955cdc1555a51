package simtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark/simtest"
)

// The tests that must fail run in a go test process of their own: the
// test binary itself, started with -test.run TestWorld and the world to
// run in the environment, as a user's `go test` would run their test.

const (
	envWorld = "SEEDFALL_SIMTEST_WORLD" // the world file TestWorld runs
	envSeeds = "SEEDFALL_SIMTEST_SEEDS" // its seeds, as simtest.Seeds takes them
	envShort = "SEEDFALL_SIMTEST_SHORT" // how many run under -short
)

// TestWorld is the test a user writes. It runs only in the processes the
// tests below start.
func TestWorld(t *testing.T) {
	file := os.Getenv(envWorld)
	if file == "" {
		t.Skip("run by the other tests of simtest, in a go test process of its own")
	}
	opts := []simtest.Option{simtest.Seeds(os.Getenv(envSeeds))}
	if n := os.Getenv(envShort); n != "" {
		short, err := strconv.Atoi(n)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, simtest.Short(short))
	}
	simtest.Run(t, file, opts...)
}

// goTest runs TestWorld in a process of its own, in dir, with the world
// file and seeds, and extra go test flags. It returns the output and
// whether the process passed.
func goTest(t *testing.T, dir, file, seeds string, env []string, flags ...string) (string, bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-test.run", "^TestWorld$", "-test.v", "-test.count=1"}, flags...)
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), envWorld+"="+file, envSeeds+"="+seeds)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return string(out), err == nil
}

// copyKVLog copies the kvlog example (its module's go.mod, the world
// files, the server and the client) into a fresh directory: a failing
// seed's schedule is saved next to the world file. It returns the copy's
// root, the module root.
func copyKVLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "kvlog/seedfall.json", "kvlog/seedfall.fixed.json",
		"kvlog/server/main.go", "kvlog/server/store.go", "kvclient/main.go"} {
		b, err := os.ReadFile(filepath.Join("../../examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// ran returns the subtests of TestWorld that ran, by their === RUN lines.
func ran(out string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^=== RUN   TestWorld/(\S+)$`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}

// digests returns each seed's digest as the output logs it.
func digests(out string) map[string]string {
	d := map[string]string{}
	for _, m := range regexp.MustCompile(`seed (\d+) (?:passed|failed) at .*digest ([0-9a-f]{64})`).FindAllStringSubmatch(out, -1) {
		d[m[1]] = m[2]
	}
	return d
}

// TestFailingWorld runs kvlog's buggy world (it acknowledges writes before
// they are durable) in a user's go test: every seed fails as a subtest of
// its own, with the verdict, the client's last lines and the commands
// that reproduce it; the -run line it prints runs that seed alone, to the
// same digest; the schedule it saves replays to that digest too.
func TestFailingWorld(t *testing.T) {
	root := copyKVLog(t)
	out, ok := goTest(t, filepath.Join(root, "kvlog"), "seedfall.json", "1-3", nil)
	if ok {
		t.Fatalf("kvlog's buggy world passed under go test:\n%s", out)
	}
	if got, want := ran(out), []string{"seed=1", "seed=2", "seed=3"}; !slices.Equal(got, want) {
		t.Errorf("subtests run: %q, want %q\n%s", got, want, out)
	}
	// The seeds run ahead, in parallel; go test reports them in seed order.
	if got, want := regexp.MustCompile(`--- FAIL: TestWorld/(seed=\d+) `).FindAllStringSubmatch(out, -1), []string{"seed=1", "seed=2", "seed=3"}; len(got) != 3 ||
		got[0][1] != want[0] || got[1][1] != want[1] || got[2][1] != want[2] {
		t.Errorf("failed subtests reported as %q, want %q in that order\n%s", got, want, out)
	}
	for _, want := range []string{
		"--- FAIL: TestWorld ",
		"workload: client#1 exited with status 1",
		"client#1 ! client: FAIL: ",
		"replay: seedfall replay -c kvlog/seedfall.json -seed 2\n",
		"rerun:  go test ./kvlog -run '^TestWorld$/^seed=2$' -count=1\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	// The failure is reported at the line of the test that called Run.
	if !regexp.MustCompile(`(?m)^\s+simtest_test\.go:\d+: seed 2 failed at `).MatchString(out) {
		t.Errorf("seed 2's failure does not name the line of TestWorld:\n%s", out)
	}
	first := digests(out)
	if len(first) != 3 {
		t.Fatalf("digests logged: %v, want one for each of 3 seeds:\n%s", first, out)
	}

	// The printed -run pattern runs seed 2 alone, to the same digest.
	m := regexp.MustCompile(`rerun:  go test \./kvlog -run '([^']+)' -count=1`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no rerun line in:\n%s", out)
	}
	var pattern string
	for _, l := range regexp.MustCompile(`(?m)^.*rerun:  go test \./kvlog -run '([^']+)'`).FindAllStringSubmatch(out, -1) {
		if strings.Contains(l[1], "seed=2") {
			pattern = l[1]
		}
	}
	again, ok := goTest(t, filepath.Join(root, "kvlog"), "seedfall.json", "1-3", nil, "-test.run", pattern)
	if ok {
		t.Fatalf("-run %s passed:\n%s", pattern, again)
	}
	if got := ran(again); !slices.Equal(got, []string{"seed=2"}) {
		t.Errorf("-run %s ran %q, want seed=2 alone:\n%s", pattern, got, again)
	}
	if d := digests(again); d["2"] != first["2"] || len(d) != 1 {
		t.Errorf("seed 2's digest: %v on the second run, %s on the first", d, first["2"])
	}

	// The schedule replay applies is the one the run drew.
	ctx := context.Background()
	w, err := world.Load(filepath.Join(root, "kvlog", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	check := faults.CheckConfig{Duration: w.Duration}
	for _, prog := range w.Programs() {
		check.Programs = append(check.Programs, prog.Name)
	}
	sch, err := faults.Load(engine.SchedulePath(w, 2), check)
	if err != nil {
		t.Fatalf("the schedule of seed 2 was not saved where seedfall replay looks: %v", err)
	}
	e, err := engine.New(ctx, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	p, err := e.Prepare(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(ctx, engine.RunOptions{Seed: 2, Schedule: sch})
	if err != nil {
		t.Fatal(err)
	}
	if res.Digest != first["2"] {
		t.Errorf("replaying the saved schedule of seed 2 gives digest %s, go test printed %s", res.Digest, first["2"])
	}
}

// TestFailFast stops at the first failing seed under go test -failfast,
// though the seeds after it were started ahead.
func TestFailFast(t *testing.T) {
	root := copyKVLog(t)
	out, ok := goTest(t, filepath.Join(root, "kvlog"), "seedfall.json", "1-6", nil, "-test.failfast")
	if ok {
		t.Fatalf("kvlog's buggy world passed under go test:\n%s", out)
	}
	if got := ran(out); !slices.Equal(got, []string{"seed=1"}) {
		t.Errorf("under -failfast, subtests run: %q, want seed=1 alone\n%s", got, out)
	}
}

// TestShort runs the first seeds of the list under go test -short.
func TestShort(t *testing.T) {
	root := copyKVLog(t)
	out, ok := goTest(t, filepath.Join(root, "kvlog"), "seedfall.fixed.json", "4-9", []string{envShort + "=2"}, "-test.short")
	if !ok {
		t.Fatalf("kvlog's fixed world failed:\n%s", out)
	}
	if got, want := ran(out), []string{"seed=4", "seed=5"}; !slices.Equal(got, want) {
		t.Errorf("under -short, subtests run: %q, want %q\n%s", got, want, out)
	}
}

// TestFixedWorld runs kvlog's fixed world, which must pass, in this
// process: a world file relative to the test's directory.
func TestFixedWorld(t *testing.T) {
	simtest.Run(t, "../../examples/kvlog/seedfall.fixed.json", simtest.Seeds("1-3"))
}

// TestSet overrides the buggy world as seedfall run -set does: without
// crashes, no acknowledged write is lost, so the seeds that fail without
// the override pass.
func TestSet(t *testing.T) {
	simtest.Run(t, "../../examples/kvlog/seedfall.json", simtest.Seeds("1-2"), simtest.Set("faults.crash_per_sec=0"))
}

// TestStarlarkWorld runs a world written in Starlark: kvlog's fixed world
// loaded from its JSON file.
func TestStarlarkWorld(t *testing.T) {
	simtest.Run(t, "testdata/kvlog.star", simtest.Seeds("1"))
}
