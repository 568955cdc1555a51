package starlark

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/world"
)

// Fault is one fault as a Starlark value; its attributes are the schedule
// file's fields, with at, until and delay as durations.
type Fault struct{ F faults.Fault }

var (
	_ sl.HasAttrs   = (*Fault)(nil)
	_ sl.Comparable = (*Fault)(nil)
	_ jsonValue     = (*Fault)(nil)
)

func (f *Fault) String() string        { return "<fault " + faults.Describe(f.F) + ">" }
func (f *Fault) Type() string          { return "fault" }
func (f *Fault) Freeze()               {}
func (f *Fault) Truth() sl.Bool        { return sl.True }
func (f *Fault) JSON() ([]byte, error) { return f.F.MarshalJSON() }

// MarshalJSON makes json.encode(f) the schedule file's form.
func (f *Fault) MarshalJSON() ([]byte, error) { return f.JSON() }

// MarshalJSON makes json.encode(s) the schedule file.
func (s *Schedule) MarshalJSON() ([]byte, error) { return s.JSON() }
func (f *Fault) Hash() (uint32, error) {
	j, _ := f.JSON()
	return sl.String(j).Hash()
}

func (f *Fault) CompareSameType(op syntax.Token, y sl.Value, depth int) (bool, error) {
	a, _ := f.JSON()
	b, _ := y.(*Fault).JSON()
	switch op {
	case syntax.EQL:
		return string(a) == string(b), nil
	case syntax.NEQ:
		return string(a) != string(b), nil
	}
	return false, fmt.Errorf("faults are compared with == and != only")
}

// faultFields are the schedule file's fault fields, in its order.
var faultFields = faults.FieldNames()

func (f *Fault) AttrNames() []string {
	names := slices.Clone(faultFields)
	slices.Sort(names)
	return names
}

func (f *Fault) Attr(name string) (sl.Value, error) {
	x := f.F
	switch name {
	case "at":
		return Duration(x.At), nil
	case "until":
		return Duration(x.Until), nil
	case "delay":
		return Duration(x.Delay), nil
	case "kind":
		return sl.String(x.Kind), nil
	case "node":
		return sl.String(x.Node), nil
	case "from":
		return sl.String(x.From), nil
	case "to":
		return sl.String(x.To), nil
	case "dir":
		return sl.String(x.Dir), nil
	case "mode":
		return sl.String(x.Mode), nil
	case "path":
		return sl.String(x.Path), nil
	case "site":
		return sl.String(x.Site), nil
	case "side":
		return stringList(x.Side), nil
	case "groups":
		gs := make([]sl.Value, len(x.Groups))
		for i, g := range x.Groups {
			gs[i] = stringList(g)
		}
		return frozenList(gs), nil
	case "factor":
		return sl.Float(x.Factor), nil
	case "op":
		return sl.MakeUint64(x.Op), nil
	case "offset":
		return sl.MakeInt64(x.Offset), nil
	case "target":
		return sl.MakeInt64(x.Target), nil
	}
	return nil, nil
}

// fault(**kw) is a fault from the schedule file's fields:
// fault(at="1s", kind="crash", node="server", until="1.5s").
func faultFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	d, err := kwDict(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	f, err := toFault(d)
	if err != nil {
		return nil, fmt.Errorf("fault: %v", err)
	}
	return &Fault{f}, nil
}

// kwDict gathers f(dict) or f(**kw) into one dict.
func kwDict(fn string, args sl.Tuple, kwargs []sl.Tuple) (*sl.Dict, error) {
	d := sl.NewDict(len(kwargs))
	if len(args) > 1 {
		return nil, fmt.Errorf("%s: takes keyword arguments (or one dict), got %d positional arguments", fn, len(args))
	}
	if len(args) == 1 {
		m, ok := args[0].(sl.IterableMapping)
		if !ok {
			return nil, fmt.Errorf("%s: takes keyword arguments (or one dict), not a %s", fn, args[0].Type())
		}
		for _, kv := range m.Items() {
			d.SetKey(kv[0], kv[1])
		}
	}
	for _, kv := range kwargs {
		d.SetKey(kv[0], kv[1])
	}
	return d, nil
}

