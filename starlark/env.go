// Package starlark is seedfall's workbench API: worlds, runs, schedules and
// faults as Starlark values, the builtins that make and run them, load() of
// scripts and of the shipped stdlib, and errors that name the script's
// file:line:col. It knows nothing of the REPL or the command line.
package starlark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/stdlib"
)

// Options configure an Env.
type Options struct {
	Engine    *engine.Engine // shared; built by the caller (nil: built on first run)
	Dir       string         // base dir for relative paths named outside any file (the REPL); default: the working directory
	Stdout    io.Writer      // print() goes here; default: os.Stdout
	Args      []string       // script arguments (`seedfall script x.star a b` -> ["a","b"])
	Parallel  int            // default parallelism for explore/shrink; below 1 means 1
	MaxSteps  int64          // Starlark steps per thread: 0: $SEEDFALL_STARLARK_STEPS or DefaultMaxSteps; below 0: no limit
	StepsFlag string         // the flag that sets MaxSteps, named in the step limit's error ("-max-steps"); "": none
	// NoForks runs every branch and look (debug) from t=0, never from a
	// recording of the run (engine.Recordings): the same results, for
	// comparison.
	NoForks bool
	// Progress, when not nil, hears how far a builtin that takes a while
	// is, in a line such as "shrink seed 3: removing faults, 12 runs so
	// far, 2 faults left", "explore: 40 runs of 500, 1 failure" or "run
	// seed 7", and of builds (when the Env builds its own engine). It may
	// be called from several goroutines; a caller shows the latest.
	Progress func(msg string)
}

// Env is one workbench session: the builtins, the modules loaded so far, and
// the prepared worlds, which runs of the same world share.
type Env struct {
	o Options

	mu       sync.Mutex
	ctx      context.Context
	cancel   context.CancelFunc
	eng      *engine.Engine
	engErr   error
	engOnce  sync.Once
	prepared map[string]*prepEntry // by the world's content key
	modules  map[string]*modEntry  // by absolute path, or "@seedfall/NAME.star"
	forks    engine.Recordings     // recordings that branches and looks fork from

	predeclared sl.StringDict

	maxSteps uint64       // 0: none
	stepsErr error        // a bad $SEEDFALL_STARLARK_STEPS, returned by ExecFile
	threads  []*sl.Thread // every thread made, for StopAfter
	stopped  string       // StopAfter's reason once it fired
}

type prepEntry struct {
	once sync.Once
	p    *engine.Prepared
	err  error
}

type modEntry struct {
	globals sl.StringDict
	err     error
}

// FileOptions are the dialect scripts are written in: while loops, if and
// for at the top level, recursion and sets are allowed, since scripts are
// experiments, not hermetic build files.
var FileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: true}

// NewEnv makes a session.
func NewEnv(o Options) *Env {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Dir == "" {
		o.Dir, _ = os.Getwd()
	} else if abs, err := filepath.Abs(o.Dir); err == nil {
		o.Dir = abs
	}
	o.Parallel = max(o.Parallel, 1)
	e := &Env{o: o, prepared: map[string]*prepEntry{}, modules: map[string]*modEntry{}}
	e.maxSteps, e.stepsErr = stepLimit(o.MaxSteps)
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.predeclared = e.builtins()
	return e
}

// Predeclared returns every builtin and module, by global name.
func (e *Env) Predeclared() sl.StringDict { return e.predeclared }

// Parallel is the default parallelism for explore and shrink.
func (e *Env) Parallel() int { return e.o.Parallel }

// Context is the context runs use now; Cancel ends it and starts another.
func (e *Env) Context() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctx
}

// Cancel stops the simulations running now: their run() (or shrink(),
// explore()) call fails with "interrupted", which ends the statement. Runs
// started afterwards use a fresh context, so a REPL stays usable. It does
// not stop Starlark code that is not running a simulation: a REPL cancels
// its thread for that (and calls Uncancel before the next statement).
func (e *Env) Cancel() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cancel()
	e.ctx, e.cancel = context.WithCancel(context.Background())
}

