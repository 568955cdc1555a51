package repl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/starlark"
)

// cmdInfo describes a ':' command for :help and completion.
type cmdInfo struct {
	name, args, help string
}

var cmds = []cmdInfo{
	{"help", "[NAME]", "list the commands and builtins, or describe one"},
	{"run", "[SEED]", "r = run(w, seed=SEED); SEED defaults to the seed after r's"},
	{"sched", "", "list r.schedule's faults, numbered for :rm and :shift"},
	{"rm", "I", "r = replay(r, schedule=r.schedule.remove(I))"},
	{"shift", "I AMOUNT", "r = replay(r, schedule=r.schedule.shift(I, AMOUNT)); AMOUNT like +100ms, -2s, or +3 operations"},
	{"add", "JSON", "r = replay(r, schedule=r.schedule.add(fault(**json.decode(JSON))))"},
	{"branch", "STREAM AT", "r = branch(r, stream=STREAM, at=AT); STREAM \"all\" re-keys every stream"},
	{"replay", "", "r = replay(r)"},
	{"shrink", "", "r = shrink(r)"},
	{"cause", "", "c = cause(r): when r's failure became inevitable, and the faults just before"},
	{"debug", "AT", "d = debug(r, at=AT): the world at a moment of r, as seedfall debug shows it"},
	{"undo", "", "give r back its value before the last change"},
	{"redo", "", "undo the last :undo"},
	{"save", "FILE", "write the session as a script that replays it (seedfall script FILE)"},
}

// Command runs one ':' command line. Those that change state are turned
// into the Starlark statement they stand for, echoed as a comment, and run.
func (r *REPL) Command(line string) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), ":"), " ")
	arg = strings.TrimSpace(arg)
	fields := strings.Fields(arg)
	stmt, err := r.translate(name, arg, fields)
	if err != nil {
		r.fail(err)
		return
	}
	if stmt == "" {
		return
	}
	fmt.Fprintf(r.o.Out, "# %s\n", stmt)
	// Show what the statement assigned: r, c for :cause, d for :debug.
	if name, _, ok := strings.Cut(stmt, " = "); r.evalSource(stmt, strings.TrimSpace(line)) && ok {
		fmt.Fprintln(r.o.Out, r.globals[name])
	}
}