// toFault reads a fault value or a dict of its fields.
func toFault(v sl.Value) (faults.Fault, error) {
	if f, ok := v.(*Fault); ok {
		return f.F, nil
	}
	d, ok := v.(sl.IterableMapping)
	if !ok {
		return faults.Fault{}, fmt.Errorf("want a fault (from fault(...) or a schedule) or a dict of its fields, got a %s", v.Type())
	}
	for _, kv := range d.Items() {
		k, _ := sl.AsString(kv[0])
		if !slices.Contains(faultFields, k) {
			hint := ""
			if s := world.Suggest(k, faultFields); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return faults.Fault{}, fmt.Errorf("unknown field %q%s; a fault has %s", k, hint, strings.Join(faultFields, ", "))
		}
	}
	j, err := toJSON(d, "")
	if err != nil {
		return faults.Fault{}, err
	}
	var f faults.Fault
	if err := json.Unmarshal(j, &f); err != nil {
		return faults.Fault{}, fmt.Errorf("%v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, ok := faults.Lookup(f.Kind); !ok {
		hint := ""
		if s := world.Suggest(f.Kind, faults.Known()); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return faults.Fault{}, fmt.Errorf("unknown fault kind %q%s; this build knows %s", f.Kind, hint, strings.Join(faults.Known(), ", "))
	}
	return f, nil
}

// Schedule is a fault schedule as a Starlark value. A schedule that belongs
// to a world (a run's) checks its edits against it, by the rules of
// `seedfall faults`; one made by schedule() is checked when it runs.
type Schedule struct {
	S     *faults.Schedule
	check *faults.CheckConfig // nil: no world yet
	// parent is the run whose past the schedule keeps before forkAt
	// (ctx.branch_schedule, ctx.mutate): explore runs it in the parent's
	// world and may fork it from a checkpoint of the parent.
	parent *Run
	forkAt time.Duration
}

var (
	_ sl.HasAttrs   = (*Schedule)(nil)
	_ sl.Comparable = (*Schedule)(nil)
	_ jsonValue     = (*Schedule)(nil)
)

// NewSchedule wraps a schedule; w, when not nil, is the world its edits
// are checked against.
func NewSchedule(s *faults.Schedule, w *world.World) *Schedule {
	out := &Schedule{S: s}
	if w != nil {
		c := checkConfig(w)
		out.check = &c
	}
	return out
}

func checkConfig(w *world.World) faults.CheckConfig {
	c := faults.CheckConfig{Duration: w.Duration, PreemptPCT: w.Preempt.Strategy == world.StrategyPCT}
	for _, p := range w.Programs() {
		c.Programs = append(c.Programs, p.Name)
	}
	return c
}

func (s *Schedule) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<schedule seed %d, %s", s.S.Seed, countOf(len(s.S.Faults), "fault"))
	if len(s.S.Branches) > 0 {
		fmt.Fprintf(&b, ", %s", countOf(len(s.S.Branches), "branch"))
	}
	b.WriteString(">")
	return b.String()
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	if strings.HasSuffix(what, "ch") {
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (s *Schedule) Type() string   { return "schedule" }
func (s *Schedule) Freeze()        {}
func (s *Schedule) Truth() sl.Bool { return sl.True }
func (s *Schedule) JSON() ([]byte, error) {
	return s.S.MarshalJSON()
}
func (s *Schedule) Hash() (uint32, error) {
	j, _ := s.JSON()
	return sl.String(j).Hash()
}

func (s *Schedule) CompareSameType(op syntax.Token, y sl.Value, depth int) (bool, error) {
	a, _ := s.JSON()
	b, _ := y.(*Schedule).JSON()
	switch op {
	case syntax.EQL:
		return string(a) == string(b), nil
	case syntax.NEQ:
		return string(a) != string(b), nil
	}
	return false, fmt.Errorf("schedules are compared with == and != only")
}

func (s *Schedule) AttrNames() []string {
	return []string{"add", "branches", "duration", "faults", "remove", "save", "seed", "shift", "shrunk_from", "to_json"}
}

func (s *Schedule) Attr(name string) (sl.Value, error) {
	switch name {
	case "faults":
		return faultList(s.S.Faults), nil
	case "duration":
		return Duration(s.S.Duration), nil
	case "seed":
		return sl.MakeUint64(s.S.Seed), nil
	case "shrunk_from":
		return sl.MakeInt(s.S.ShrunkFrom), nil
	case "branches":
		l := make([]sl.Value, len(s.S.Branches))
		for i, br := range s.S.Branches {
			d := sl.NewDict(3)
			d.SetKey(sl.String("at"), Duration(br.At))
			d.SetKey(sl.String("key"), sl.MakeUint64(br.Key))
			d.SetKey(sl.String("stream"), sl.String(br.Stream))
			l[i] = d
		}
		v := sl.NewList(l)
		v.Freeze()
		return v, nil
	case "remove":
		return sl.NewBuiltin("remove", s.remove), nil
	case "shift":
		return sl.NewBuiltin("shift", s.shift), nil
	case "add":
		return sl.NewBuiltin("add", s.add), nil
	case "to_json":
		return sl.NewBuiltin("to_json", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 0); err != nil {
				return nil, err
			}
			j, err := s.JSON()
			return sl.String(j), err
		}), nil
	case "save":
		return sl.NewBuiltin("save", s.save), nil
	}
	return nil, nil
}

