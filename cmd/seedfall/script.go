package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/starlark"
)

func init() {
	register(command{"script", "[-parallel K] [-max-steps N] [-timeout D] experiment.star [args...]", scriptCmd})
}

// scriptCmd runs a Starlark script against the workbench builtins. Its
// print() goes to stdout. Exit status: 0 when the script ends, 1 when it
// calls fail(...) (it found what it checks for wrong), 2 for any other
// error.
func scriptCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("script", stderr)
	parallel := fs.Int("parallel", defaultParallel(), "default parallelism of shrink and explore in the script")
	maxSteps := fs.Int64("max-steps", 0, fmt.Sprintf("Starlark steps the script (and each file it loads) may take; run() and the like do not count (0: $%s, else %d; -1: no limit)", starlark.StepsEnv, starlark.DefaultMaxSteps))
	timeout := fs.Duration("timeout", 0, "stop the script, and the runs in flight, after this much wall time, such as 10m (0: none)")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("name the script to run: seedfall script experiment.star [args...]")
	}
	path := fs.Arg(0)
	ctx := context.Background()
	progress := func(string) {}
	if isTerminal(stderr) {
		progress = func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s...\r\033[K", msg) }
	}
	e, err := engine.New(ctx, engine.Options{Progress: progress, Note: noteTo(stderr)})
	if err != nil {
		return err
	}
	defer e.Close(ctx)
	env := starlark.NewEnv(starlark.Options{Engine: e, Stdout: stdout, Args: fs.Args()[1:], Parallel: *parallel, MaxSteps: *maxSteps, StepsFlag: "-max-steps"})
	if *timeout > 0 {
		defer env.StopAfter(*timeout, "-timeout")()
	}
	if _, err := env.ExecFile(path); err != nil {
		if starlark.Failed(err) {
			fmt.Fprintln(stderr, env.ScriptError(err))
			return errFailed
		}
		return fmt.Errorf("%s", env.ScriptError(err))
	}
	return nil
}