// translate returns the statement a command stands for, or runs the
// commands that stand for none and returns "".
func (r *REPL) translate(name, arg string, fields []string) (string, error) {
	want := func(n int, usage string) error {
		if len(fields) != n {
			return fmt.Errorf(":%s: want %s, got %q", name, usage, arg)
		}
		return nil
	}
	needR := func() error {
		if _, ok := r.globals["r"]; !ok {
			return fmt.Errorf(":%s: no run in r yet (:run first, or r = run(w, seed=1))", name)
		}
		return nil
	}
	position := func(s string) (int, error) {
		i, err := strconv.Atoi(s)
		if err != nil || i < 1 {
			return 0, fmt.Errorf(":%s: %q is not a fault position (1, 2, ... as :sched numbers them)", name, s)
		}
		return i, nil
	}
	switch name {
	case "help":
		return "", r.help(arg)
	case "run":
		if _, ok := r.globals["w"]; !ok {
			return "", fmt.Errorf(":run: no world in w (start with seedfall repl seedfall.json, or w = load_config(\"seedfall.json\"))")
		}
		if len(fields) > 1 {
			return "", want(1, "one seed")
		}
		seed := uint64(1)
		if len(fields) == 1 {
			n, err := strconv.ParseUint(fields[0], 10, 64)
			if err != nil {
				return "", fmt.Errorf(":run: seed %q is not a number", fields[0])
			}
			seed = n
		} else if last, ok := r.lastSeed(); ok {
			seed = last + 1
		}
		return fmt.Sprintf("r = run(w, seed=%d)", seed), nil
	case "sched":
		if err := needR(); err != nil {
			return "", err
		}
		return "", r.sched()
	case "rm":
		if err := want(1, "a fault position, like :rm 2"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		i, err := position(fields[0])
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("r = replay(r, schedule=r.schedule.remove(%d))", i), nil
	case "shift":
		if err := want(2, "a fault position and an amount, like :shift 1 -100ms"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		i, err := position(fields[0])
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("r = replay(r, schedule=r.schedule.shift(%d, %s))", i, quote(fields[1])), nil
	case "add":
		if err := needR(); err != nil {
			return "", err
		}
		var obj map[string]any
		if err := json.Unmarshal([]byte(arg), &obj); err != nil {
			return "", fmt.Errorf(":add: want a fault as a JSON object, like :add {\"at\":\"1s\",\"kind\":\"pause\",\"node\":\"server\",\"until\":\"2s\"} (%v)", err)
		}
		return fmt.Sprintf("r = replay(r, schedule=r.schedule.add(fault(**json.decode(%s))))", quote(arg)), nil
	case "branch":
		if err := want(2, "a stream and a time, like :branch net 2s"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		if fields[0] == "all" {
			return fmt.Sprintf("r = branch(r, at=%s)", quote(fields[1])), nil
		}
		if streams := starlark.BranchStreams(); !contains(streams, fields[0]) {
			return "", fmt.Errorf(":branch: %q is not a stream (one of %s, or all)", fields[0], strings.Join(streams, ", "))
		}
		return fmt.Sprintf("r = branch(r, stream=%s, at=%s)", quote(fields[0]), quote(fields[1])), nil
	case "replay", "shrink":
		if err := want(0, "no arguments"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		return fmt.Sprintf("r = %s(r)", name), nil
	case "cause":
		if err := want(0, "no arguments"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		return "c = cause(r)", nil
	case "debug":
		if err := want(1, "a moment, like :debug 1.5s"); err != nil {
			return "", err
		}
		if err := needR(); err != nil {
			return "", err
		}
		return fmt.Sprintf("d = debug(r, at=%s)", quote(fields[0])), nil
	case "undo", "redo":
		if err := want(0, "no arguments"); err != nil {
			return "", err
		}
		if name == "undo" {
			return "", r.undo()
		}
		return "", r.redo()
	case "save":
		if err := want(1, "a file name, like :save session.star"); err != nil {
			return "", err
		}
		if err := r.Save(fields[0]); err != nil {
			return "", err
		}
		fmt.Fprintf(r.o.Out, "# wrote %s; seedfall script %s replays it\n", fields[0], fields[0])
		return "", nil
	}
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	msg := fmt.Sprintf("unknown command :%s", name)
	if s := starlark.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean :%s?)", s)
	}
	return "", fmt.Errorf("%s; :help lists them", msg)
}

// lastSeed is r's seed, for :run without one.
func (r *REPL) lastSeed() (uint64, bool) {
	v, err := r.evalQuiet("r.seed")
	if err != nil {
		return 0, false
	}
	i, ok := v.(sl.Int)
	if !ok {
		return 0, false
	}
	n, ok := i.Uint64()
	return n, ok
}

// evalQuiet evaluates an expression for the REPL's own use: nothing is
// printed or logged.
func (r *REPL) evalQuiet(src string) (sl.Value, error) {
	return sl.EvalOptions(FileOptions, r.thread, "<repl>", src, r.globals)
}

// sched lists r's schedule as seedfall faults does.
func (r *REPL) sched() error {
	fmt.Fprintln(r.o.Out, "# r.schedule")
	v, err := r.evalQuiet("r.schedule.to_json()")
	if err != nil {
		return fmt.Errorf(":sched: %v", err)
	}
	s, ok := sl.AsString(v)
	if !ok {
		return fmt.Errorf(":sched: r.schedule.to_json() gave a %s, not a string", v.Type())
	}
	sch, err := starlark.ListSchedule(s)
	if err != nil {
		return fmt.Errorf(":sched: reading r.schedule: %v", err)
	}
	head := fmt.Sprintf("seed %d, %s", sch.Seed, plural(len(sch.Faults), "fault"))
	if sch.Duration > 0 {
		head += fmt.Sprintf(", duration %v", sch.Duration)
	}
	if sch.ShrunkFrom > 0 {
		head += fmt.Sprintf(", shrunk from %d faults in %d runs", sch.ShrunkFrom, sch.ShrinkRuns)
	}
	fmt.Fprintln(r.o.Out, head)
	for i, f := range sch.Faults {
		fmt.Fprintf(r.o.Out, "  %-3d  %s\n", i+1, f)
	}
	for _, b := range sch.Branches {
		stream := b.Stream
		if stream == "" {
			stream = "every stream"
		}
		fmt.Fprintf(r.o.Out, "  branch at %v: %s re-keyed with key %d\n", b.At, stream, b.Key)
	}
	return nil
}

// help lists the commands and names, or describes one.
func (r *REPL) help(name string) error {
	out := r.o.Out
	onlyCmd := strings.HasPrefix(name, ":")
	name = strings.TrimPrefix(name, ":")
	if name == "" {
		fmt.Fprintln(out, "commands (each echoes the Starlark statement it stands for):")
		for _, c := range cmds {
			fmt.Fprintf(out, "  %-18s %s\n", strings.TrimSpace(":"+c.name+" "+c.args), c.help)
		}
		fmt.Fprintln(out, "builtins:")
		var names []string
		for _, n := range sortedNames(r.o.Env.Predeclared()) {
			names = append(names, n)
		}
		fmt.Fprintln(out, "  "+wrap(strings.Join(names, ", "), 76, "  "))
		fmt.Fprintln(out, "Tab completes names, attributes, keyword arguments and node names; _ is the last value; Ctrl-C stops a run; Ctrl-D leaves.")
		return nil
	}
	found := false
	if d, ok := builtinDocs[name]; ok && !onlyCmd {
		fmt.Fprintf(out, "%s\n  %s\n", d.sig, d.doc)
		found = true
	}
	for _, c := range cmds {
		if c.name == name {
			fmt.Fprintf(out, "%s\n  %s\n", strings.TrimSpace(":"+c.name+" "+c.args), c.help)
			found = true
		}
	}
	if found {
		return nil
	}
	v, ok := r.globals[name]
	if !ok {
		msg := fmt.Sprintf(":help: no command, builtin or global named %q", name)
		if s := starlark.Suggest(name, sortedNames(r.globals)); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return fmt.Errorf("%s", msg)
	}
	fmt.Fprintf(out, "%s: a %s\n", name, v.Type())
	if params := paramsOf(v); len(params) > 0 {
		fmt.Fprintf(out, "  %s(%s)\n", name, strings.Join(params, ", "))
	}
	if h, ok := v.(sl.HasAttrs); ok {
		if attrs := h.AttrNames(); len(attrs) > 0 {
			fmt.Fprintf(out, "  attributes: %s\n", strings.Join(attrs, ", "))
		}
	}
	return nil
}

// quote writes s as a Starlark string literal.
func quote(s string) string { return sl.String(s).String() }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// wrap breaks s at spaces to lines of about width, indenting continuations.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Split(s, " ") {
		if i > 0 {
			if n+1+len(w) > width {
				b.WriteString("\n" + indent)
				n = 0
			} else {
				b.WriteByte(' ')
				n++
			}
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
