package starlark

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sl "go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/seedfall/seedfall/engine/world"
)

// World is a world as a Starlark value: frozen, hashable and equal by
// content (the resolved world), its attributes the world file's keys with
// every default applied.
type World struct {
	spec *sl.Dict // the world file's object as written: what replace merges into
	file string   // names the world in errors: the script or the world file
	dir  string   // relative paths resolve against it, absolute
	line int      // the line of the call that made it, for errors found later
	w    *world.World
	key  string   // the resolved world with absolute paths: its identity
	res  *sl.Dict // the resolved world as Starlark values, for attributes
	hash uint32
}

var (
	_ sl.HasAttrs   = (*World)(nil)
	_ sl.Comparable = (*World)(nil)
	_ jsonValue     = (*World)(nil)
)

// World returns the engine's parsed world.
func (w *World) World() *world.World { return w.w }

func (w *World) String() string {
	names := make([]string, 0, len(w.w.Nodes))
	for _, p := range w.w.Programs() {
		names = append(names, p.Name)
	}
	return fmt.Sprintf("<world %s: %s>", filepath.Base(w.w.File), strings.Join(names, ", "))
}
func (w *World) Type() string          { return "world" }
func (w *World) Freeze()               {}
func (w *World) Truth() sl.Bool        { return sl.True }
func (w *World) Hash() (uint32, error) { return w.hash, nil }

func (w *World) CompareSameType(op syntax.Token, y sl.Value, depth int) (bool, error) {
	o := y.(*World)
	switch op {
	case syntax.EQL:
		return w.key == o.key, nil
	case syntax.NEQ:
		return w.key != o.key, nil
	}
	return false, fmt.Errorf("worlds are compared with == and != only")
}

// JSON is the resolved world with paths relative to its directory: what
// `seedfall config` prints, and what load_config reads back from a file in
// that directory.
func (w *World) JSON() ([]byte, error) { return w.w.Resolved(false) }

// MarshalJSON makes json.encode(w) the resolved world.
func (w *World) MarshalJSON() ([]byte, error) { return w.JSON() }

// specJSON is the world's object as written.
func (w *World) specJSON() ([]byte, error) { return toJSON(w.spec, "") }

var worldMethods = []string{"replace", "to_json", "to_toml"}

func (w *World) AttrNames() []string {
	var names []string
	for _, k := range w.res.Keys() {
		s := string(k.(sl.String))
		if s == "finally" {
			s = "finally_"
		}
		names = append(names, s)
	}
	names = append(names, worldMethods...)
	sort.Strings(names)
	return names
}

func (w *World) Attr(name string) (sl.Value, error) {
	switch name {
	case "replace":
		return sl.NewBuiltin("replace", w.replace), nil
	case "to_json":
		return sl.NewBuiltin("to_json", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			absolute := false
			if err := sl.UnpackArgs(b.Name(), args, kw, "absolute?", &absolute); err != nil {
				return nil, err
			}
			j, err := w.w.Resolved(absolute)
			return sl.String(j), err
		}), nil
	case "to_toml":
		return sl.NewBuiltin("to_toml", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			absolute := false
			if err := sl.UnpackArgs(b.Name(), args, kw, "absolute?", &absolute); err != nil {
				return nil, err
			}
			j, err := w.w.Resolved(absolute)
			if err != nil {
				return nil, err
			}
			t, err := world.JSONToTOML(j, "world.json")
			return sl.String(t), err
		}), nil
	}
	key := keyName(name)
	v, found, _ := w.res.Get(sl.String(key))
	if !found {
		return nil, nil // starlark says "world has no .x field or method"
	}
	return v, nil
}

// keyName maps a keyword or attribute to a world file key: finally_ is
// "finally", which Starlark reserves.
func keyName(name string) string {
	if name == "finally_" {
		return "finally"
	}
	return name
}

// newWorld parses a world file object. file, line and col say where the
// world was written, for errors; dir is where relative paths resolve.
func newWorld(spec *sl.Dict, file string, line, col int, dir string) (*World, error) {
	data, err := toJSON(spec, "")
	if err != nil {
		return nil, err
	}
	w, err := world.Parse(padLines(data, line), file, dir)
	if err != nil {
		return nil, located(err, file, line, col)
	}
	return wrapWorld(spec, w, file, line)
}

// wrapWorld makes the value of a parsed world.
func wrapWorld(spec *sl.Dict, w *world.World, file string, line int) (*World, error) {
	key, err := w.Resolved(true)
	if err != nil {
		return nil, err
	}
	rel, err := w.Resolved(false)
	if err != nil {
		return nil, err
	}
	res, err := fromJSON(rel)
	if err != nil {
		return nil, err
	}
	spec.Freeze()
	sum := sha256.Sum256(key)
	return &World{spec: spec, file: file, dir: w.Dir, line: line, w: w, key: string(key), res: res.(*sl.Dict),
		hash: binary.LittleEndian.Uint32(sum[:4])}, nil
}

// padLines puts the JSON on the line of the call that made the world, so
// that errors the engine finds later (a package that does not build) name
// that line of the script.
func padLines(data []byte, line int) []byte {
	if line <= 1 {
		return data
	}
	return append(bytes.Repeat([]byte("\n"), line-1), data...)
}

// located rewrites a world error found in a world made by a script: the
// script's file:line:col of the call, then the key path and the message.
func located(err error, file string, line, col int) error {
	var we *world.Error
	if !errors.As(err, &we) || we.File != file {
		return err // in a file the world extends: its own place is right
	}
	msg := we.Msg
	if we.Path != "" {
		msg = we.Path + ": " + msg
	}
	return &locatedError{fmt.Sprintf("%s:%d:%d: %s", file, line, col, msg)}
}

