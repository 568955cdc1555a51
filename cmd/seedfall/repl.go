package main

import (
	"fmt"
	"io"
	"os"

	"github.com/seedfall/seedfall/repl"
	"github.com/seedfall/seedfall/starlark"
)

func init() {
	register(command{"repl", "[-parallel K] [world.json|world.toml|file.star]", replCmd})
}

// replCmd is the interactive workbench. With stdin not a terminal it reads
// plain lines without prompts, so that sessions can be fed and checked; an
// input that fails then makes the exit status 2.
func replCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("repl", stderr)
	parallel := fs.Int("parallel", defaultParallel(), "how many runs shrink and explore make at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("want at most one file (a world or a script), got %d", fs.NArg())
	}
	terminal := isTerminal(os.Stdin) && isTerminal(stdout)
	// On a terminal a statement that takes long shows how far it is on
	// stderr: the Env reports, the REPL draws and erases the line.
	var status *repl.Status
	o := starlark.Options{Stdout: stdout, Parallel: *parallel}
	if terminal && isTerminal(stderr) {
		status = repl.NewStatus(stderr)
		o.Stdout, o.Progress = status.Above(stdout), status.Set
	}
	env := starlark.NewEnv(o)
	r := repl.New(repl.Options{
		Status:      status,
		Env:         env,
		In:          os.Stdin,
		Out:         stdout,
		Err:         stderr,
		Terminal:    terminal,
		HistoryFile: repl.DefaultHistoryFile(),
	})
	if terminal {
		fmt.Fprintln(stdout, "seedfall repl: :help lists the commands and builtins; Tab completes; Ctrl-D leaves.")
	}
	if fs.NArg() == 1 {
		if err := r.LoadFile(fs.Arg(0)); err != nil {
			return err
		}
	}
	if err := r.Run(); err != nil {
		return err
	}
	if !terminal && r.Failed() > 0 {
		return fmt.Errorf("%s failed (the errors are above)", plural(r.Failed(), "input"))
	}
	return nil
}
