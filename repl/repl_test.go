package repl

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sl "go.starlark.net/starlark"
)

func newTest(t *testing.T, input string) (*REPL, *fakeEnv, *strings.Builder, *strings.Builder) {
	t.Helper()
	var out, errs strings.Builder
	env := &fakeEnv{out: &out}
	r := New(Options{Env: env, In: strings.NewReader(input), Out: &out, Err: &errs})
	return r, env, &out, &errs
}

// A session on stdin: values print, _ holds the last one, compound
// statements read on to a blank line, errors go to Err and the loop goes on.
func TestRunPlainLines(t *testing.T) {
	in := strings.Join([]string{
		"1 + 2",
		"_ * 10",
		"def twice(x):",
		"    return 2 * x",
		"",
		"twice(_)",
		"x = [1,",
		"  2]",
		"len(x)",
		"undefined_name",
		"print('still here')",
		"None",
	}, "\n")
	r, _, out, errs := newTest(t, in)
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	want := "3\n30\n60\n2\nstill here\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if !strings.Contains(errs.String(), "undefined: undefined_name") {
		t.Errorf("errors: %q", errs)
	}
	if r.Failed() != 1 {
		t.Errorf("Failed() = %d, want 1", r.Failed())
	}
}

func TestEOFInsideStatement(t *testing.T) {
	r, _, _, errs := newTest(t, "def f():\n    return 1")
	if err := r.Run(); err != nil {
		t.Fatal(err)
	}
	// A compound statement at end of input is complete without a blank line.
	if _, ok := r.Globals()["f"]; !ok {
		t.Errorf("f not defined; errors: %s", errs)
	}
}

