package faults

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/world"
)

// Schedule files are read as world files are (engine/world/parse.go): into
// a tree of values that keep their place in the file, then decoded field by
// field, so that every error names the file, the line and the field path,
// and says what to write instead. No Go type name reaches the user.

// Error is a problem in a schedule file, located by file, line and field
// path, such as "faults[3].at".
type Error struct {
	File string // the schedule file as given; empty when decoding bytes
	Line int    // 1-based; 0 when unknown, and not shown without a file
	Path string
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

type jkind uint8

const (
	jNull jkind = iota
	jBool
	jNumber
	jString
	jObject
	jArray
)

var jkinds = map[string]jkind{"null": jNull, "bool": jBool, "number": jNumber, "string": jString, "object": jObject, "array": jArray}

// jvalue is one JSON value and the line it starts on.
type jvalue struct {
	kind    jkind
	line    int
	b       bool
	str     string // a string's contents, or a number's text
	members []jmember
	elems   []*jvalue
	desc    string // what it is, for "want X, got Y" messages
}

type jmember struct {
	key  string
	line int
	val  *jvalue
}

// jsource is the schedule file errors name.
type jsource struct {
	file string
	data []byte
}

func newJSource(file string, data []byte) *jsource { return &jsource{file: file, data: data} }

func (s *jsource) err(line int, path, format string, args ...any) *Error {
	return &Error{File: s.file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// parse reads the file with the world file's parser (its syntax messages
// and nesting limit included) into a tree of values that know their lines.
func (s *jsource) parse() (*jvalue, error) {
	v, err := world.ParseJSON(s.file, s.data, `want a schedule such as {"seed": 1, "duration": "10s", "faults": []}`)
	var we *world.Error
	if errors.As(err, &we) {
		return nil, s.err(we.Line, we.Path, "%s", we.Msg)
	}
	if err != nil {
		return nil, err
	}
	return fromWorld(v), nil
}

func fromWorld(v *world.JSONValue) *jvalue {
	out := &jvalue{kind: jkinds[v.Kind], line: v.Line, b: v.Bool, str: v.Str, desc: v.Describe}
	for _, m := range v.Members {
		out.members = append(out.members, jmember{key: m.Key, line: m.Line, val: fromWorld(m.Val)})
	}
	for _, e := range v.Elems {
		out.elems = append(out.elems, fromWorld(e))
	}
	return out
}

func (v *jvalue) describe() string { return v.desc }

// jdecoder decodes a schedule's tree, failing on the first problem in file
// order.
type jdecoder struct{ src *jsource }

func (d *jdecoder) want(v *jvalue, path, what string) error {
	return d.src.err(v.line, path, "want %s, got %s", what, v.describe())
}

// object checks that v is an object of known, unrepeated keys.
func (d *jdecoder) object(v *jvalue, path, what string, known []string) ([]jmember, error) {
	if v.kind != jObject {
		return nil, d.want(v, path, what)
	}
	seen := make(map[string]int, len(v.members)) // key: line; linear in the members, however many
	for _, m := range v.members {
		if line, ok := seen[m.key]; ok {
			return nil, d.src.err(m.line, join(path, m.key), "set twice; it is already set on line %d", line)
		}
		seen[m.key] = m.line
		if slices.Contains(known, m.key) {
			continue
		}
		msg := "unknown field"
		if s := world.Suggest(m.key, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += "; valid fields are " + strings.Join(known, ", ")
		}
		return nil, d.src.err(m.line, join(path, m.key), "%s", msg)
	}
	return v.members, nil
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func (d *jdecoder) str(v *jvalue, path string) (string, error) {
	if v.kind != jString {
		return "", d.want(v, path, "a string")
	}
	return v.str, nil
}

func (d *jdecoder) strs(v *jvalue, path string) ([]string, error) {
	if v.kind != jArray {
		return nil, d.want(v, path, `a list of node names such as ["n1", "n2"]`)
	}
	out := make([]string, 0, len(v.elems))
	for i, e := range v.elems {
		s, err := d.str(e, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *jdecoder) dur(v *jvalue, path string) (time.Duration, error) {
	if v.kind != jString {
		return 0, d.want(v, path, `a duration such as "250ms"`)
	}
	if v.str == "" {
		return 0, nil
	}
	t, err := time.ParseDuration(v.str)
	if err != nil {
		return 0, d.want(v, path, `a duration such as "250ms" or "2s"`)
	}
	return t, nil
}

func (d *jdecoder) number(v *jvalue, path, what string) (float64, error) {
	if v.kind != jNumber {
		return 0, d.want(v, path, what)
	}
	f, err := strconv.ParseFloat(v.str, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, d.src.err(v.line, path, "number %s is out of range", v.str)
	}
	return f, nil
}

func (d *jdecoder) uint(v *jvalue, path, what string) (uint64, error) {
	if v.kind != jNumber {
		return 0, d.want(v, path, what)
	}
	n, err := strconv.ParseUint(v.str, 10, 64)
	if err != nil {
		return 0, d.want(v, path, what)
	}
	return n, nil
}

func (d *jdecoder) int(v *jvalue, path, what string) (int64, error) {
	if v.kind != jNumber {
		return 0, d.want(v, path, what)
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil {
		return 0, d.want(v, path, what)
	}
	return n, nil
}

var scheduleFields = []string{"seed", "config", "duration", "shrunk_from", "shrink_runs", "branches", "faults"}

// schedule decodes a whole schedule file.
func (d *jdecoder) schedule(v *jvalue) (*Schedule, error) {
	ms, err := d.object(v, "", `a schedule such as {"seed": 1, "duration": "10s", "faults": []}`, scheduleFields)
	if err != nil {
		return nil, err
	}
	s := &Schedule{}
	for _, m := range ms {
		p, x := m.key, m.val
		switch m.key {
		case "seed":
			s.Seed, err = d.uint(x, p, "a seed, a whole number from 0 to 18446744073709551615")
		case "config":
			s.Config, err = d.str(x, p)
		case "duration":
			// "0s" stands for the world's duration, as it always has:
			// Starlark's schedule() and earlier builds write it.
			if s.Duration, err = d.dur(x, p); err == nil && s.Duration < 0 {
				err = d.src.err(x.line, p, `want a duration above 0 such as "10s" (or "0s", or no duration, for the world's), got %s`, x.describe())
			}
		case "shrunk_from", "shrink_runs":
			var n int64
			if n, err = d.int(x, p, "a count of 0 or more"); err == nil && n < 0 {
				err = d.want(x, p, "a count of 0 or more")
			}
			if m.key == "shrunk_from" {
				s.ShrunkFrom = int(n)
			} else {
				s.ShrinkRuns = int(n)
			}
		case "branches":
			err = d.branches(x, p, s)
		case "faults":
			if x.kind != jArray {
				return nil, d.want(x, p, `a list of faults such as [{"at": "1s", "kind": "crash", "node": "n1", "until": "2s"}]`)
			}
			for i, e := range x.elems {
				f, err := d.fault(e, fmt.Sprintf("faults[%d]", i))
				if err != nil {
					return nil, err
				}
				s.Faults = append(s.Faults, f)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

var branchFields = []string{"at", "key", "stream"}

func (d *jdecoder) branches(v *jvalue, path string, s *Schedule) error {
	if v.kind != jArray {
		return d.want(v, path, `a list of branches such as [{"at": "1s", "key": 7}]`)
	}
	var last time.Duration
	for i, e := range v.elems {
		p := fmt.Sprintf("%s[%d]", path, i)
		ms, err := d.object(e, p, `a branch such as {"at": "1s", "key": 7}`, branchFields)
		if err != nil {
			return err
		}
		var b Branch
		for _, m := range ms {
			mp := join(p, m.key)
			switch m.key {
			case "at":
				if b.At, err = d.dur(m.val, mp); err == nil && b.At < last {
					err = d.src.err(m.val.line, mp, "%v is before the branch above it (%v): branches must not go back in time", b.At, last)
				}
			case "key":
				b.Key, err = d.uint(m.val, mp, "a key, a whole number from 0 to 18446744073709551615")
			case "stream":
				if b.Stream, err = d.str(m.val, mp); err == nil && !slices.Contains(BranchStreams, b.Stream) {
					err = d.src.err(m.val.line, mp, "%q is not a stream (one of %s, or leave it out for all)", b.Stream, strings.Join(BranchStreams, ", "))
				}
			}
			if err != nil {
				return err
			}
		}
		last = b.At
		s.Branches = append(s.Branches, b)
	}
	return nil
}

// fault decodes one fault object.
func (d *jdecoder) fault(v *jvalue, path string) (Fault, error) {
	var f Fault
	ms, err := d.object(v, path, `a fault such as {"at": "1s", "kind": "crash", "node": "n1", "until": "2s"}`, FieldNames())
	if err != nil {
		return f, err
	}
	for _, m := range ms {
		p, x := join(path, m.key), m.val
		switch m.key {
		case "at":
			f.At, err = d.dur(x, p)
		case "until":
			f.Until, err = d.dur(x, p)
		case "delay":
			f.Delay, err = d.dur(x, p)
		case "kind":
			f.Kind, err = d.str(x, p)
		case "node":
			f.Node, err = d.str(x, p)
		case "from":
			f.From, err = d.str(x, p)
		case "to":
			f.To, err = d.str(x, p)
		case "dir":
			f.Dir, err = d.str(x, p)
		case "mode":
			f.Mode, err = d.str(x, p)
		case "path":
			f.Path, err = d.str(x, p)
		case "site":
			f.Site, err = d.str(x, p)
		case "side":
			f.Side, err = d.strs(x, p)
		case "groups":
			if x.kind != jArray {
				err = d.want(x, p, `a list of groups of node names such as [["n1", "n2"], ["n3"]]`)
				break
			}
			for i, g := range x.elems {
				var names []string
				if names, err = d.strs(g, fmt.Sprintf("%s[%d]", p, i)); err != nil {
					break
				}
				f.Groups = append(f.Groups, names)
			}
		case "factor":
			f.Factor, err = d.number(x, p, "a factor such as 2.5")
		case "op":
			f.Op, err = d.uint(x, p, "an operation number, a whole number from 1")
		case "offset":
			f.Offset, err = d.int(x, p, "a byte offset, a whole number")
		case "target":
			f.Target, err = d.int(x, p, "a byte offset, a whole number")
		}
		if err != nil {
			return f, err
		}
	}
	return f, nil
}

// decodeSchedule reads a schedule from data; file names it in errors.
func decodeSchedule(file string, data []byte) (*Schedule, *jvalue, error) {
	src := newJSource(file, data)
	v, err := src.parse()
	if err != nil {
		return nil, nil, err
	}
	s, err := (&jdecoder{src}).schedule(v)
	return s, v, err
}

// faultLine is the line the i-th fault of a decoded schedule starts on.
func faultLine(top *jvalue, i int) int {
	for _, m := range top.members {
		if m.key == "faults" && i < len(m.val.elems) {
			return m.val.elems[i].line
		}
	}
	return 0
}

// ReadFile reads a schedule file: a regular file (or a symlink to one) of
// at most world.MaxConfigBytes, as a world file is.
func ReadFile(path string) ([]byte, error) {
	b, err := world.ReadBounded(path, world.MaxConfigBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read the schedule: %v", path, err)
	}
	return b, nil
}

// Parse reads a schedule from data without checking its faults against a
// world (`seedfall faults` checks after editing); file names it in errors.
func Parse(file string, data []byte) (*Schedule, error) {
	s, _, err := decodeSchedule(file, data)
	return s, err
}
