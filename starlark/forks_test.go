package starlark

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"
)

// forkScript branches runs of the lossy world many times, late and early,
// in chains, by branch() and by explore's ctx.run_many, and prints what a
// user sees of every branch.
const forkScript = `
w = load_config(WORLD)
out = []
def show(b):
    out.append("%s %s %s %s %d %s" % (b.seed, b.ok, b.class_, b.digest, b.steps, b.sim_time))
for seed in [1, 2]:
    r = run(w, seed = seed)
    for k in range(1, 5):
        for at in [r.sim_time * 6 / 10, r.sim_time * 8 / 10, r.sim_time * 95 / 100, r.sim_time / 10]:
            b = branch(r, at = at, key = k)
            show(b)
            show(replay(b))
    c = branch(r, at = r.sim_time * 7 / 10, key = 9)
    for k in range(1, 4):
        show(branch(c, stream = "net", at = c.sim_time * 9 / 10, key = k))
    for x in [50, 55, 90, 30, 95, 90, 120, 91, 5, 60]:
        out.append(str(debug(r, r.sim_time * x / 100)))
    for x in [80, 85, 40]:
        out.append(str(debug(c, c.sim_time * x / 100)))
def strategy(ctx):
    r = ctx.run(3)
    for b in ctx.run_many([{"schedule": ctx.branch_schedule(r, at = r.sim_time * 85 / 100, key = k), "world": r.world} for k in range(1, 7)]):
        show(b)
explore(w, strategy = strategy, seeds = [3], budget = 20, parallel = 3)
print("\n".join(out))
`

// Branches and looks (debug) forked from a recording of the run they
// branch are those run from t=0: every result a user sees, by branch(),
// replay(), explore's run_many and debug(), the same with the recordings
// as without.
func TestLateBranchesFork(t *testing.T) {
	world, err := filepath.Abs("testdata/lossy/seedfall.json")
	if err != nil {
		t.Fatal(err)
	}
	src := writeScript(t, "forks.star", strings.Replace(forkScript, "WORLD", `"`+world+`"`, 1))
	var outs [3]string
	var forked [3]int
	for i, noForks := range []bool{true, false, false} {
		var b bytes.Buffer
		env := NewEnv(Options{Engine: testEngine(t), Stdout: &b, Parallel: 2, NoForks: noForks})
		env.forks.MinSaved = -1 // fork whatever it saves: the world's runs take milliseconds
		if _, err := env.ExecFile(src); err != nil {
			t.Fatal(ScriptError(err))
		}
		outs[i], forked[i] = b.String(), env.forks.Forked()
	}
	if forked[0] != 0 || forked[1] == 0 {
		t.Fatalf("forked %d runs with NoForks and %d without; want none and some", forked[0], forked[1])
	}
	if outs[1] != outs[0] {
		t.Errorf("the branches differ when they fork:\n%s\n--- from t=0:\n%s", outs[1], outs[0])
	}
	if outs[2] != outs[1] || forked[2] != forked[1] {
		t.Errorf("twice, two outcomes (%d and %d forks)", forked[1], forked[2])
	}
	looks := strings.Count(outs[0], "debug seed ")
	branches := len(regexp.MustCompile(`(?m)^\d+ (True|False) `).FindAllString(outs[0], -1))
	t.Logf("%d of %d runs forked (%d branches, %d looks)", forked[1], branches+looks, branches, looks)
}

// BenchmarkDebug looks at one kvlog run 16 times with debug(), with and
// without forks: stepping through it (at k/16 of it, k = 1..16), and
// around a moment (at 70% to 85% of it, in a scrambled order, as when
// looking around a crash); the op is the 16 looks.
//
//	go test ./starlark -run '^$' -bench BenchmarkDebug -benchtime 5x -count 2
func BenchmarkDebug(b *testing.B) {
	for _, looks := range []struct{ name, xs string }{
		{"stepping", "[k * 100 // 16 for k in range(1, 17)]"},
		{"around", "[70 + (k * 7) % 16 for k in range(16)]"},
	} {
		benchSessions(b, looks.name, `
    for x in `+looks.xs+`:
        debug(r, r.sim_time * x / 100)
`)
	}
}

// BenchmarkBranches branches one kvlog run 20 times, at 51%, 76% or 15/16
// of it, with and without forks; the op is the 20 branches.
//
//	go test ./starlark -run '^$' -bench BenchmarkBranches -benchtime 5x -count 2
func BenchmarkBranches(b *testing.B) {
	for _, at := range []string{"51 / 100", "76 / 100", "15 / 16"} {
		benchSessions(b, "at "+strings.ReplaceAll(at, " ", ""), `
    for k in range(1, 21):
        branch(r, at = r.sim_time * `+at+`, key = k)
`)
	}
}

// benchSessions runs body, the indented body of a function of r, a run of
// kvlog's fixed world, from t=0 and with forks. Each op is a session of
// its own: the recording is part of what it costs.
func benchSessions(b *testing.B, name, body string) {
	world, err := filepath.Abs("../examples/kvlog/seedfall.fixed.json")
	if err != nil {
		b.Fatal(err)
	}
	src := writeScript(b, "bench.star", `
w = load_config("`+world+`")
r = run(w, seed = 1)
def op():`+body)
	for _, noForks := range []bool{true, false} {
		mode := ", forks"
		if noForks {
			mode = ", t=0"
		}
		b.Run(name+mode, func(b *testing.B) {
			forked := 0
			for range b.N {
				b.StopTimer()
				env := NewEnv(Options{Engine: testEngine(b), Stdout: &bytes.Buffer{}, NoForks: noForks})
				g, err := env.ExecFile(src)
				if err != nil {
					b.Fatal(ScriptError(err))
				}
				th := env.NewThread("bench")
				b.StartTimer()
				if _, err := sl.Call(th, g["op"], nil, nil); err != nil {
					b.Fatal(err)
				}
				forked += env.forks.Forked()
			}
			b.ReportMetric(float64(forked)/float64(b.N), "forks/op")
		})
	}
}