// Each ':' command echoes the statement it stands for.
func TestCommandStatements(t *testing.T) {
	setup := []string{`w = load_config("seedfall.json")`, ":run 7"}
	tests := []struct {
		cmd, echo string
	}{
		{":run", "# r = run(w, seed=8)"},
		{":run 3", "# r = run(w, seed=3)"},
		{":rm 2", "# r = replay(r, schedule=r.schedule.remove(2))"},
		{":shift 1 -100ms", `# r = replay(r, schedule=r.schedule.shift(1, "-100ms"))`},
		{`:add {"at":"1s","kind":"pause","node":"server","until":"2s"}`, `# r = replay(r, schedule=r.schedule.add(fault(**json.decode("{\"at\":\"1s\",\"kind\":\"pause\",\"node\":\"server\",\"until\":\"2s\"}"))))`},
		{":replay", "# r = replay(r)"},
	}
	for _, tt := range tests {
		r, _, out, errs := newTest(t, "")
		for _, s := range setup {
			if !r.Eval(s) {
				t.Fatalf("%s: %s", s, errs)
			}
		}
		out.Reset()
		if !r.Eval(tt.cmd) {
			t.Errorf("%s failed: %s", tt.cmd, errs)
		}
		if first, _, _ := strings.Cut(out.String(), "\n"); first != tt.echo {
			t.Errorf("%s echoed %q, want %q", tt.cmd, first, tt.echo)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []struct {
		setup []string
		cmd   string
		err   string
	}{
		{nil, ":run", "no world in w"},
		{[]string{`w = load_config("x.json")`}, ":rm 1", "no run in r yet"},
		{[]string{`w = load_config("x.json")`, ":run"}, ":rm x", `"x" is not a fault position`},
		{[]string{`w = load_config("x.json")`, ":run"}, ":rm 0", `"0" is not a fault position`},
		{[]string{`w = load_config("x.json")`, ":run"}, ":rm 9", "fault 9"},
		{[]string{`w = load_config("x.json")`, ":run"}, ":shift 1", "want a fault position and an amount"},
		{[]string{`w = load_config("x.json")`, ":run"}, ":add {bad", "want a fault as a JSON object"},
		{[]string{`w = load_config("x.json")`, ":run"}, ":branch nett 2s", `"nett" is not a stream`},
		{nil, ":udno", "unknown command :udno (did you mean :undo?)"},
		{nil, ":undo", "nothing to undo"},
		{nil, ":redo", "nothing to redo"},
		{nil, ":help nosuch", `no command, builtin or global named "nosuch"`},
		{nil, ":save", "want a file name"},
	}
	for _, tt := range tests {
		r, _, _, errs := newTest(t, "")
		for _, s := range tt.setup {
			if !r.Eval(s) {
				t.Fatalf("%s: %s", s, errs)
			}
		}
		if r.Eval(tt.cmd) {
			t.Errorf("%s succeeded, want an error", tt.cmd)
		}
		if !strings.Contains(errs.String(), tt.err) {
			t.Errorf("%s: error %q, want it to contain %q", tt.cmd, errs, tt.err)
		}
	}
}

func TestSched(t *testing.T) {
	r, _, out, errs := newTest(t, "")
	for _, s := range []string{`w = load_config("x.json")`, ":run 4", ":rm 1"} {
		if !r.Eval(s) {
			t.Fatalf("%s: %s", s, errs)
		}
	}
	out.Reset()
	r.Eval(":sched")
	want := "# r.schedule\nseed 4, 1 fault, duration 10s\n  1    900ms  pause client until 950ms\n"
	if out.String() != want {
		t.Errorf(":sched printed\n%s\nwant\n%s", out, want)
	}
}

// :undo and :redo step r between its values; the saved session, run as a
// script, ends with the same r and the same runs.
func TestUndoRedoSave(t *testing.T) {
	r, env, out, errs := newTest(t, "")
	steps := []string{
		`w = load_config("seedfall.json")`,
		":run 1",
		"first = r.digest",
		":rm 1",
		":undo",
		":shift 2 +10ms",
		"r.seed",
		"kept = _",
		":undo",
		":redo",
		"r.digest",
	}
	var digests []string
	for _, s := range steps {
		if !r.Eval(s) {
			t.Fatalf("%s: %s", s, errs)
		}
		d := ""
		if run, ok := r.Globals()["r"].(*fakeRun); ok {
			d = run.digest()
		}
		digests = append(digests, d)
	}
	if digests[4] != digests[2] {
		t.Errorf("after :undo r is %s, want the first run's %s", digests[4], digests[2])
	}
	if digests[8] != digests[4] || digests[9] != digests[5] {
		t.Errorf(":undo/:redo digests %v", digests)
	}
	if !strings.Contains(out.String(), "# undo :rm 1: r is its value before that again\n") || !strings.Contains(out.String(), "# redo :shift 2 +10ms\n") {
		t.Errorf("undo did not say what r is:\n%s", out)
	}
	runs := env.runs

	path := filepath.Join(t.TempDir(), "session.star")
	if !r.Eval(":save " + path) {
		t.Fatal(errs)
	}
	script, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"w = load_config(\"seedfall.json\")\n# :run 1\nr = run(w, seed=1)\n_r1 = r\nfirst = r.digest\n",
		"# :shift 2 +10ms\nr = replay(r, schedule=r.schedule.shift(2, \"+10ms\"))\n_r3 = r\n_ = r.seed\nkept = _\n",
		"r = _r1  # :undo\n",
		"r = _r3  # :redo\n",
	} {
		if !strings.Contains(string(script), want) {
			t.Errorf("script lacks %q:\n%s", want, script)
		}
	}
	if strings.Contains(string(script), "r.digest\n") && !strings.Contains(string(script), "first = r.digest") {
		t.Errorf("script keeps a bare expression:\n%s", script)
	}

	env2 := &fakeEnv{out: io.Discard}
	g, err := sl.ExecFileOptions(FileOptions, env2.NewThread("script"), path, nil, env2.Predeclared())
	if err != nil {
		t.Fatalf("saved session fails as a script: %v\n%s", err, script)
	}
	if got, want := g["r"].String(), r.Globals()["r"].String(); got != want {
		t.Errorf("script ends with r = %s, the session with %s", got, want)
	}
	for _, name := range []string{"first", "kept"} {
		if !reflect.DeepEqual(g[name], r.Globals()[name]) {
			t.Errorf("%s: script %v, session %v", name, g[name], r.Globals()[name])
		}
	}
	if env2.runs != runs {
		t.Errorf("script ran %d simulations, the session %d", env2.runs, runs)
	}
}

// A statement that fails after binding a global is kept: the binding is state.
func TestFailedStatementKeepsBindings(t *testing.T) {
	r, _, _, _ := newTest(t, "")
	r.Eval("a = 1; b = 1 // 0")
	if !strings.Contains(r.Script(), "a = 1; b = 1 // 0\n") {
		t.Errorf("script:\n%s", r.Script())
	}
	r2, _, _, _ := newTest(t, "")
	r2.Eval("b = c")
	if strings.Contains(r2.Script(), "b = c") {
		t.Errorf("a statement that changed nothing is kept:\n%s", r2.Script())
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	star := filepath.Join(dir, "exp.star")
	os.WriteFile(star, []byte("world = load_config(\"seedfall.json\")\nseeds = [1, 2]\n_private = 3\n"), 0o644)
	r, _, out, errs := newTest(t, "")
	if err := r.LoadFile(star); err != nil {
		t.Fatal(err, errs)
	}
	if _, ok := r.Globals()["w"]; !ok {
		t.Error("the script's world is not w")
	}
	if _, ok := r.Globals()["_private"]; ok {
		t.Error("a private global was imported")
	}
	wantStmt := "# load(" + quote(star) + `, "seeds", "world", w="world")`
	if !strings.Contains(out.String(), wantStmt) {
		t.Errorf("output %q lacks %q", out, wantStmt)
	}

	r, _, out, _ = newTest(t, "")
	if err := r.LoadFile("seedfall.json"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "# w = load_config(\"seedfall.json\")\n") {
		t.Errorf("output %q", out)
	}
	if err := r.LoadFile("notes.txt"); err == nil || !strings.Contains(err.Error(), "want a world") {
		t.Errorf("LoadFile(notes.txt) = %v", err)
	}
}

func TestComplete(t *testing.T) {
	r, _, _, errs := newTest(t, "")
	for _, s := range []string{`w = load_config("seedfall.json")`, ":run 2", "def probe(seed, budget=1): pass"} {
		if !r.Eval(s) {
			t.Fatal(errs)
		}
	}
	tests := []struct {
		line       string
		head, tail string
		want       []string
	}{
		{"rep", "", "", []string{"replay"}},
		{"x = lo", "x = ", "", []string{"load_config"}},
		{"r.sch", "", "", []string{"r.schedule"}},
		{"r.schedule.re", "", "", []string{"r.schedule.remove"}},
		{"run(w, se", "run(w, ", "", []string{"seed="}},
		{"run(w, s", "run(w, ", "", []string{"seed=", "schedule="}},
		{"replay(r, schedule=r.schedule.remove(", "replay(r, schedule=r.schedule.remove(", "", []string{"fault", "json", "load_config", "probe", "r", "replay", "run", "w", "world"}},
		{"probe(b", "probe(", "", []string{"budget="}},
		{"r.schedule.shift(1, b", "r.schedule.shift(1, ", "", []string{"by="}},
		{"x = 'se", "x = '", "", []string{"server'"}},
		{`run(w, seed=1).logs(node="`, `run(w, seed=1).logs(node="`, "", []string{`server"`}},
		{"# r.", "# r.", "", nil},
		{":sh", ":", "", []string{"shift", "shrink"}},
		{":help lo", ":help ", "", []string{"load_config"}},
		{":branch n", ":branch ", "", []string{"net"}},
	}
	for _, tt := range tests {
		head, got, tail := r.Complete(tt.line, len([]rune(tt.line)))
		if head != tt.head || tail != tt.tail || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Complete(%q) = %q, %q, %q; want %q, %q, %q", tt.line, head, got, tail, tt.head, tt.want, tt.tail)
		}
	}
	// A closing quote already there is not doubled.
	if _, got, _ := r.Complete(`r.logs(node="s")`, 14); !reflect.DeepEqual(got, []string{"server"}) {
		t.Errorf("before a closing quote: %q", got)
	}
	// Completing in the middle of a line keeps what follows.
	if head, got, tail := r.Complete("rep(r)", 3); head != "" || !reflect.DeepEqual(got, []string{"replay"}) || tail != "(r)" {
		t.Errorf("mid-line: %q %q %q", head, got, tail)
	}
}

func TestHelp(t *testing.T) {
	r, _, out, _ := newTest(t, "")
	r.Eval(":help")
	for _, want := range []string{":shift I AMOUNT", ":save FILE", "load_config, replay, run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf(":help lacks %q:\n%s", want, out)
		}
	}
	out.Reset()
	r.Eval(":help run")
	if !strings.HasPrefix(out.String(), "run(w, seed=1, schedule=None)\n") || !strings.Contains(out.String(), ":run [SEED]") {
		t.Errorf(":help run: %q", out)
	}
	out.Reset()
	r.Eval(":help :run")
	if !strings.HasPrefix(out.String(), ":run [SEED]") {
		t.Errorf(":help :run: %q", out)
	}
}