// locatedError is a world error that names the script's file:line:col; it
// goes to the user without the builtin's name in front.
type locatedError struct{ msg string }

func (e *locatedError) Error() string { return e.msg }

// prefixed puts the builtin's name before an error that has no place.
func prefixed(fn string, err error) error {
	var le *locatedError
	if errors.As(err, &le) {
		return err
	}
	return fmt.Errorf("%s: %w", fn, err)
}

// caller is where the code calling a builtin is written.
func caller(t *sl.Thread) (file string, line, col int) {
	if t.CallStackDepth() < 2 {
		return "<script>", 0, 0
	}
	p := t.CallFrame(1).Pos
	return p.Filename(), int(p.Line), int(p.Col)
}

// worldFn is world(**kw): a world from the world file's keys.
func (e *Env) worldFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	spec := sl.NewDict(len(kwargs))
	for _, a := range args {
		// world(dict) reads like world(**dict); take it, so a decoded
		// JSON object can be passed either way.
		m, ok := a.(sl.IterableMapping)
		if !ok {
			return nil, fmt.Errorf("world: takes the world file's keys as keyword arguments, like world(nodes=[...]), not a %s", a.Type())
		}
		for _, kv := range m.Items() {
			k, ok := sl.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("world: key %s is not a string", kv[0])
			}
			spec.SetKey(sl.String(keyName(k)), kv[1])
		}
	}
	for _, kv := range kwargs {
		spec.SetKey(sl.String(keyName(string(kv[0].(sl.String)))), kv[1])
	}
	file, line, col := caller(t)
	w, err := newWorld(spec, file, line, col, e.dir(t))
	if err != nil {
		return nil, prefixed("world", err)
	}
	return w, nil
}

// replace returns the world with changes merged over it as a world file
// merges over the one it extends: objects key by key, anything else
// (lists included) replaced.
func (w *World) replace(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("replace: takes keyword arguments only, like w.replace(duration=\"5s\")")
	}
	over := sl.NewDict(len(kwargs))
	for _, kv := range kwargs {
		over.SetKey(sl.String(keyName(string(kv[0].(sl.String)))), kv[1])
	}
	merged := mergeDicts(w.spec, over)
	file, line, col := caller(t)
	nw, err := newWorld(merged, file, line, col, w.dir)
	if err != nil {
		return nil, prefixed("replace", err)
	}
	return nw, nil
}

// mergeDicts merges over into base: objects key by key, base's keys first.
func mergeDicts(base, over *sl.Dict) *sl.Dict {
	out := sl.NewDict(base.Len() + over.Len())
	for _, kv := range base.Items() {
		v := kv[1]
		if ov, ok, _ := over.Get(kv[0]); ok {
			bd, bok := v.(*sl.Dict)
			od, ook := ov.(*sl.Dict)
			if bok && ook {
				v = mergeDicts(bd, od)
			} else {
				v = ov
			}
		}
		out.SetKey(kv[0], v)
	}
	for _, kv := range over.Items() {
		if _, ok, _ := base.Get(kv[0]); !ok {
			out.SetKey(kv[0], kv[1])
		}
	}
	return out
}

// loadConfig is load_config(path): a JSON or TOML world file.
func (e *Env) loadConfig(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &path); err != nil {
		return nil, err
	}
	abs := e.resolve(t, path)
	w, err := world.Load(abs)
	if err != nil {
		var we *world.Error
		if errors.As(err, &we) && we.File == abs {
			we2 := *we
			we2.File = path // name the file as the script does
			err = &we2
		}
		return nil, fmt.Errorf("load_config: %w", err)
	}
	w.File = path
	spec, err := configSpec(abs, w)
	if err != nil {
		return nil, fmt.Errorf("load_config: %s: %v", path, err)
	}
	return wrapWorld(spec, w, path, 0)
}

// configSpec is a world file's object as written, so replace merges into
// what the user wrote (a preset stays a preset). A file the decoder
// cannot read gives its resolved form.
func configSpec(abs string, w *world.World) (*sl.Dict, error) {
	if data, err := os.ReadFile(abs); err == nil {
		if strings.EqualFold(filepath.Ext(abs), ".toml") {
			data, err = world.TOMLToJSON(data, abs)
		}
		if err == nil {
			if v, err := fromJSON(data); err == nil {
				if d, ok := v.(*sl.Dict); ok {
					return thaw(d), nil
				}
			}
		}
	}
	j, err := w.Resolved(true)
	if err != nil {
		return nil, err
	}
	v, err := fromJSON(j)
	if err != nil {
		return nil, err
	}
	return thaw(v.(*sl.Dict)), nil
}

// thaw copies a frozen dict's top level, so it can be merged into; the
// values inside stay shared and frozen.
func thaw(d *sl.Dict) *sl.Dict {
	out := sl.NewDict(d.Len())
	for _, kv := range d.Items() {
		out.SetKey(kv[0], kv[1])
	}
	return out
}

// encodeTOML writes a Starlark dict as TOML, keys in order (tables after
// the other keys, as TOML requires).
func encodeTOML(v sl.Value) (string, error) {
	if _, ok := v.(sl.IterableMapping); !ok {
		return "", fmt.Errorf("a TOML document is a dict, not a %s", v.Type())
	}
	j, err := toJSON(v, "")
	if err != nil {
		return "", err
	}
	t, err := world.JSONToTOML(j, "value")
	if err != nil {
		return "", err
	}
	return string(t), nil
}

// decodeTOML reads TOML into dicts that keep the order keys are written in.
func decodeTOML(s string) (sl.Value, error) {
	j, err := world.TOMLToJSON([]byte(s), "toml")
	if err != nil {
		return nil, err
	}
	return fromJSON(j)
}
