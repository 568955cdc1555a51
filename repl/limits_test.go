package repl

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/starlark"
)

// The step limit holds per statement: an endless loop ends with its
// error, and the session goes on, each statement with the whole limit
// again. Deep recursion prints a short traceback.
func TestStepLimitPerStatement(t *testing.T) {
	var out, errs strings.Builder
	env := starlark.NewEnv(starlark.Options{MaxSteps: 20000, Stdout: &out})
	in := strings.Join([]string{
		"while True:",
		"    pass",
		"",
		"n = 0",
		"for i in range(1000):",
		"    n += i",
		"",
		"for i in range(1000):",
		"    n += i",
		"",
		"print(n)",
		"def f(k):",
		"    return f(k + 1)",
		"",
		"f(0)",
	}, "\n")
	r := New(Options{Env: env, In: strings.NewReader(in), Out: &out, Err: &errs})
	r.Run()
	if !strings.Contains(errs.String(), "stopped after 20000 Starlark steps") {
		t.Errorf("no step limit error:\n%s", errs.String())
	}
	if !strings.Contains(out.String(), "999000") {
		t.Errorf("statements after the limit did not run in full:\nout: %s\nerr: %s", out.String(), errs.String())
	}
	if strings.Count(errs.String(), "in f\n") > 2*starlark.TracebackFrames || !strings.Contains(errs.String(), "frames omitted") {
		t.Errorf("long traceback: %d lines", strings.Count(errs.String(), "\n"))
	}
}