// Ctrl-C (SIGINT) during an evaluation stops it and cancels the run in
// progress; the REPL then evaluates the next input as usual.
func TestInterrupt(t *testing.T) {
	r, env, out, errs := newTest(t, "")
	stop := r.catchInterrupts()
	defer stop()
	done := make(chan bool)
	go func() { done <- r.Eval("while True: pass") }()
	for {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case ok := <-done:
			if ok {
				t.Fatal("the loop ended without an error")
			}
			if !strings.Contains(errs.String(), "interrupted") || env.cancels == 0 {
				t.Errorf("errors %q, %d cancels", errs, env.cancels)
			}
			if !r.Eval("1 + 1") || !strings.HasSuffix(out.String(), "2\n") {
				t.Errorf("after the interrupt: %q %q", out, errs)
			}
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Saved into another directory, the literals that name files relative to
// the session's directory name them relative to the script; the rest stay.
func TestRebase(t *testing.T) {
	from := t.TempDir()
	for _, d := range []string{"server", "lib"} {
		if err := os.Mkdir(filepath.Join(from, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"seedfall.json", "lib/x.star", "héllo.json"} {
		if err := os.WriteFile(filepath.Join(from, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	to := filepath.Join(filepath.Dir(from), "elsewhere")
	rel := filepath.ToSlash(must(filepath.Rel(to, from)))
	tests := []struct{ src, want string }{
		{`w = load_config("seedfall.json")`, `w = load_config("` + rel + `/seedfall.json")`},
		{`load("lib/x.star", "x")`, `load("` + rel + `/lib/x.star", "x")`},
		{`load("@seedfall/table.star", "table")`, `load("@seedfall/table.star", "table")`},
		{`n = {"name": "server", "pkg": "./server"}`, `n = {"name": "server", "pkg": "` + rel + `/server"}`},
		{`s = "é"; w = load_config('héllo.json')`, `s = "é"; w = load_config("` + rel + `/héllo.json")`},
		{`x = ".".join(["a", "b"]) + "missing.json"`, `x = ".".join(["a", "b"]) + "missing.json"`},
		{"def f():\n    return load_config(\"seedfall.json\")", "def f():\n    return load_config(\"" + rel + "/seedfall.json\")"},
		{`w = load_config("` + from + `/seedfall.json")`, `w = load_config("` + from + `/seedfall.json")`},
	}
	for _, tt := range tests {
		if got := rebase(tt.src, from, to); got != tt.want {
			t.Errorf("rebase(%q):\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestNextIndent(t *testing.T) {
	tests := []struct{ src, want string }{
		{"def f(x):", "    "},
		{"def f(x):  # a comment", "    "},
		{"def f(x):\n    y = x", "    "},
		{"def f(x):\n    if x:", "        "},
		{"def f(x):\n    if x:\n        return 1", "    "},
		{"for s in seeds:\n    if run(w, seed=s).ok:\n        continue", "    "},
		{"while True:\n    break", ""},
		{"def f():\n    pass", ""},
		{"x = 1", ""},
		{`s = "a:"  # ends in ':' inside a string`, ""},
		{`s = "#" + ":"`, ""},
		{"x = [1,", ""},
		{"if x:\n\tif y:", "\t    "},
		{"if x:\n\treturn", ""},
		{"def f(x):\n    y = x\n", "    "},
	}
	for _, tt := range tests {
		if got := nextIndent(tt.src); got != tt.want {
			t.Errorf("nextIndent(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

// typed stands for a terminal: each line is what the user ends up with,
// after the indentation offered; it records the indentation offered.
type typed struct {
	lines   []string
	offered []string
}

func (t *typed) readLine(prompt, indent string) (string, error) {
	if len(t.lines) == 0 {
		return "", io.EOF
	}
	t.offered = append(t.offered, prompt+indent)
	l := t.lines[0]
	t.lines = t.lines[1:]
	return l, nil
}

func (*typed) close() {}

// At a terminal each line of a block starts indented as the block is, and
// Enter on the offered indentation alone ends the statement.
func TestAutoIndent(t *testing.T) {
	r, _, out, errs := newTest(t, "")
	in := &typed{lines: []string{
		"def f(x):",
		"    if x:",
		"        return 1",
		"    y = 2",
		"    return y",
		"",
		"f(True) + f(False)",
		"for i in [1, 2]:",
		"    print(i)",
		"    ",
	}}
	for len(in.lines) > 0 {
		if err := r.readEvalPrint(in); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{">>> ", "...     ", "...         ", "...     ", "...     ", "... ", ">>> ", ">>> ", "...     ", "...     "}
	if !reflect.DeepEqual(in.offered, want) {
		t.Errorf("offered:\n%q\nwant:\n%q", in.offered, want)
	}
	if out.String() != "3\n1\n2\n" || errs.Len() > 0 {
		t.Errorf("output %q, errors %q", out, errs)
	}
}

// syncBuffer is a terminal: the status line is drawn from its own goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A statement that takes long shows a progress line on stderr with the
// Env's latest message, erased before what the statement prints and when
// it ends; a quick one shows nothing.
func TestStatusLine(t *testing.T) {
	var term syncBuffer // stdout and stderr on one terminal
	status := NewStatus(&term)
	status.every = 20 * time.Millisecond
	env := &fakeEnv{progress: status.Set, slow: 120 * time.Millisecond}
	env.out = status.Above(&term)
	r := New(Options{Env: env, Out: &term, Err: &term, Status: status})
	if !r.Eval(`w = load_config("seedfall.json")`) || term.String() != "" {
		t.Fatalf("a quick statement drew %q", term.String())
	}
	if !r.Eval("for s in [1, 2]:\n    r = run(w, seed=s)\n    print('ran', s)") {
		t.Fatal("the loop failed")
	}
	got := term.String()
	const erase = "\r\033[K"
	if !regexp.MustCompile(`^\r\033\[Krunning… \d+s \(run seed 1\)`).MatchString(got) {
		t.Errorf("terminal shows %q, want it to start with the status line", got)
	}
	for _, want := range []string{
		"s (run seed 1)",
		"s (run seed 2)",
		erase + "ran 1\n",
		erase + "ran 2\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal shows %q, want it to contain %q", got, want)
		}
	}
	if !strings.HasSuffix(got, "ran 2\n") && !strings.HasSuffix(got, erase) {
		t.Errorf("the line is not erased at the end: %q", got)
	}
	// What is left on screen, with the line's drawing and erasing applied.
	if screen := screen(got); screen != "ran 1\nran 2\n" {
		t.Errorf("the screen shows %q", screen)
	}
	if line := statusLine(75*time.Second, ""); line != "running… 1m15s" {
		t.Errorf("statusLine without a message = %q", line)
	}
}

// screen is what a terminal shows after out: "\r\033[K" clears the line
// being written.
func screen(out string) string {
	var done, line strings.Builder
	for i := 0; i < len(out); i++ {
		switch {
		case strings.HasPrefix(out[i:], "\r\033[K"):
			line.Reset()
			i += 3
		case out[i] == '\n':
			done.WriteString(line.String() + "\n")
			line.Reset()
		default:
			line.WriteByte(out[i])
		}
	}
	return done.String() + line.String()
}
