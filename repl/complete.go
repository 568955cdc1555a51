package repl

import (
	"slices"
	"sort"
	"strings"
	"unicode"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/starlark"
)

// builtinDoc is a builtin's signature, one line on what it does, and the
// parameters tab offers as keyword arguments.
type builtinDoc struct {
	sig, doc string
	params   []string
}

// worldKeys are the world's JSON keys, world()'s keyword arguments
// (finally_ for finally, which Starlark reserves).
var worldKeys = func() []string {
	var keys []string
	for _, f := range starlark.WorldFields() {
		k := f[:strings.IndexAny(f+".", ".[")]
		if k == "finally" {
			k = "finally_"
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}()

var faultFields = starlark.FaultFields()

// builtinDocs covers the workbench's builtins and the methods whose
// keywords are worth completing; a bound method is keyed type.name.
var builtinDocs = map[string]builtinDoc{
	"world":       {"world(**kw)", "a world from the JSON keys as keyword arguments (finally_ for finally); frozen", worldKeys},
	"load_config": {"load_config(path)", "the world in a .json, .toml or .star file", []string{"path"}},
	"run":         {"run(w, seed=1, schedule=None)", "run world w under seed, with its own faults or a schedule's", []string{"w", "seed", "schedule"}},
	"replay":      {"replay(r, schedule=None)", "run r's world and seed again, with r's schedule or another", []string{"r", "schedule"}},
	"load_run":    {"load_run(path)", "a run saved with r.save(path)", []string{"path"}},
	"branch":      {"branch(r, stream=None, at=..., key=1)", "replay r with a random stream (or every stream) re-keyed from a moment on", []string{"r", "stream", "at", "key"}},
	"shrink":      {"shrink(r, budget=\"1m\", parallel=None)", "the smallest schedule that still fails as r did, as a run", []string{"r", "budget", "parallel"}},
	"cause":       {"cause(r, moments=16, branches=8, parallel=None, all=False, checkpoints=False)", "when r's failure became inevitable: .after, .inevitable, .faults and .events between them, .moments tried", []string{"r", "moments", "branches", "parallel", "all", "checkpoints"}},
	"debug":       {"debug(r, at)", "the world at a moment of r: .programs (each with .what, .conns, .pending), .partition, .clogs, .faults so far, .ended", []string{"r", "at"}},
	"fault":       {"fault(**kw)", "a fault from its JSON fields (at, kind, node, until, ...)", faultFields},
	"schedule":    {"schedule(**kw)", "a schedule from its JSON fields (seed, duration, faults, branches)", []string{"seed", "duration", "faults", "branches"}},
	"explore":     {"explore(w, strategy=..., seeds=..., budget=..., parallel=...)", "run a search strategy over world w and return what it found", []string{"w", "strategy", "seeds", "budget", "parallel"}},
	"duration":    {"duration(s)", "a duration from a string like \"1.5s\"", []string{"s"}},

	"schedule.remove": {"schedule.remove(i, ...)", "the schedule without the faults at positions i (from 1)", nil},
	"schedule.shift":  {"schedule.shift(i, by)", "the schedule with fault i moved by a duration or an operation count", []string{"i", "by"}},
	"schedule.add":    {"schedule.add(f, ...)", "the schedule with faults added (fault values, or one fault's fields as keywords)", faultFields},
	"run.logs":        {"run.logs(node=None)", "the run's log lines, of one node or all", []string{"node"}},
	"run.save":        {"run.save(path)", "write the run's world, seed and schedule to path", []string{"path"}},
	"world.replace":   {"world.replace(**kw)", "a copy of the world with keys changed", worldKeys},
}

// paramsOf returns the parameter names a callable takes by keyword.
func paramsOf(v sl.Value) []string {
	switch f := v.(type) {
	case interface{ ParamNames() []string }:
		return f.ParamNames()
	case *sl.Function:
		n := f.NumParams()
		if f.HasKwargs() {
			n--
		}
		if f.HasVarargs() {
			n--
		}
		var out []string
		for i := 0; i < n; i++ {
			name, _ := f.Param(i)
			out = append(out, name)
		}
		return out
	case *sl.Builtin:
		key := f.Name()
		if recv := f.Receiver(); recv != nil {
			key = recv.Type() + "." + key
		}
		return builtinDocs[key].params
	}
	return nil
}

// paramsOfName returns the keyword parameters of the callable a dotted
// name refers to; a method's are looked up by its receiver's type.
func (r *REPL) paramsOfName(dotted string) []string {
	v, ok := r.lookup(dotted)
	if !ok {
		return nil
	}
	if dot := strings.LastIndexByte(dotted, '.'); dot >= 0 {
		if b, ok := v.(*sl.Builtin); ok && b.Receiver() == nil {
			if recv, ok := r.lookup(dotted[:dot]); ok {
				return builtinDocs[recv.Type()+"."+dotted[dot+1:]].params
			}
		}
	}
	return paramsOf(v)
}

// Complete is liner's word completer: names, attributes after '.',
// keyword arguments inside a call, node names inside a string, and ':'
// commands. pos counts runes.
func (r *REPL) Complete(line string, pos int) (head string, completions []string, tail string) {
	rs := []rune(line)
	if pos > len(rs) {
		pos = len(rs)
	}
	left, tail := string(rs[:pos]), string(rs[pos:])

	if t := strings.TrimLeft(left, " "); strings.HasPrefix(t, ":") {
		return r.completeCommand(left), r.commandCandidates(left), tail
	}

	ctx := scan(left)
	if ctx.comment {
		return left, nil, tail
	}
	if ctx.inString {
		prefix := left[ctx.stringStart:]
		quote := left[ctx.stringStart-1 : ctx.stringStart]
		for _, n := range withPrefix(r.nodeNames(), prefix) {
			if !strings.HasPrefix(tail, quote) {
				n += quote
			}
			completions = append(completions, n)
		}
		return left[:ctx.stringStart], completions, tail
	}

	start := len(left)
	for start > 0 {
		c := rune(left[start-1])
		if c != '.' && c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			break
		}
		start--
	}
	token := left[start:]
	head = left[:start]
	if dot := strings.LastIndexByte(token, '.'); dot >= 0 {
		base, prefix := token[:dot], token[dot+1:]
		v, ok := r.lookup(base)
		if !ok {
			return head, nil, tail
		}
		h, ok := v.(sl.HasAttrs)
		if !ok {
			return head, nil, tail
		}
		for _, name := range withPrefix(h.AttrNames(), prefix) {
			completions = append(completions, base+"."+name)
		}
		return head, completions, tail
	}
	if ctx.call >= 0 {
		for _, p := range withPrefix(r.paramsOfName(calleeBefore(left[:ctx.call])), token) {
			completions = append(completions, p+"=")
		}
	}
	completions = append(completions, withPrefix(sortedNames(r.globals), token)...)
	return head, completions, tail
}

// completeCommand returns what comes before the word being completed in a
// ':' command line.
func (r *REPL) completeCommand(left string) string {
	if i := strings.LastIndexByte(left, ' '); i >= 0 && strings.Contains(strings.TrimLeft(left, " "), " ") {
		return left[:i+1]
	}
	return left[:strings.IndexByte(left, ':')+1]
}

func (r *REPL) commandCandidates(left string) []string {
	t := strings.TrimLeft(left, " ")[1:]
	name, arg, hasArg := strings.Cut(t, " ")
	if !hasArg {
		var out []string
		for _, c := range cmds {
			if strings.HasPrefix(c.name, name) {
				out = append(out, c.name)
			}
		}
		return out
	}
	if strings.Contains(strings.TrimLeft(arg, " "), " ") {
		return nil
	}
	word := strings.TrimLeft(arg, " ")
	switch name {
	case "help":
		var names []string
		for _, c := range cmds {
			names = append(names, ":"+c.name)
		}
		names = append(names, sortedNames(r.o.Env.Predeclared())...)
		return withPrefix(names, word)
	case "branch":
		return withPrefix(append([]string{"all"}, starlark.BranchStreams()...), word)
	}
	return nil
}

// lookup resolves a dotted name (a.b.c) through globals and attributes;
// nothing is called, so completing never runs a simulation.
func (r *REPL) lookup(dotted string) (sl.Value, bool) {
	parts := strings.Split(dotted, ".")
	v, ok := r.globals[parts[0]]
	if !ok || parts[0] == "" {
		return nil, false
	}
	for _, p := range parts[1:] {
		h, ok := v.(sl.HasAttrs)
		if !ok {
			return nil, false
		}
		next, err := h.Attr(p)
		if err != nil || next == nil {
			return nil, false
		}
		v = next
	}
	return v, true
}

// nodeNames are the program names of the world in w.
func (r *REPL) nodeNames() []string {
	w, ok := r.globals["w"]
	if !ok {
		return nil
	}
	// The workbench's world value may carry the resolved world.
	if names, ok := starlark.ProgramNames(w); ok {
		sort.Strings(names)
		return names
	}
	h, ok := w.(sl.HasAttrs)
	if !ok {
		return nil
	}
	var names []string
	for _, key := range []string{"nodes", "workload", "workloads", "finally"} {
		v, err := h.Attr(key)
		if err != nil || v == nil {
			continue
		}
		if it, ok := v.(sl.Iterable); ok && !isMapping(v) {
			iter := it.Iterate()
			var x sl.Value
			for iter.Next(&x) {
				if n := nameOf(x); n != "" {
					names = append(names, n)
				}
			}
			iter.Done()
		} else if n := nameOf(v); n != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func isMapping(v sl.Value) bool {
	_, ok := v.(sl.IterableMapping)
	return ok
}

// nameOf reads a program's "name", from a dict or an attribute.
func nameOf(v sl.Value) string {
	var name sl.Value
	switch p := v.(type) {
	case sl.Mapping:
		name, _, _ = p.Get(sl.String("name"))
	case sl.HasAttrs:
		name, _ = p.Attr("name")
	}
	if s, ok := sl.AsString(name); ok && name != nil {
		return s
	}
	return ""
}

// context is where the end of a line is: in a string, a comment, a call.
type context struct {
	inString    bool
	stringStart int // byte offset just after the opening quote
	comment     bool
	call        int // byte offset of the innermost open '(', or -1
}

// scan reads a line left to right, tracking strings and open brackets.
func scan(s string) context {
	var quote byte
	var opens []int
	var ctx context
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			switch c {
			case '\\':
				i++
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			quote = c
			ctx.stringStart = i + 1
		case '#':
			ctx.comment = true
			return ctx
		case '(', '[', '{':
			opens = append(opens, i)
		case ')', ']', '}':
			if len(opens) > 0 {
				opens = opens[:len(opens)-1]
			}
		}
	}
	ctx.inString = quote != 0
	ctx.call = -1
	if n := len(opens); n > 0 && s[opens[n-1]] == '(' {
		ctx.call = opens[n-1]
	}
	return ctx
}

// calleeBefore returns the dotted name that ends s: the callee of a '('.
func calleeBefore(s string) string {
	s = strings.TrimRight(s, " ")
	i := len(s)
	for i > 0 {
		c := rune(s[i-1])
		if c != '.' && c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			break
		}
		i--
	}
	return s[i:]
}

func withPrefix(names []string, prefix string) []string {
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
