package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/session"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark"
)

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("seedfall "+name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{w: stderr})
	fs.Usage = commandUsage(name, fs) // help.go
	return fs
}

// flagOutput is a flag set's output. What the flag package prints while
// it parses (an error, then the whole usage) is held back, and shown only
// when it is the help asked for (-h); a bad flag comes back as one line
// instead (parseArgs).
type flagOutput struct {
	w    io.Writer
	held *bytes.Buffer
}

func (o *flagOutput) Write(p []byte) (int, error) {
	if o.held != nil {
		return o.held.Write(p)
	}
	return o.w.Write(p)
}

// parseArgs parses args as fs.Parse does. -h prints the command's usage
// and gives flag.ErrHelp; a bad flag gives one line that says what is
// wrong, names the flag meant when the bad one is a slip of it, and where
// to read the flags: never the whole usage.
func parseArgs(fs *flag.FlagSet, args []string) error {
	o, ok := fs.Output().(*flagOutput)
	if !ok {
		return fs.Parse(args)
	}
	o.held = &bytes.Buffer{}
	err := fs.Parse(args)
	held := o.held
	o.held = nil
	switch {
	case err == flag.ErrHelp:
		_, _ = o.w.Write(held.Bytes())
		return err
	case err != nil:
		return flagError(fs, err)
	}
	return nil
}

// flagError is the flag package's error about a bad flag of fs, with the
// flag meant and where the flags are listed.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := world.Suggest(strings.TrimLeft(bad, "-"), names); s != "" {
			msg += fmt.Sprintf(" (did you mean -%s?)", s)
		}
	}
	return fmt.Errorf("%s; see seedfall help %s", msg, strings.TrimPrefix(fs.Name(), "seedfall "))
}

// worldArgs are the flags that name a world, shared by every command that
// loads one: -c, -profile and -set.
type worldArgs struct {
	cfg, profile *string
	sets         setFlags
	given        bool  // -c or the world file as an argument (worldfile.go)
	missing      error // no world file given, and none found up the tree
}

// setFlags collects repeated -set flags in order.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, " ") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func worldFlags(fs *flag.FlagSet) *worldArgs {
	cfg := defaultWorld
	a := &worldArgs{cfg: &cfg}
	fs.Var(worldFileFlag{a}, "c", "the world `file`, also given as the first argument (default: "+defaultWorld+" here, else in the nearest directory above, up to the repository root)")
	a.profile = fs.String("profile", "", "merge this entry of the world file's \"profiles\" over the world")
	fs.Var(&a.sets, "set", "override a field, as path=value: a JSON value or a bare string, such as faults.crash_per_sec=0.5 (repeatable)")
	return a
}

// load reads the world file with its profile and overrides. A .star
// world is the `world` global of the script.
func (a *worldArgs) load() (*world.World, error) {
	if a.missing != nil {
		return nil, a.missing
	}
	o := world.Options{Profile: *a.profile, Set: a.sets}
	if strings.HasSuffix(*a.cfg, ".star") {
		return starlark.LoadWorldWith(*a.cfg, starlark.Options{Stdout: os.Stderr}, o)
	}
	return world.LoadWith(*a.cfg, o)
}

// String writes the flags back as a command line, for printed commands.
func (a *worldArgs) String() string { return session.CommandArgs(*a.cfg, *a.profile, a.sets) }

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string { return session.ShellQuote(s) }

// open loads and prepares a world in an engine of its own, with notes and
// progress on stderr, as a command of the command line does.
func open(ctx context.Context, wa *worldArgs, stderr io.Writer) (*session.Session, error) {
	w, err := wa.load()
	if err != nil {
		return nil, err
	}
	return session.Open(ctx, w, wa.options(stderr))
}

// options are how the command line opens a session of wa's world: in an
// engine of its own, with notes on stderr and the build's progress there,
// redrawn in place on a terminal and logged now and then elsewhere.
func (a *worldArgs) options(stderr io.Writer) session.Options {
	return session.Options{Config: *a.cfg, Args: a.String(), Notes: stderr,
		NewEngine: func(ctx context.Context) (*engine.Engine, func(), error) {
			progress := func(string) {}
			logp := startLogProgress(stderr) // logprogress.go
			if isTerminal(stderr) {
				progress = func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s...", msg) }
			} else if logp != nil {
				progress = logp.build
			}
			done := func() {
				logp.end()
				if isTerminal(stderr) {
					fmt.Fprint(stderr, "\r\033[K")
				}
			}
			e, err := engine.New(ctx, engine.Options{Progress: progress, Note: noteTo(stderr), Hint: hintTo(stderr)})
			if err != nil {
				logp.end()
				return nil, nil, err
			}
			return e, done, nil
		}}
}