// Engine returns the engine runs use, building one on first use when
// Options.Engine was nil.
func (e *Env) Engine() (*engine.Engine, error) {
	e.engOnce.Do(func() {
		if e.o.Engine != nil {
			e.eng = e.o.Engine
			return
		}
		e.eng, e.engErr = engine.New(context.Background(), engine.Options{Progress: e.o.Progress})
	})
	return e.eng, e.engErr
}

// progress reports how far a builtin is, to Options.Progress.
func (e *Env) progress(format string, args ...any) {
	if e.o.Progress != nil {
		e.o.Progress(fmt.Sprintf(format, args...))
	}
}

// Prepare builds a world's programs once per distinct world (by content).
func (e *Env) Prepare(ctx context.Context, w *World) (*engine.Prepared, error) {
	eng, err := e.Engine()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	pe, ok := e.prepared[w.key]
	if !ok {
		pe = &prepEntry{}
		e.prepared[w.key] = pe
	}
	e.mu.Unlock()
	pe.once.Do(func() { pe.p, pe.err = eng.Prepare(ctx, w.w) })
	if pe.err != nil && ctx.Err() != nil {
		// An interrupted build is not the world's fault: try again next time.
		e.mu.Lock()
		delete(e.prepared, w.key)
		e.mu.Unlock()
	}
	return pe.p, pe.err
}

// Thread locals.
const (
	localChain = "seedfall.loadchain" // []string: the files being loaded, outermost first
	localEnv   = "seedfall.env"       // *Env
)

// NewThread returns a thread whose print writes to Options.Stdout and whose
// load() reads files relative to the loading file and "@seedfall/NAME.star"
// from the stdlib, each once per Env, refusing cycles.
func (e *Env) NewThread(name string) *sl.Thread {
	return e.thread(name, nil)
}

func (e *Env) thread(name string, chain []string) *sl.Thread {
	t := &sl.Thread{
		Name:  name,
		Print: func(_ *sl.Thread, msg string) { fmt.Fprintln(e.o.Stdout, msg) },
		Load:  e.load,
	}
	t.SetLocal(localChain, chain)
	t.SetLocal(localEnv, e)
	setClock(t)
	e.limitThread(t)
	e.mu.Lock()
	e.threads = append(e.threads, t)
	if e.stopped != "" {
		t.Cancel(e.stopped)
	}
	e.mu.Unlock()
	return t
}

// ExecFile runs a script file and returns its globals.
func (e *Env) ExecFile(path string) (sl.StringDict, error) {
	if e.stepsErr != nil {
		return nil, e.stepsErr
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	abs, _ := filepath.Abs(path)
	t := e.thread(path, []string{abs})
	return sl.ExecFileOptions(FileOptions, t, path, src, e.predeclared)
}

// load is Thread.Load.
func (e *Env) load(t *sl.Thread, module string) (sl.StringDict, error) {
	chain, _ := t.Local(localChain).([]string)
	var key, display string
	var src []byte
	if name, ok := strings.CutPrefix(module, "@seedfall/"); ok {
		b, err := stdlib.FS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("no stdlib module %q (there are: %s)", module, strings.Join(stdlibNames(), ", "))
		}
		key, display, src = module, module, b
	} else {
		if strings.HasPrefix(module, "@") {
			return nil, fmt.Errorf("%q: the only module prefix is @seedfall/ (the stdlib); other files are named by a path relative to the script", module)
		}
		key = e.resolve(t, module)
		display = shortPath(key)
	}
	if i := slices.Index(chain, key); i >= 0 {
		names := make([]string, 0, len(chain)-i+1)
		for _, c := range append(chain[i:], key) {
			names = append(names, filepath.Base(c))
		}
		return nil, fmt.Errorf("load cycle: %s; a file cannot load itself, even through others", strings.Join(names, " -> "))
	}
	e.mu.Lock()
	m, ok := e.modules[key]
	e.mu.Unlock()
	if ok {
		return m.globals, m.err
	}
	if src == nil {
		b, err := os.ReadFile(key)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %v (paths are relative to the file that loads them)", module, unwrapPath(err))
		}
		src = b
	}
	t2 := e.thread("load "+module, append(slices.Clone(chain), key))
	g, err := sl.ExecFileOptions(FileOptions, t2, display, src, e.predeclared)
	var ee *sl.EvalError
	if errors.As(err, &ee) {
		// The caller sees only the message: keep where it happened.
		err = errors.New(Backtrace(ee))
	}
	m = &modEntry{globals: g, err: err}
	e.mu.Lock()
	e.modules[key] = m
	e.mu.Unlock()
	return g, err
}

