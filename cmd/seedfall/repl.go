package main

import (
	"fmt"
	"io"
	"os"

	"github.com/seedfall/seedfall/repl"
	"github.com/seedfall/seedfall/starlark"
)

func init() {
	register(command{"repl", "[-parallel K] [-c world.json|world.toml|file.star | FILE]", replCmd})
}

// replCmd is the interactive workbench. With stdin not a terminal it reads
// plain lines without prompts, so that sessions can be fed and checked; an
// input that fails then makes the exit status 2.
func replCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("repl", stderr)
	parallel := fs.Int("parallel", defaultParallel(), "how many runs shrink and explore make at once")
	// -c as every other command takes it; here it is optional, and a
	// script may stand in its place.
	cfg := fs.String("c", "", "the world `file` (or a .star script) to open, also given as the argument")
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if err := checkParallel(*parallel); err != nil {
		return err
	}
	file := *cfg
	switch {
	case fs.NArg() > 1 || fs.NArg() == 1 && file != "":
		return fmt.Errorf("want at most one file (a world or a script), got %d", fs.NArg()+min(1, len(file)))
	case fs.NArg() == 1:
		file = fs.Arg(0)
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
	if file != "" {
		if err := r.LoadFile(file); err != nil {
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