// noteTo prints the engine's notes (a damaged cache entry made again) to
// stderr, over a progress line on a terminal.
// hintTo is engine.Options.Hint: advice about speed, for a person at a
// terminal only (scripts and logs see results, not advice).
func hintTo(stderr io.Writer) func(string) {
	if !isTerminal(stderr) {
		return nil
	}
	return noteTo(stderr)
}

func noteTo(stderr io.Writer) func(string) {
	if isTerminal(stderr) {
		return func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s\n", msg) }
	}
	return func(msg string) { fmt.Fprintln(stderr, msg) }
}

// displayPath shortens a path under the working directory to a relative one.
func displayPath(path string) string { return session.DisplayPath(path) }

// samePath reports whether a and b name the same file.
func samePath(a, b string) bool { return session.SamePath(a, b) }

// parseSeeds reads -seeds: "7", "1-500" or "2-3,9".
func parseSeeds(spec string) (engine.Seeds, error) {
	seeds, err := engine.ParseSeeds(spec)
	if err != nil {
		return engine.Seeds{}, fmt.Errorf("-%w", err)
	}
	return seeds, nil
}

func isTerminal(w io.Writer) bool {
	if v, ok := w.(visibleControls); ok {
		w = v.f
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func simTime(ns int64) string { return session.SimTime(ns) }

func wallTime(ns int64) string { return session.WallTime(ns) }

// tailLines returns the last n output lines of a program, or of the whole
// run when node is "" (engine.TailLines).
func tailLines(lines []trace.Line, node string, n int) []trace.Line {
	return engine.TailLines(lines, node, n)
}

// jsonLine is a seed's run -json object (results.Line).
func jsonLine(res *engine.Result, schedule string) []byte {
	return results.Marshal(res, schedule, seedfallVersion())
}

func writeJSON(w io.Writer, res *engine.Result, schedule string) {
	fmt.Fprintf(w, "%s\n", jsonLine(res, schedule))
}

// flagSet reports whether the flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func plural(n int, what string) string { return session.Plural(n, what) }

// seedArgs are the flags of a command about one seed's run: -seed, and
// -faults for the schedule to apply.
type seedArgs struct {
	fs     *flag.FlagSet
	verb   string // "replay", "debug": for the message when -seed is missing
	seed   *uint64
	faults *string
	mutant *string       // -mutant, for the commands withMutant gives it (mutate.go)
	mut    engine.Mutant // -mutant as read by open
}

func seedFlags(fs *flag.FlagSet, verb string) *seedArgs {
	return &seedArgs{fs: fs, verb: verb,
		seed:   fs.Uint64("seed", 0, "the seed to "+verb),
		faults: fs.String("faults", "", "the schedule to apply (default: .seedfall/seed-N.faults.json next to the config, if it exists)")}
}

// open checks that -seed was given, opens the world, and reads the
// schedule to apply: nil means the seed's own faults, from names the file.
func (a *seedArgs) open(ctx context.Context, wa *worldArgs, stderr io.Writer) (s *session.Session, sch *faults.Schedule, from string, err error) {
	if !flagSet(a.fs, "seed") {
		return nil, nil, "", fmt.Errorf("say which seed to %s: -seed N", a.verb)
	}
	if err := a.readMutant(); err != nil {
		return nil, nil, "", err
	}
	if s, err = open(ctx, wa, stderr); err != nil {
		return nil, nil, "", err
	}
	if a.mut.Kind != "" && *a.faults == "" {
		// A seed's saved schedule is from a run without the mutant: the
		// seed draws its own faults, as seedfall mutate ran it.
		return s, nil, "", nil
	}
	if sch, from, err = s.LoadSchedule(*a.faults, *a.seed); err != nil {
		s.Close()
		return nil, nil, "", err
	}
	return s, sch, from, nil
}
