// Package repl is seedfall's interactive loop: line editing, history and
// completion over the workbench's Starlark builtins, and ':' commands that
// stand for Starlark statements, so that a session can be saved as a script.
package repl

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/peterh/liner"
	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/starlark"
)

// Evaluator is the Starlark environment the REPL evaluates in;
// *starlark.Env (package github.com/seedfall/seedfall/starlark) is one.
type Evaluator interface {
	// Predeclared holds every builtin and module.
	Predeclared() sl.StringDict
	// NewThread returns a thread with load() and print wired.
	NewThread(name string) *sl.Thread
	// Cancel stops the simulation running now (Ctrl-C).
	Cancel()
}

// Options configure a REPL.
type Options struct {
	Env Evaluator
	// In is read line by line when Terminal is false.
	In       io.Reader
	Out, Err io.Writer
	// Terminal edits lines with liner on the process's terminal, with
	// prompts, history and completion; otherwise lines are read from In
	// without prompts, so that sessions fed on stdin give plain output.
	Terminal bool
	// HistoryFile keeps the lines typed across sessions ("" keeps none).
	HistoryFile string
	// Dir is the directory relative paths typed at the prompt resolve
	// against, as Env resolves them ("": the working directory). :save
	// rewrites the session's paths from it to the saved file's directory.
	Dir string
	// Status, when not nil, shows a progress line while a statement takes
	// more than a second (Err on a terminal).
	Status *Status
}

// FileOptions are the Starlark dialect of the REPL and of saved sessions:
// a session reassigns r at top level, so global reassignment is on.
var FileOptions = &syntax.FileOptions{
	Set:               true,
	While:             true,
	TopLevelControl:   true,
	GlobalReassign:    true,
	Recursion:         true,
	LoadBindsGlobally: true,
}

// REPL is one interactive session.
type REPL struct {
	o       Options
	thread  *sl.Thread
	globals sl.StringDict // the predeclared names and the user's

	log      []entry     // what the session did, for :save
	versions []version   // each value r has held
	past     []int       // versions of r, oldest first; the last is current
	future   []int       // versions :undo stepped back from, for :redo
	failed   int         // chunks that ended in an error
	running  atomic.Bool // an evaluation is running: Ctrl-C cancels it
}

