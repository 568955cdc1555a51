package starlark

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sl "go.starlark.net/starlark"
)

func writeScript(t testing.TB, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An endless loop ends with the step limit's error, which names the
// file:line where it stopped and how to raise the limit, the same twice.
func TestStepLimitEndlessLoop(t *testing.T) {
	p := writeScript(t, "loop.star", "x = 0\nwhile True:\n    x += 1\n")
	var msgs []string
	for range 2 {
		e := NewEnv(Options{MaxSteps: 10_000, StepsFlag: "-max-steps", Stdout: &bytes.Buffer{}})
		_, err := e.ExecFile(p)
		if err == nil {
			t.Fatal("endless loop ended without error")
		}
		msgs = append(msgs, ScriptError(err))
	}
	// A loop with no statement of its own ends too.
	if _, err := NewEnv(Options{MaxSteps: 1000}).ExecFile(writeScript(t, "pass.star", "while True:\n    pass\n")); err == nil || !strings.Contains(err.Error(), "stopped after 1000 Starlark steps") {
		t.Errorf("while True: pass: %v", err)
	}
	msg := msgs[0]
	for _, want := range []string{"loop.star:3:", "stopped after 10000 Starlark steps", "-max-steps N", StepsEnv + "=N"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, cancelPrefix) {
		t.Errorf("error keeps go.starlark.net's prefix:\n%s", msg)
	}
	if msgs[0] != msgs[1] {
		t.Errorf("two runs differ:\n%s\n---\n%s", msgs[0], msgs[1])
	}
}

// The environment variable sets the limit, for .star worlds too, which
// no flag reaches; a bad value is an error that says what to write.
func TestStepLimitEnvWorld(t *testing.T) {
	t.Setenv(StepsEnv, "5000")
	p := writeScript(t, "w.star", "def spin():\n    n = 0\n    while True:\n        n += 1\nspin()\nworld = world(nodes=[])\n")
	_, err := LoadWorld(p, Options{Stdout: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "w.star:4:") || !strings.Contains(err.Error(), "stopped after 5000 Starlark steps") {
		t.Fatalf("want the step limit at w.star:4, got %v", err)
	}
	if strings.Contains(err.Error(), "-max-steps") {
		t.Errorf("names a flag the world has not: %v", err)
	}
	t.Setenv(StepsEnv, "lots")
	if _, err := LoadWorld(p, Options{Stdout: &bytes.Buffer{}}); err == nil || !strings.Contains(err.Error(), StepsEnv+`="lots" is not a step count`) {
		t.Fatalf("bad %s: got %v", StepsEnv, err)
	}
}

// A script that stays under the limit runs as before; 0 in the
// environment and a negative MaxSteps mean no limit.
func TestStepLimitNormalScript(t *testing.T) {
	p := writeScript(t, "ok.star", "n = 0\nfor i in range(20000):\n    n += i\nprint(n)\n")
	for _, tc := range []struct {
		env  string
		max  int64
		fail bool
	}{{"", 0, false}, {"0", 0, false}, {"1000", 0, true}, {"1000", -1, false}, {"", 1000, true}} {
		t.Setenv(StepsEnv, tc.env)
		var out bytes.Buffer
		_, err := NewEnv(Options{MaxSteps: tc.max, Stdout: &out}).ExecFile(p)
		if tc.fail != (err != nil) {
			t.Errorf("env %q max %d: error %v, want failure %v", tc.env, tc.max, err, tc.fail)
		}
		if !tc.fail && out.String() != "199990000\n" {
			t.Errorf("env %q max %d: printed %q", tc.env, tc.max, out.String())
		}
	}
}

// Deep recursion gives a short traceback: the first and last frames and
// a count of those left out, the same every time.
func TestDeepRecursionTraceback(t *testing.T) {
	p := writeScript(t, "rec.star", "def f(n):\n    return f(n + 1)\nf(0)\n")
	var msgs []string
	for range 2 {
		_, err := NewEnv(Options{Stdout: &bytes.Buffer{}}).ExecFile(p)
		if err == nil {
			t.Fatal("endless recursion ended without error")
		}
		msgs = append(msgs, ScriptError(err))
	}
	msg := msgs[0]
	if n := strings.Count(msg, "\n") + 1; n > 2*TracebackFrames+3 {
		t.Errorf("traceback has %d lines:\n%s", n, msg)
	}
	for _, want := range []string{"rec.star:3:2: in <toplevel>", "frames omitted", "rec.star:2:13: in f", "Starlark stack overflow"} {
		if !strings.Contains(msg, want) {
			t.Errorf("traceback lacks %q:\n%s", want, msg)
		}
	}
	if msgs[0] != msgs[1] {
		t.Errorf("two runs differ")
	}
	// A short stack is printed whole, as go.starlark.net prints it.
	var ee *sl.EvalError
	_, err := NewEnv(Options{Stdout: &bytes.Buffer{}}).ExecFile(writeScript(t, "short.star", "def f():\n    fail('x')\nf()\n"))
	if !errors.As(err, &ee) || Backtrace(ee) != ee.Backtrace() {
		t.Errorf("short traceback changed:\n%s\nwant\n%s", Backtrace(ee), ee.Backtrace())
	}
}

// StopAfter ends Starlark code that loops, with the timeout's error.
func TestStopAfter(t *testing.T) {
	p := writeScript(t, "spin.star", "def f():\n    while True:\n        pass\nf()\n")
	e := NewEnv(Options{MaxSteps: -1, Stdout: &bytes.Buffer{}})
	defer e.StopAfter(50*time.Millisecond, "-timeout")()
	_, err := e.ExecFile(p)
	if err == nil {
		t.Fatal("no error")
	}
	msg := e.ScriptError(err)
	if !strings.Contains(msg, "spin.star:") || !strings.Contains(msg, "stopped by the timeout of 50ms; raise it with -timeout") {
		t.Errorf("timeout error: %s", msg)
	}
}

// A strategy that loops without end stops at the limit, its error naming
// the strategy and where it was.
func TestStepLimitStrategy(t *testing.T) {
	p := writeScript(t, "strat.star", "def spin(ctx):\n    n = 0\n    while True:\n        n += 1\nw = world(nodes = [{\"name\": \"a\", \"pkg\": \"./a\"}], workload = {\"name\": \"c\", \"pkg\": \"./c\"})\nexplore(w, strategy = spin, budget = 1)\n")
	_, err := NewEnv(Options{MaxSteps: 5000, Stdout: &bytes.Buffer{}}).ExecFile(p)
	if err == nil || !strings.Contains(err.Error(), "strategy spin failed at ") || !strings.Contains(err.Error(), "strat.star:4:") || !strings.Contains(err.Error(), ": stopped after 5000 Starlark steps") {
		t.Fatalf("got %v", err)
	}
}