// shortPath names a file relative to the working directory when it is
// under it, as a user would type it.
func shortPath(abs string) string {
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return abs
}

func stdlibNames() []string {
	ents, _ := stdlib.FS.ReadDir(".")
	var out []string
	for _, d := range ents {
		if strings.HasSuffix(d.Name(), ".star") {
			out = append(out, "@seedfall/"+d.Name())
		}
	}
	return out
}

// dir is the directory relative paths resolve against in the code calling
// a builtin now: the directory of the file it is written in, or
// Options.Dir outside any file (the REPL, a stdlib module).
func (e *Env) dir(t *sl.Thread) string {
	for i := 0; i < t.CallStackDepth(); i++ {
		f := t.CallFrame(i).Pos.Filename()
		if f == "" || f == "<builtin>" || strings.HasPrefix(f, "@seedfall/") || strings.HasPrefix(f, "<") {
			continue
		}
		if abs, err := filepath.Abs(f); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return filepath.Dir(abs)
			}
		}
		break
	}
	return e.o.Dir
}

// resolve makes path absolute against dir(t).
func (e *Env) resolve(t *sl.Thread, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(e.dir(t), filepath.FromSlash(path))
}

// LoadWorld runs a .star file and returns its `world` global.
func LoadWorld(path string, o Options) (*world.World, error) {
	return LoadWorldWith(path, o, world.Options{})
}

// LoadWorldWith is LoadWorld with a profile and -set overrides merged over
// the script's world, as for a JSON world.
func LoadWorldWith(path string, o Options, wo world.Options) (*world.World, error) {
	if o.Dir == "" {
		o.Dir = filepath.Dir(path)
	}
	e := NewEnv(o)
	g, err := e.ExecFile(path)
	if err != nil {
		return nil, scriptError(err)
	}
	v, ok := g["world"]
	if !ok {
		return nil, fmt.Errorf("%s: defines no global `world`; end the script with world = world(nodes=[...], ...)", path)
	}
	w, ok := v.(*World)
	if !ok {
		return nil, fmt.Errorf("%s: the global `world` is a %s, not a world; assign it the result of world(...) or load_config(...)", path, v.Type())
	}
	if wo.Profile == "" && len(wo.Set) == 0 {
		return w.w, nil
	}
	data, err := w.specJSON()
	if err != nil {
		return nil, err
	}
	return world.ParseWith(padLines(data, w.line), w.file, w.dir, wo)
}

// scriptError gives a Starlark error with its traceback, except a world
// error made at the top level of the script: it names the script's
// file:line:col already.
func scriptError(err error) error {
	var ee *sl.EvalError
	var le *locatedError
	if errors.As(err, &ee) && errors.As(err, &le) && len(ee.CallStack) <= 2 {
		return le
	}
	if errors.As(err, &ee) {
		return errors.New(strings.TrimSuffix(Backtrace(ee), "\n"))
	}
	return err
}

// ScriptError is the message for a script's error: a Starlark error with
// its traceback, anything else as it is.
func ScriptError(err error) string { return scriptError(err).Error() }

// Failed reports whether err is the script's own fail(...): the script ran
// and found what it checks for wrong, as opposed to not being able to run.
func Failed(err error) bool {
	var ee *sl.EvalError
	if !errors.As(err, &ee) {
		return false
	}
	cs := ee.CallStack
	return len(cs) > 0 && cs[len(cs)-1].Name == "fail"
}

func unwrapPath(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// plural is "1 run", "2 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