// edit applies edits and checks the result like `seedfall faults` does.
func (s *Schedule) edit(fn string, e faults.Edits) (sl.Value, error) {
	out, err := faults.Edit(s.S, e)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", fn, flagless(err.Error()))
	}
	if s.check != nil {
		if err := faults.Check(out, *s.check); err != nil {
			return nil, fmt.Errorf("%s: %s", fn, brokenRules(err))
		}
	}
	return &Schedule{S: out, check: s.check}, nil
}

// flagless turns the CLI's "-remove 5: ..." into "remove 5: ...".
func flagless(msg string) string {
	for _, f := range []string{"-remove ", "-shift "} {
		msg = strings.ReplaceAll(msg, f, f[1:])
	}
	return msg
}

// brokenRules formats faults.Check's errors as `seedfall faults` does.
func brokenRules(err error) string {
	msg := err.Error()
	if n := strings.Count(msg, "\n") + 1; n > 1 {
		return fmt.Sprintf("%d rules broken:\n  %s", n, strings.ReplaceAll(msg, "\n", "\n  "))
	}
	return msg
}

// remove(i, ...) drops the faults at positions i (from 1, as listed).
func (s *Schedule) remove(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if len(kwargs) > 0 || len(args) == 0 {
		return nil, fmt.Errorf("remove: give the positions of the faults to remove, counting from 1: s.remove(2)")
	}
	var e faults.Edits
	for _, a := range args {
		i, err := sl.AsInt32(a)
		if err != nil {
			return nil, fmt.Errorf("remove: %s is not a position (positions are ints counting from 1)", a)
		}
		e.Remove = append(e.Remove, i)
	}
	return s.edit("remove", e)
}

// shift(i, by) moves fault i: a timed fault by a duration ("-50ms",
// -time.millisecond*50), one that fires at an operation by an int count.
func (s *Schedule) shift(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var pos int
	var by sl.Value
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "i", &pos, "by", &by); err != nil {
		return nil, err
	}
	sh := faults.Shift{Pos: pos}
	switch x := by.(type) {
	case sl.Int:
		n, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("shift: count %v is out of range", x)
		}
		sh.Ops, sh.Count, sh.Text = n, true, fmt.Sprintf("%d=%+d", pos, n)
	case sl.String:
		p, err := faults.ParseShift(fmt.Sprintf("%d=%s", pos, string(x)))
		if err != nil {
			return nil, fmt.Errorf("shift: %s", flagless(err.Error()))
		}
		sh = p
	case Duration:
		sh.Dur, sh.Text = time.Duration(x), fmt.Sprintf("%d=%v", pos, time.Duration(x))
	default:
		return nil, fmt.Errorf("shift: by is a %s; give a duration (\"-50ms\") for a timed fault or an int count (2) for one at an operation", by.Type())
	}
	if sh.Pos < 1 {
		return nil, fmt.Errorf("shift: positions count from 1, as listed")
	}
	return s.edit("shift", faults.Edits{Shift: []faults.Shift{sh}})
}