// New returns a REPL over o.Env.
func New(o Options) *REPL {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Err == nil {
		o.Err = io.Discard
	}
	if o.Dir == "" {
		o.Dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(o.Dir); err == nil {
		o.Dir = abs
	}
	r := &REPL{o: o, thread: o.Env.NewThread("repl"), globals: sl.StringDict{}}
	for k, v := range o.Env.Predeclared() {
		r.globals[k] = v
	}
	return r
}

// Globals returns the session's global names: the builtins and the user's.
func (r *REPL) Globals() sl.StringDict { return r.globals }

// Failed reports how many inputs ended in an error.
func (r *REPL) Failed() int { return r.failed }

// errAborted is Ctrl-C at the prompt: drop what was typed, keep going.
var errAborted = errors.New("aborted")

// lineReader reads one line of input without its newline. indent is
// what the line starts with, already typed for the user to go on from or
// delete (a terminal); input that is not typed carries its own.
type lineReader interface {
	readLine(prompt, indent string) (string, error)
	close()
}

type plainReader struct{ sc *bufio.Scanner }

func (p plainReader) readLine(string, string) (string, error) {
	if p.sc.Scan() {
		return p.sc.Text(), nil
	}
	if err := p.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (plainReader) close() {}

type linerReader struct {
	st      *liner.State
	history string
}

func (l *linerReader) readLine(prompt, indent string) (string, error) {
	s, err := l.st.PromptWithSuggestion(prompt, indent, -1)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errAborted
	}
	if err == nil && strings.TrimSpace(s) != "" {
		l.st.AppendHistory(s)
	}
	return s, err
}

func (l *linerReader) close() {
	if l.history != "" {
		if err := os.MkdirAll(filepath.Dir(l.history), 0o755); err == nil {
			if f, err := os.Create(l.history); err == nil {
				l.st.WriteHistory(f)
				f.Close()
			}
		}
	}
	l.st.Close()
}

// Run reads and evaluates input until end of file (Ctrl-D).
func (r *REPL) Run() error {
	var in lineReader
	if r.o.Terminal {
		st := liner.NewLiner()
		st.SetCtrlCAborts(true)
		st.SetTabCompletionStyle(liner.TabPrints)
		st.SetWordCompleter(r.Complete)
		if r.o.HistoryFile != "" {
			if f, err := os.Open(r.o.HistoryFile); err == nil {
				st.ReadHistory(f)
				f.Close()
			}
		}
		in = &linerReader{st: st, history: r.o.HistoryFile}
		defer r.catchInterrupts()()
	} else {
		sc := bufio.NewScanner(r.o.In)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		in = plainReader{sc}
	}
	defer in.close()
	for {
		err := r.readEvalPrint(in)
		if err == io.EOF {
			if r.o.Terminal {
				fmt.Fprintln(r.o.Out)
			}
			return nil
		}
		if errors.Is(err, errAborted) {
			continue // liner has echoed ^C
		}
		if err != nil {
			return err
		}
	}
}

// readEvalPrint reads one input (a ':' command, or a Starlark statement,
// reading on while it is incomplete) and evaluates it.
func (r *REPL) readEvalPrint(in lineReader) error {
	first, err := in.readLine(">>> ", "")
	if err != nil {
		return err
	}
	if strings.TrimSpace(first) == "" {
		return nil
	}
	if t := strings.TrimSpace(first); strings.HasPrefix(t, ":") {
		r.Command(t)
		return nil
	}
	var src strings.Builder
	read := false
	eof := false
	var lineErr error
	readline := func() ([]byte, error) {
		if !read {
			read = true
			src.WriteString(first + "\n")
			return []byte(first + "\n"), nil
		}
		if eof {
			return nil, io.EOF
		}
		line, err := in.readLine("... ", nextIndent(src.String()))
		if err == io.EOF {
			// End of input ends the statement as a blank line would.
			eof = true
			return []byte("\n"), nil
		}
		if err != nil {
			lineErr = err
			return nil, err
		}
		src.WriteString(line + "\n")
		return []byte(line + "\n"), nil
	}
	f, err := FileOptions.ParseCompoundStmt("<stdin>", readline)
	if lineErr != nil {
		return lineErr
	}
	if err != nil {
		r.fail(err)
	} else {
		r.exec(f, strings.TrimRight(src.String(), "\n"), "")
	}
	if eof {
		return io.EOF
	}
	return nil
}

// nextIndent is the indentation the next line of a statement starts with,
// given the lines typed so far: one level (4 spaces) deeper after a line
// ending in ':' (def, if, for, ...), one level shallower after return,
// pass, break or continue, and else the last line's. A line that is only
// indentation is blank, so Enter on it ends the statement as an empty line
// does; to leave a block and go on, delete one level.
func nextIndent(src string) string {
	lines := strings.Split(strings.TrimRight(src, "\n"), "\n")
	last := ""
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			last = lines[i]
			break
		}
	}
	indent := last[:len(last)-len(strings.TrimLeft(last, " \t"))]
	code := strings.TrimSpace(stripComment(last))
	if strings.HasSuffix(code, ":") {
		return indent + "    "
	}
	word, _, _ := strings.Cut(code, " ")
	switch word {
	case "return", "pass", "break", "continue":
		if n := len(indent); n >= 4 && strings.HasSuffix(indent, "    ") {
			return indent[:n-4]
		}
		if n := len(indent); n > 0 && indent[n-1] == '\t' {
			return indent[:n-1]
		}
	}
	return indent
}

// stripComment returns line without a trailing # comment, leaving a #
// inside a string literal alone.
func stripComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// Eval runs src as if typed at the prompt: a ':' command or Starlark.
// It reports whether it succeeded; errors go to Err.
func (r *REPL) Eval(src string) bool {
	before := r.failed
	if t := strings.TrimSpace(src); strings.HasPrefix(t, ":") {
		r.Command(t)
	} else if t != "" {
		r.evalSource(src, "")
	}
	return r.failed == before
}

// evalSource parses and runs Starlark source; note, when not "", is how
// the statement is described in a saved session (the ':' command).
func (r *REPL) evalSource(src, note string) bool {
	f, err := FileOptions.Parse("<stdin>", src+"\n", 0)
	if err != nil {
		r.fail(err)
		return false
	}
	return r.exec(f, src, note)
}

// exec runs a parsed chunk, prints an expression's value, and logs what
// changed state.
func (r *REPL) exec(f *syntax.File, src, note string) bool {
	before := make(map[string]sl.Value, len(r.globals))
	for k, v := range r.globals {
		before[k] = v
	}
	r.thread.Steps = 0 // the step limit is per statement
	r.running.Store(true)
	if r.o.Status != nil {
		r.o.Status.begin()
	}
	var (
		v   sl.Value
		err error
	)
	expr := soleExpr(f)
	if expr != nil {
		v, err = sl.EvalExprOptions(f.Options, r.thread, expr, r.globals)
	} else {
		err = sl.ExecREPLChunk(f, r.thread, r.globals)
	}
	if r.o.Status != nil {
		r.o.Status.end()
	}
	r.running.Store(false)
	r.thread.Uncancel()
	changed := false
	for k, v := range r.globals {
		if old, ok := before[k]; !ok || !same(old, v) {
			changed = true
		}
	}
	switch {
	case expr != nil && err == nil && v != sl.None:
		r.globals["_"] = v
		fmt.Fprintln(r.o.Out, v)
		r.log = append(r.log, entry{kind: valueEntry, src: src, note: note})
	case err == nil || changed:
		r.log = append(r.log, entry{kind: stmtEntry, src: src, note: note, usesUnderscore: usesUnderscore(f)})
	}
	r.trackR()
	if err != nil {
		r.fail(err)
		return false
	}
	return true
}

