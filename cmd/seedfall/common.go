package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark"
)

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("seedfall "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = commandUsage(name, fs) // help.go
	return fs
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
func (a *worldArgs) String() string {
	out := "-c " + shellQuote(*a.cfg)
	if *a.profile != "" {
		out += " -profile " + shellQuote(*a.profile)
	}
	for _, s := range a.sets {
		out += " -set " + shellQuote(s)
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string { return engine.ShellQuote(s) }

// session is a loaded, built world and the engine that runs it.
type session struct {
	cfg    string    // -c as given, for messages
	args   string    // -c, -profile and -set as a command line, for printed commands
	stderr io.Writer // notes: a damaged cache entry, a schedule kept
	w      *world.World
	e      *engine.Engine
	p      *engine.Prepared
	kept   bool // e belongs to the caller (seedfall mcp's session), not to this session
}

// openOptions say where a session's notes go and which engine prepares
// its world.
type openOptions struct {
	// stderr takes the notes, and the build's progress when the engine is
	// the session's own.
	stderr io.Writer
	// engine prepares the world when not nil, and outlives the session:
	// seedfall mcp keeps one for every call, so that a world opened again
	// costs only the hashing of its programs. nil: a new engine, closed
	// with the session.
	engine *engine.Engine
}

// open loads and prepares a world in an engine of its own, with notes and
// progress on stderr, as a command of the command line does.
func open(ctx context.Context, wa *worldArgs, stderr io.Writer) (*session, error) {
	return openWith(ctx, wa, openOptions{stderr: stderr})
}

// openWith loads and prepares a world as o says.
func openWith(ctx context.Context, wa *worldArgs, o openOptions) (*session, error) {
	stderr := o.stderr
	w, err := wa.load()
	if err != nil {
		return nil, err
	}
	if o.engine != nil {
		p, err := o.engine.Prepare(ctx, w)
		if err != nil {
			return nil, err
		}
		return &session{cfg: *wa.cfg, args: wa.String(), stderr: stderr, w: w, e: o.engine, p: p, kept: true}, nil
	}
	progress := func(string) {}
	logp := startLogProgress(stderr) // logprogress.go
	if isTerminal(stderr) {
		progress = func(msg string) { fmt.Fprintf(stderr, "\r\033[K%s...", msg) }
	} else if logp != nil {
		progress = logp.build
	}
	e, err := engine.New(ctx, engine.Options{Progress: progress, Note: noteTo(stderr), Hint: hintTo(stderr)})
	if err != nil {
		logp.end()
		return nil, err
	}
	p, err := e.Prepare(ctx, w)
	logp.end()
	if isTerminal(stderr) {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		e.Close(ctx)
		return nil, err
	}
	return &session{cfg: *wa.cfg, args: wa.String(), stderr: stderr, w: w, e: e, p: p}, nil
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

func (s *session) close() {
	if !s.kept {
		s.e.Close(context.Background())
	}
}

// schedulePath is where a failing seed's schedule is kept: in the world
// file's artifact directory next to it (engine.SchedulePath).
func (s *session) schedulePath(seed uint64) string { return engine.SchedulePath(s.w, seed) }

// saveSchedule writes a failing seed's schedule next to the config, unless
// a shrunk or explored schedule, or another world's, is there: then it
// keeps that one, writes seed-N.run.faults.json, and says so
// (engine.SaveFailure).
func (s *session) saveSchedule(res *engine.Result) (string, error) {
	sv, err := engine.SaveFailure(s.w, res)
	if err != nil {
		return "", err
	}
	s.noteSaved(savedOf(sv))
	return sv.Path, nil
}

// historyPath is where a seed's history that is not linearizable is drawn,
// next to its schedule.
func (s *session) historyPath(seed uint64) string { return engine.HistoryPath(s.w, seed) }

// configName names the world a schedule belongs to: the file, and the
// profile and overrides that changed it, since they share its schedules.
func (s *session) configName() string { return engine.ConfigName(s.w) }

// loadSchedule reads -faults, or the seed's saved schedule when -faults is
// "" and one exists; nil means "draw the seed's own faults".
func (s *session) loadSchedule(path string, seed uint64) (*faults.Schedule, string, error) {
	implicit := path == ""
	if implicit {
		def := s.schedulePath(seed)
		if _, err := os.Stat(def); err != nil {
			return nil, "", nil
		}
		path = def
	}
	sch, err := faults.Load(path, checkConfig(s.w))
	if err != nil {
		return nil, "", err
	}
	if sch.Seed != seed {
		return nil, "", fmt.Errorf("%s holds the schedule of seed %d, not seed %d", path, sch.Seed, seed)
	}
	// The world's profiles and -set overrides share its schedules: a
	// schedule another of them saved is used only when asked for by name.
	if own := s.configName(); implicit && sch.Config != "" && sch.Config != own {
		fmt.Fprintf(s.stderr, "note: %s was saved by %s, not %s; drawing seed %d's own faults (pass -faults %s to apply it)\n",
			displayPath(path), sch.Config, own, seed, displayPath(path))
		return nil, "", nil
	}
	return sch, displayPath(path), nil
}

// displayPath shortens a path under the working directory to a relative one.
func displayPath(path string) string { return results.DisplayPath(path) }

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

func simTime(ns int64) string { return time.Duration(ns).String() }

func wallTime(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// tailLines returns the last n output lines of a program, or of the whole
// run when node is "" (engine.TailLines).
func tailLines(lines []trace.Line, node string, n int) []trace.Line {
	return engine.TailLines(lines, node, n)
}

// failureLines returns n lines of output that show why res failed
// (Result.FailureLines).
func failureLines(res *engine.Result, n int) []trace.Line { return res.FailureLines(n) }

// printVerdict prints one seed's outcome for a person.
func (s *session) printVerdict(w io.Writer, res *engine.Result, replay string) {
	printResult(w, res, replay, s.historyShown(res, replay))
}

// printResult is printVerdictWith for a run.
func printResult(w io.Writer, res *engine.Result, replay, history string) {
	printVerdictWith(w, results.NewRecord(res, "", ""), replay, history)
}

// historyShown is the page of res's history that is not linearizable, as a
// verdict with a replay command names it, or "".
func (s *session) historyShown(res *engine.Result, replay string) string {
	if replay != "" && res.History != nil && len(res.History.HTML) > 0 {
		if _, err := os.Stat(s.historyPath(res.Seed)); err == nil {
			return displayPath(s.historyPath(res.Seed))
		}
	}
	return ""
}

// printVerdictWith prints one seed's outcome for a person, with the
// command that replays it and the page of its history that is not
// linearizable, when they are not "".
func printVerdictWith(w io.Writer, rec *results.Record, replay, history string) {
	res := &rec.Line
	if res.Passed {
		fmt.Fprintf(w, "PASS seed %d at t=%s (%s; %d scheduler steps, %s real)\n", res.Seed, simTime(res.SimNs), res.Reason, res.Steps, wallTime(res.WallNs))
		return
	}
	fmt.Fprintf(w, "FAIL seed %d at t=%s (%d scheduler steps, %s real)\n", res.Seed, simTime(res.SimNs), res.Steps, wallTime(res.WallNs))
	fmt.Fprintf(w, "  %s: %s\n", res.Class, res.Reason)
	for _, l := range rec.FailureLines(8) {
		fmt.Fprintf(w, "  %s\n", l.String())
	}
	if replay != "" {
		fmt.Fprintf(w, "  replay: %s\n", replay)
		if history != "" {
			fmt.Fprintf(w, "  history: %s (open it in a browser)\n", history)
		}
	}
}

func (s *session) replayCommand(seed uint64) string {
	return fmt.Sprintf("seedfall replay %s -seed %d", s.args, seed)
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

// plural writes "1 fault", "3 faults".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

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
func (a *seedArgs) open(ctx context.Context, wa *worldArgs, stderr io.Writer) (s *session, sch *faults.Schedule, from string, err error) {
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
	if sch, from, err = s.loadSchedule(*a.faults, *a.seed); err != nil {
		s.close()
		return nil, nil, "", err
	}
	return s, sch, from, nil
}

// printSource says where a run's faults come from.
func printSource(w io.Writer, seed uint64, sch *faults.Schedule, from string) {
	if from != "" {
		fmt.Fprintf(w, "seed %d, %s from %s\n", seed, plural(len(sch.Faults), "fault"), from)
	} else {
		fmt.Fprintf(w, "seed %d, faults drawn from the seed\n", seed)
	}
}