// add(f, ...) adds faults (fault values or dicts of their fields).
func (s *Schedule) add(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var e faults.Edits
	if len(args) == 0 && len(kwargs) > 0 {
		d, _ := kwDict("add", nil, kwargs)
		args = sl.Tuple{d}
	} else if len(kwargs) > 0 {
		return nil, fmt.Errorf("add: give faults, or one fault's fields as keywords, not both")
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("add: give a fault: s.add(fault(at=\"1s\", kind=\"crash\", node=\"n1\", until=\"2s\"))")
	}
	for i, a := range args {
		f, err := toFault(a)
		if err != nil {
			return nil, fmt.Errorf("add: argument %d: %v", i+1, err)
		}
		e.Add = append(e.Add, f)
	}
	return s.edit("add", e)
}

// save(path) writes the schedule file, for `seedfall replay -faults`.
func (s *Schedule) save(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &path); err != nil {
		return nil, err
	}
	env, _ := t.Local(localEnv).(*Env)
	abs := path
	if env != nil {
		abs = env.resolve(t, path)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("save: %v", err)
	}
	if err := s.S.Save(abs); err != nil {
		return nil, fmt.Errorf("save: %v", err)
	}
	return sl.None, nil
}

// scheduleFn is schedule(**kw): a schedule from the schedule file's keys
// (seed, duration, faults, branches).
func (e *Env) scheduleFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	d, err := kwDict(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	s, err := toSchedule(d)
	if err != nil {
		return nil, fmt.Errorf("schedule: %v", err)
	}
	return &Schedule{S: s}, nil
}

var scheduleFields = []string{"seed", "config", "duration", "shrunk_from", "shrink_runs", "branches", "faults"}

// toSchedule reads a schedule value or a dict of the schedule file's keys.
func toSchedule(v sl.Value) (*faults.Schedule, error) {
	if s, ok := v.(*Schedule); ok {
		return s.S, nil
	}
	d, ok := v.(sl.IterableMapping)
	if !ok {
		return nil, fmt.Errorf("want a schedule or a dict of its keys, got a %s", v.Type())
	}
	norm := sl.NewDict(len(d.Items()))
	for _, kv := range d.Items() {
		k, _ := sl.AsString(kv[0])
		if !slices.Contains(scheduleFields, k) {
			hint := ""
			if s := world.Suggest(k, scheduleFields); s != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, fmt.Errorf("unknown key %q%s; a schedule has %s", k, hint, strings.Join(scheduleFields, ", "))
		}
		val := kv[1]
		if k == "faults" {
			// Check each fault as fault() would, for its message.
			seq, ok := val.(sl.Indexable)
			if !ok {
				return nil, fmt.Errorf("faults: want a list of faults, got a %s", val.Type())
			}
			for i := 0; i < seq.Len(); i++ {
				if _, err := toFault(seq.Index(i)); err != nil {
					return nil, fmt.Errorf("faults[%d]: %v", i, err)
				}
			}
		}
		norm.SetKey(kv[0], val)
	}
	if _, ok, _ := norm.Get(sl.String("faults")); !ok {
		norm.SetKey(sl.String("faults"), sl.NewList(nil))
	}
	if _, ok, _ := norm.Get(sl.String("duration")); !ok {
		norm.SetKey(sl.String("duration"), sl.String("0s"))
	}
	j, err := toJSON(norm, "")
	if err != nil {
		return nil, err
	}
	var s faults.Schedule
	if err := json.Unmarshal(j, &s); err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return &s, nil
}

// checkAgainst checks a schedule against the world it is about to run in.
func checkAgainst(s *faults.Schedule, w *world.World) error {
	if err := faults.Check(s, checkConfig(w)); err != nil {
		return fmt.Errorf("the schedule does not fit the world: %s", brokenRules(err))
	}
	return nil
}