// catchInterrupts turns Ctrl-C during an evaluation into a cancel of the
// running simulation and of the Starlark thread; the REPL stays. At the
// prompt liner reads Ctrl-C itself, but a terminal too narrow for line
// editing sends SIGINT there too, which must not end the session either.
func (r *REPL) catchInterrupts() (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		for range sig {
			if r.running.Load() {
				r.o.Env.Cancel()
				r.thread.Cancel("interrupted")
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(sig)
	}
}

func (r *REPL) fail(err error) {
	r.failed++
	var evalErr *sl.EvalError
	if errors.As(err, &evalErr) {
		// An error straight from a builtin called at the prompt needs no
		// traceback: the line is on screen.
		if cs := evalErr.CallStack; len(cs) <= 2 && (len(cs) < 2 || cs[1].Pos.Filename() == "<builtin>") {
			fmt.Fprintln(r.o.Err, "error: "+evalErr.Msg)
			return
		}
		fmt.Fprintln(r.o.Err, starlark.Backtrace(evalErr))
		return
	}
	fmt.Fprintln(r.o.Err, err)
}

func soleExpr(f *syntax.File) syntax.Expr {
	if len(f.Stmts) == 1 {
		if stmt, ok := f.Stmts[0].(*syntax.ExprStmt); ok {
			return stmt.X
		}
	}
	return nil
}

// same reports whether a and b are the same value: identity for
// references, equality for comparable plain values.
func same(a, b sl.Value) bool {
	if reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	if reflect.TypeOf(a).Comparable() {
		return a == b
	}
	if va, vb := reflect.ValueOf(a), reflect.ValueOf(b); va.Kind() == reflect.Slice {
		return va.Pointer() == vb.Pointer() && va.Len() == vb.Len()
	}
	return false
}

// usesUnderscore reports whether f reads the global _ (the last value).
func usesUnderscore(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && id.Name == "_" {
			found = true
		}
		return !found
	})
	return found
}

// sortedNames returns d's keys in order.
func sortedNames(d sl.StringDict) []string {
	names := make([]string, 0, len(d))
	for k := range d {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// LoadFile starts the session from a file: a world (.json or .toml) becomes
// w; a .star file is executed and its globals become the session's, its
// `world` (if it defines one) also as w. It prints the statement that
// stands for it, which a saved session starts with.
func (r *REPL) LoadFile(path string) error {
	switch filepath.Ext(path) {
	case ".json", ".toml":
		stmt := fmt.Sprintf("w = load_config(%s)", quote(path))
		fmt.Fprintf(r.o.Out, "# %s\n", stmt)
		if !r.evalSource(stmt, "") {
			return fmt.Errorf("could not load %s (the error is above)", path)
		}
		fmt.Fprintf(r.o.Out, "# the world in %s is w: :run runs a seed, :help lists the commands\n", path)
		return nil
	case ".star":
	default:
		return fmt.Errorf("%s: want a world (.json, .toml) or a Starlark file (.star)", path)
	}
	if r.thread.Load == nil {
		return fmt.Errorf("%s: this REPL cannot load files", path)
	}
	g, err := r.thread.Load(r.thread, path)
	if err != nil {
		r.fail(err)
		return fmt.Errorf("could not load %s (the error is above)", path)
	}
	args := []string{quote(path)}
	var names []string
	for _, name := range sortedNames(g) {
		if strings.HasPrefix(name, "_") {
			continue
		}
		names = append(names, name)
		args = append(args, quote(name))
		r.globals[name] = g[name]
	}
	if v, ok := g["world"]; ok && g["w"] == nil {
		args = append(args, `w="world"`)
		r.globals["w"] = v
		names = append(names, "w")
	}
	if len(names) == 0 {
		// load() must name something; a saved session cannot replay this.
		fmt.Fprintf(r.o.Out, "# ran %s; it defines no globals\n", path)
		return nil
	}
	stmt := fmt.Sprintf("load(%s)", strings.Join(args, ", "))
	fmt.Fprintf(r.o.Out, "# %s\n", stmt)
	r.log = append(r.log, entry{kind: stmtEntry, src: stmt})
	r.trackR()
	fmt.Fprintf(r.o.Out, "# ran %s; its globals are yours: %s\n", path, strings.Join(names, ", "))
	return nil
}

// DefaultHistoryFile is where typed lines are kept across sessions:
// $SEEDFALL_HISTORY, or seedfall/history under the user's config directory
// ("" when there is none).
func DefaultHistoryFile() string {
	if f := os.Getenv("SEEDFALL_HISTORY"); f != "" {
		return f
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "seedfall", "history")
}
