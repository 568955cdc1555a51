package starlark

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.starlark.net/lib/json"
	sltime "go.starlark.net/lib/time"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/fsutil"
)

// Duration is a span of virtual time: go.starlark.net/lib/time's duration,
// so `time.second * 3`, `d + time.millisecond`, `d / time.second` (a float)
// and comparisons work, and str(d) is Go's "1.5s".
type Duration = sltime.Duration

// builtins are the predeclared names.
func (e *Env) builtins() sl.StringDict {
	args := make([]sl.Value, len(e.o.Args))
	for i, a := range e.o.Args {
		args[i] = sl.String(a)
	}
	argList := sl.NewList(args)
	argList.Freeze()
	d := sl.StringDict{
		"world":       sl.NewBuiltin("world", e.worldFn),
		"load_config": sl.NewBuiltin("load_config", e.loadConfig),
		"run":         sl.NewBuiltin("run", e.runFn),
		"replay":      sl.NewBuiltin("replay", e.replayFn),
		"load_run":    sl.NewBuiltin("load_run", e.loadRunFn),
		"branch":      sl.NewBuiltin("branch", e.branchFn),
		"shrink":      sl.NewBuiltin("shrink", e.shrinkFn),
		"cause":       sl.NewBuiltin("cause", e.causeFn),
		"debug":       sl.NewBuiltin("debug", e.debugFn),
		"fault":       sl.NewBuiltin("fault", faultFn),
		"schedule":    sl.NewBuiltin("schedule", e.scheduleFn),
		"duration":    sl.NewBuiltin("duration", durationFn),
		"read_file":   sl.NewBuiltin("read_file", e.readFile),
		"write_file":  sl.NewBuiltin("write_file", e.writeFile),
		"args":        argList,
		"json":        json.Module,
		"toml":        tomlModule,
		"time":        timeModule,
		"struct":      sl.NewBuiltin("struct", starlarkstruct.Make),
	}
	for name, mk := range more {
		d[name] = mk(e)
	}
	return d
}

// more are builtins other files of the package add from their init
// functions (explore.go), each made per Env.
var more = map[string]func(e *Env) sl.Value{}

// registerBuiltin adds a predeclared name to every Env; call it from an
// init function.
func registerBuiltin(name string, mk func(e *Env) sl.Value) { more[name] = mk }

// AddBuiltin adds a predeclared name, for builtins defined outside this
// package (explore). Call it before running any script.
func (e *Env) AddBuiltin(name string, v sl.Value) { e.predeclared[name] = v }

// timeModule is go.starlark.net/lib/time with now() fixed: scripts have no
// wall clock, so time.now() is the virtual clock's epoch, the time every
// program sees at virtual time 0.
var timeModule = func() *starlarkstruct.Module {
	m := &starlarkstruct.Module{Name: "time", Members: sl.StringDict{}}
	for k, v := range sltime.Module.Members {
		m.Members[k] = v
	}
	m.Members["now"] = sl.NewBuiltin("now", func(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
		if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 0); err != nil {
			return nil, err
		}
		return sltime.Time(virtualEpoch()), nil
	})
	m.Members["format_duration"] = sl.NewBuiltin("format_duration", func(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
		var d durationArg
		if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &d); err != nil {
			return nil, err
		}
		return sl.String(time.Duration(d).String()), nil
	})
	return m
}()

func virtualEpoch() time.Time { return time.Unix(0, engine.Epoch).UTC() }

// setClock makes time.now() deterministic on a thread.
func setClock(t *sl.Thread) {
	sltime.SetNow(t, func() (time.Time, error) { return virtualEpoch(), nil })
}

// durationArg unpacks a duration given as "1.5s", an int of nanoseconds, or
// a duration value.
type durationArg time.Duration

func (d *durationArg) Unpack(v sl.Value) error {
	switch x := v.(type) {
	case Duration:
		*d = durationArg(x)
	case sl.String:
		p, err := time.ParseDuration(string(x))
		if err != nil {
			return fmt.Errorf("%q is not a duration like \"1.5s\" or \"250ms\"", string(x))
		}
		*d = durationArg(p)
	case sl.Int:
		n, ok := x.Int64()
		if !ok {
			return fmt.Errorf("%v nanoseconds is out of range", x)
		}
		*d = durationArg(n)
	default:
		return fmt.Errorf("got %s, want a duration: a string like \"1.5s\", an int of nanoseconds, or time.second * N", v.Type())
	}
	return nil
}

// duration(x) is a duration from "1.5s", an int of nanoseconds or a duration.
func durationFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var d durationArg
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &d); err != nil {
		return nil, err
	}
	return Duration(d), nil
}

// tomlModule is toml.encode(dict) and toml.decode(text).
var tomlModule = &starlarkstruct.Module{Name: "toml", Members: sl.StringDict{
	"encode": sl.NewBuiltin("toml.encode", func(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
		var v sl.Value
		if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &v); err != nil {
			return nil, err
		}
		s, err := encodeTOML(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return sl.String(s), nil
	}),
	"decode": sl.NewBuiltin("toml.decode", func(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
		var s string
		if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &s); err != nil {
			return nil, err
		}
		v, err := decodeTOML(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", b.Name(), err)
		}
		return v, nil
	}),
}}

// read_file(path) returns a file's text; the path is relative to the
// script that names it.
func (e *Env) readFile(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(e.resolve(t, path))
	if err != nil {
		return nil, fmt.Errorf("read_file: cannot read %s: %v", path, unwrapPath(err))
	}
	return sl.String(data), nil
}

// write_file(path, text) writes a file, making its directory; the path is
// relative to the script that names it.
func (e *Env) writeFile(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path, text string
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "path", &path, "text", &text); err != nil {
		return nil, err
	}
	abs := e.resolve(t, path)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("write_file: %v", err)
	}
	if err := fsutil.WriteFile(abs, []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("write_file: cannot write %s: %v", path, unwrapPath(err))
	}
	return sl.None, nil
}
