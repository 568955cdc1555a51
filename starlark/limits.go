package starlark

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// DefaultMaxSteps is how many Starlark steps (bytecode instructions) one
// thread may execute: a script, a .star world, a module being loaded, an
// explore strategy, or one REPL statement. A real script spends its time
// in run(), shrink() and explore(), which do not count: 100 million steps
// is some seconds of pure Starlark, far more than any of them needs, and
// an endless loop reaches it in seconds.
const DefaultMaxSteps = 100_000_000

// StepsEnv is the environment variable that sets the step limit where no
// -max-steps flag does: a positive number, or 0 for no limit.
const StepsEnv = "SEEDFALL_STARLARK_STEPS"

// TracebackFrames is how many frames a traceback keeps at each end; the
// ones between are replaced by one line saying how many were left out.
const TracebackFrames = 10

// cancelPrefix is what go.starlark.net puts before a Cancel reason.
const cancelPrefix = "Starlark computation cancelled: "

// stepLimit resolves Options.MaxSteps: positive is the limit, negative
// none, 0 the environment's or the default.
func stepLimit(n int64) (uint64, error) {
	switch {
	case n > 0:
		return uint64(n), nil
	case n < 0:
		return 0, nil
	}
	s, ok := os.LookupEnv(StepsEnv)
	if !ok || strings.TrimSpace(s) == "" {
		return DefaultMaxSteps, nil
	}
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return DefaultMaxSteps, fmt.Errorf("%s=%q is not a step count; write a whole number such as %d, or 0 for no limit", StepsEnv, s, DefaultMaxSteps)
	}
	return v, nil
}

// limitThread sets the step limit of t; its error names the limit and how
// to raise it.
func (e *Env) limitThread(t *sl.Thread) {
	if e.maxSteps == 0 {
		return
	}
	t.SetMaxExecutionSteps(e.maxSteps)
	how := fmt.Sprintf("%s=N in the environment", StepsEnv)
	if e.o.StepsFlag != "" {
		how = e.o.StepsFlag + " N or " + how
	}
	t.OnMaxSteps = func(t *sl.Thread) {
		// The interpreter calls this at every step past the limit. Some
		// steps (a loop's jump back) have no position of their own and
		// show the function's start: stop at the next one that says
		// where the loop is, a few steps on, the same every run.
		if t.Steps-e.maxSteps < 64 && t.CallStackDepth() > 0 {
			fr := t.DebugFrame(0)
			pos := fr.Position()
			if fn, ok := fr.Callable().(*sl.Function); ok && (samePos(pos, fn.Position()) || pos.Line == 1 && pos.Col == 1) {
				return
			}
		}
		t.Cancel(fmt.Sprintf("stopped after %d Starlark steps, the limit (an endless loop?); raise it with %s (0: no limit)", e.maxSteps, how))
	}
}

func samePos(a, b syntax.Position) bool {
	return a.Filename() == b.Filename() && a.Line == b.Line && a.Col == b.Col
}

// ResetSteps starts t's step count again, as the REPL does before each
// statement: the limit is per statement there.
func ResetSteps(t *sl.Thread) { t.Steps = 0 }

// StopAfter stops every thread of the Env and the runs in flight when d
// has passed: Starlark code fails at its next step, a run() at once. The
// error names the timeout and how to raise it (flag, such as "-timeout").
// The returned func cancels the timer.
func (e *Env) StopAfter(d time.Duration, flag string) (cancel func()) {
	tm := time.AfterFunc(d, func() {
		reason := fmt.Sprintf("stopped by the timeout of %s; raise it with %s (0: none)", d, flag)
		e.mu.Lock()
		e.stopped = reason
		threads := slicesClone(e.threads)
		e.mu.Unlock()
		for _, t := range threads {
			t.Cancel(reason)
		}
		e.Cancel()
	})
	return func() { tm.Stop() }
}

// Stopped is the reason StopAfter's timer gave, or "".
func (e *Env) Stopped() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopped
}

func slicesClone(ts []*sl.Thread) []*sl.Thread { return append([]*sl.Thread(nil), ts...) }

// Backtrace is ee.Backtrace() cut to a readable length: the first and the
// last TracebackFrames frames, with a line counting those left out
// between. A cancelled thread's message (a step limit, a timeout) starts
// with the file:line:col where it stopped.
func Backtrace(ee *sl.EvalError) string {
	stack := ee.CallStack
	suffix := ""
	if last := len(stack) - 1; last >= 0 && stack[last].Pos.Filename() == "<builtin>" {
		suffix = " in " + stack[last].Name
		stack = stack[:last]
	}
	var b strings.Builder
	if len(stack) > 0 {
		b.WriteString("Traceback (most recent call last):\n")
	}
	for i, fr := range stack {
		if len(stack) > 2*TracebackFrames+1 && i >= TracebackFrames && i < len(stack)-TracebackFrames {
			if i == TracebackFrames {
				fmt.Fprintf(&b, "  ... %d frames omitted ...\n", len(stack)-2*TracebackFrames)
			}
			continue
		}
		fmt.Fprintf(&b, "  %s: in %s\n", fr.Pos, fr.Name)
	}
	fmt.Fprintf(&b, "Error%s: %s", suffix, message(ee))
	return b.String()
}

// message is ee.Msg, a cancellation's reason with where it stopped
// instead of go.starlark.net's prefix.
func message(ee *sl.EvalError) string {
	reason, ok := strings.CutPrefix(ee.Msg, cancelPrefix)
	if !ok {
		return ee.Msg
	}
	for i := len(ee.CallStack) - 1; i >= 0; i-- {
		if p := ee.CallStack[i].Pos; p.Filename() != "<builtin>" && p.Filename() != "" {
			return fmt.Sprintf("%s: %s", p, reason)
		}
	}
	return reason
}

// ScriptError is the package's ScriptError, except that after StopAfter
// fired the error is the timeout's, wherever the script was (in a run()
// that the timeout interrupted too).
func (e *Env) ScriptError(err error) string {
	var ee *sl.EvalError
	if reason := e.Stopped(); reason != "" && errors.As(err, &ee) && !strings.HasPrefix(ee.Msg, cancelPrefix) {
		cp := *ee
		cp.Msg = cancelPrefix + reason
		cp.CallStack = ee.CallStack
		if last := len(cp.CallStack) - 1; last >= 0 && cp.CallStack[last].Pos.Filename() == "<builtin>" {
			cp.CallStack = cp.CallStack[:last]
		}
		return Backtrace(&cp)
	}
	return ScriptError(err)
}
