package world

import (
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/elle"
)

// decoder turns the value tree of one file into a World, failing on the
// first problem in file order.
type decoder struct {
	top *source // the world file named on the command line
	w   *World
}

// field decodes one key of an object of type T. It returns whether the
// value differs from the default, which is what Unsupported reports.
type field[T any] struct {
	name string
	dec  func(d *decoder, t *T, v *value, path string) (nonDefault bool, err error)
}

func (d *decoder) errAt(v *value, path, format string, args ...any) error {
	return errIn(v.src, v.src.line(v.start), path, fmt.Sprintf(format, args...))
}

func (d *decoder) errPos(at pos, path, format string, args ...any) error {
	return errIn(at.src, at.line, path, fmt.Sprintf(format, args...))
}

// errIn locates a problem in the source a value came from.
func errIn(src *source, line int, path, msg string) *Error {
	if src.via != "" {
		msg += " (" + src.via + ")"
	}
	if path != "" {
		path = src.prefix + path
	}
	return &Error{File: src.file, Line: line, Path: path, Msg: msg}
}

func (d *decoder) want(v *value, path, what string) error {
	return d.errAt(v, path, "want %s, got %s", what, describe(v))
}

// mark records that the file sets path to a non-default value.
func (d *decoder) mark(path string, at pos) {
	d.w.set = append(d.w.set, setField{path: path, generic: genericPath(path), at: at})
}

func join(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func index(parent string, i int) string {
	return fmt.Sprintf("%s[%d]", parent, i)
}

// mapKey is the path of a user-chosen key (an env variable, a disk path, a
// profile): dotted when it reads as a name, quoted otherwise.
func mapKey(parent, key string) string {
	plain := key != ""
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			plain = false
			break
		}
	}
	if plain {
		return join(parent, key)
	}
	return parent + "[" + strconv.Quote(key) + "]"
}

// genericPath replaces list indices with "[]": nodes[1].disk -> nodes[].disk.
func genericPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		b.WriteByte(p[i])
		if p[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(p) && p[j] == ']' {
			i = j - 1
		}
	}
	return b.String()
}

// object checks that v is an object of known, unrepeated keys and returns
// its members in file order.
func (d *decoder) object(v *value, path string, known []string) ([]member, error) {
	if v.kind != kindObject {
		return nil, d.want(v, path, "an object")
	}
	if err := d.noRepeats(v, path); err != nil {
		return nil, err
	}
	for _, m := range v.members {
		if slices.Contains(known, m.key) {
			continue
		}
		msg := "unknown field"
		if s := Suggest(m.key, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else if len(known) <= 10 {
			msg += "; valid fields are " + strings.Join(known, ", ")
		}
		return nil, d.errPos(m.pos(), join(path, m.key), "%s", msg)
	}
	return v.members, nil
}

func (d *decoder) noRepeats(v *value, path string) error {
	for i, m := range v.members {
		for _, prev := range v.members[:i] {
			if prev.key == m.key {
				return d.errPos(m.pos(), mapKey(path, m.key), "set twice; it is already set on line %d", prev.line)
			}
		}
	}
	return nil
}

func decodeFields[T any](d *decoder, v *value, path string, t *T, fields []field[T]) error {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	ms, err := d.object(v, path, names)
	if err != nil {
		return err
	}
	for _, m := range ms {
		p := join(path, m.key)
		d.w.line[p] = m.pos()
		f := fields[slices.Index(names, m.key)]
		nonDefault, err := f.dec(d, t, m.val, p)
		if err != nil {
			return err
		}
		if nonDefault {
			d.mark(p, m.pos())
		}
	}
	return nil
}

// Scalars.

func (d *decoder) boolean(v *value, path string) (bool, error) {
	if v.kind != kindBool {
		return false, d.want(v, path, "true or false")
	}
	return v.b, nil
}

func (d *decoder) str(v *value, path string) (string, error) {
	if v.kind != kindString {
		return "", d.want(v, path, "a string")
	}
	return v.str, nil
}

func (d *decoder) number(v *value, path string) (float64, error) {
	if v.kind != kindNumber {
		return 0, d.want(v, path, "a number")
	}
	f, err := strconv.ParseFloat(v.str, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, d.errAt(v, path, "number %s is out of range", v.str)
	}
	return f, nil
}

func (d *decoder) integer(v *value, path string, lo, hi int64, what string) (int64, error) {
	f, err := d.number(v, path)
	if err != nil {
		return 0, err
	}
	n, perr := strconv.ParseInt(v.str, 10, 64)
	if perr != nil {
		switch {
		case f != math.Trunc(f):
			return 0, d.want(v, path, "a whole number")
		case f >= math.MaxInt64:
			return 0, d.errAt(v, path, "number %s is too large", v.str)
		case f <= math.MinInt64:
			return 0, d.errAt(v, path, "want %s, got %s", what, v.str)
		}
		n = int64(f)
	}
	if n < lo || n > hi {
		return 0, d.errAt(v, path, "want %s, got %s", what, v.str)
	}
	return n, nil
}

func (d *decoder) duration(v *value, path string) (time.Duration, error) {
	if v.kind != kindString {
		return 0, d.want(v, path, `a duration such as "250ms"`)
	}
	t, err := time.ParseDuration(v.str)
	if err != nil {
		return 0, d.want(v, path, `a duration such as "250ms" or "2s"`)
	}
	if t < 0 {
		return 0, d.errAt(v, path, "want a duration of 0 or more, got %s", describe(v))
	}
	return t, nil
}

// sizeExample is how an error says what a size looks like.
const sizeExample = `a size such as "512MiB" or "1GiB"`

// size decodes a size in bytes from lo to hi: a string with a binary unit,
// "512MiB", "1 GiB", "1.5GiB" (see ParseSize), or a whole number of bytes.
func (d *decoder) size(v *value, path string, lo, hi int64) (int64, error) {
	what := fmt.Sprintf("a size from %s to %s", SizeText(lo), SizeText(hi))
	var n int64
	switch v.kind {
	case kindNumber:
		return d.integer(v, path, lo, hi, what)
	case kindString:
		var ok bool
		if n, ok = ParseSize(v.str); !ok {
			return 0, d.want(v, path, sizeExample+" (a number and B, KiB, MiB or GiB)")
		}
	default:
		return 0, d.want(v, path, sizeExample)
	}
	if n < lo || n > hi {
		return 0, d.errAt(v, path, "want %s, got %s", what, describe(v))
	}
	return n, nil
}

// ParseSize reads a size in bytes written as a number and a binary unit:
// "512MiB", "1 GiB", "1.5GiB", "4096B", "4096", or as SizeText writes it,
// "4097 bytes". Units are B (or bytes), KiB, MiB and GiB, in any case;
// decimal units (MB, GB) are refused rather than guessed at. ok is false
// when s is not such a size or is not a whole number of bytes.
func ParseSize(s string) (n int64, ok bool) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(s)
	}
	num, unit := s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	scale := map[string]float64{"": 1, "b": 1, "byte": 1, "bytes": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30}[unit]
	if num == "" || scale == 0 {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, false
	}
	f *= scale
	if f != math.Trunc(f) || f >= 1<<62 {
		return 0, false
	}
	return int64(f), true
}

// sizeField decodes a size in bytes from lo to hi (decoder.size).
func sizeField[T any](name string, lo, hi int64, get func(*T) *int64) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		n, err := d.size(v, path, lo, hi)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := *p != n
		*p = n
		return changed, nil
	}}
}

func (d *decoder) durRange(v *value, path string) (Range, error) {
	if v.kind != kindArray {
		return Range{}, d.want(v, path, `a range such as ["1ms", "10ms"]`)
	}
	if len(v.elems) != 2 {
		return Range{}, d.errAt(v, path, `want a range of two durations such as ["1ms", "10ms"], got %d values`, len(v.elems))
	}
	lo, err := d.duration(v.elems[0], index(path, 0))
	if err != nil {
		return Range{}, err
	}
	hi, err := d.duration(v.elems[1], index(path, 1))
	if err != nil {
		return Range{}, err
	}
	if lo > hi {
		return Range{}, d.errAt(v, path, "the minimum %v is above the maximum %v; write [min, max]", lo, hi)
	}
	return Range{lo, hi}, nil
}

func (d *decoder) strings(v *value, path string) ([]string, error) {
	if v.kind != kindArray {
		return nil, d.want(v, path, "a list of strings")
	}
	out := make([]string, 0, len(v.elems))
	for i, e := range v.elems {
		s, err := d.str(e, index(path, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// enum decodes a string that must be one of valid.
func enum[E ~string](d *decoder, v *value, path, what string, valid []E) (E, error) {
	s, err := d.str(v, path)
	if err != nil {
		return "", err
	}
	names := make([]string, len(valid))
	for i, e := range valid {
		names[i] = string(e)
		if s == string(e) {
			return e, nil
		}
	}
	if sug := Suggest(s, names); sug != "" {
		return "", d.errAt(v, path, "unknown %s %q (did you mean %q?)", what, s, sug)
	}
	return "", d.errAt(v, path, "unknown %s %q; want %s", what, s, oneOf(names))
}

// enumList decodes a non-empty list of distinct enum values.
func enumList[E ~string](d *decoder, v *value, path, what string, valid []E) ([]E, error) {
	if v.kind != kindArray {
		return nil, d.want(v, path, fmt.Sprintf("a list of %ss", what))
	}
	if len(v.elems) == 0 {
		return nil, d.errAt(v, path, "empty list; name at least one %s, from %s", what, oneOf(stringsOf(valid)))
	}
	var out []E
	for i, e := range v.elems {
		x, err := enum(d, e, index(path, i), what, valid)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, x) {
			return nil, d.errAt(e, index(path, i), "%q is listed twice", x)
		}
		out = append(out, x)
	}
	return out, nil
}

func stringsOf[E ~string](es []E) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e)
	}
	return out
}

// hostPath resolves a path in the file against the file's directory.
func (d *decoder) hostPath(v *value, path string) (string, error) {
	s, err := d.str(v, path)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", d.errAt(v, path, "empty path; give a path relative to %s", v.src.file)
	}
	p := filepath.FromSlash(s)
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.src.dir, p)
	}
	return filepath.Clean(p), nil
}

// Field constructors shared by the world, faults and preempt tables. Each
// compares with the value already in place, which is the default, since a
// key can be set only once.

func boolField[T any](name string, get func(*T) *bool) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		b, err := d.boolean(v, path)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := *p != b
		*p = b
		return changed, nil
	}}
}

// numField decodes a number in [lo, hi]; what describes the range for the
// error, as in "want a probability between 0 and 1".
func numField[T any](name string, lo, hi float64, what string, get func(*T) *float64) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		f, err := d.number(v, path)
		if err != nil {
			return false, err
		}
		if f < lo || f > hi {
			return false, d.errAt(v, path, "want %s, got %s", what, v.str)
		}
		p := get(t)
		changed := *p != f
		*p = f
		return changed, nil
	}}
}

func probField[T any](name string, get func(*T) *float64) field[T] {
	return numField(name, 0, 1, "a probability between 0 and 1", get)
}

// rateField decodes a rate per second, from 0 to MaxRate.
func rateField[T any](name string, get func(*T) *float64) field[T] {
	f := numField(name, 0, math.MaxFloat64, "a rate per second of 0 or more", get)
	inner := f.dec
	f.dec = func(d *decoder, t *T, v *value, path string) (bool, error) {
		changed, err := inner(d, t, v, path)
		if err == nil && *get(t) > MaxRate {
			return false, d.errAt(v, path, "%s per second is over the limit of %d; a run cannot hold more faults than that", v.str, MaxRate)
		}
		return changed, err
	}
	return f
}

func intField[T any](name string, lo, hi int64, what string, get func(*T) *int) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		n, err := d.integer(v, path, lo, hi, what)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := *p != int(n)
		*p = int(n)
		return changed, nil
	}}
}

// durField decodes a duration; positive rejects 0.
func durField[T any](name string, positive bool, get func(*T) *time.Duration) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		x, err := d.duration(v, path)
		if err != nil {
			return false, err
		}
		if positive && x == 0 {
			return false, d.errAt(v, path, "want a duration above 0, got %s", describe(v))
		}
		p := get(t)
		changed := *p != x
		*p = x
		return changed, nil
	}}
}

func rangeField[T any](name string, get func(*T) *Range) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		r, err := d.durRange(v, path)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := *p != r
		*p = r
		return changed, nil
	}}
}

func enumField[T any, E ~string](name, what string, valid []E, get func(*T) *E) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		e, err := enum(d, v, path, what, valid)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := *p != e
		*p = e
		return changed, nil
	}}
}

func enumListField[T any, E ~string](name, what string, valid []E, get func(*T) *[]E) field[T] {
	return field[T]{name, func(d *decoder, t *T, v *value, path string) (bool, error) {
		es, err := enumList(d, v, path, what, valid)
		if err != nil {
			return false, err
		}
		p := get(t)
		changed := !slices.Equal(*p, es)
		*p = es
		return changed, nil
	}}
}

// The world.

// pending holds what the top-level fields decode into before the world is
// assembled, since "workload" goes first whatever its place in the file.
type pending struct {
	w         *World
	workload  *Program
	workloads []Program
}

var worldFields = []field[pending]{
	{"nodes", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		ps, err := d.programs(v, path, RoleNode)
		p.w.Nodes = ps
		return false, err
	}},
	{"workload", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		prog, err := d.program(v, path, RoleWorkload)
		p.workload = &prog
		return false, err
	}},
	{"workloads", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		ps, err := d.programs(v, path, RoleWorkload)
		p.workloads = ps
		return false, err
	}},
	{"finally", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		prog, err := d.program(v, path, RoleFinally)
		p.w.Finally = &prog
		return false, err
	}},
	{"liveness", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		return false, decodeFields(d, v, path, &p.w.Liveness, []field[Liveness]{
			durField("within", false, func(l *Liveness) *time.Duration { return &l.Within }),
		})
	}},
	onWorld(durField("duration", true, func(w *World) *time.Duration { return &w.Duration })),
	onWorld(rangeField("latency", func(w *World) *Range { return &w.Latency })),
	{"links", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		links, err := d.links(v, path)
		p.w.Links = links
		return false, err
	}},
	onWorld(boolField("faults_after_setup", func(w *World) *bool { return &w.FaultsAfterSetup })),
	onWorld(boolField("supervise", func(w *World) *bool { return &w.Supervise })),
	onWorld(boolField("net_overlay", func(w *World) *bool { return &w.NetOverlay })),
	onWorld(boolField("compat_overlay", func(w *World) *bool { return &w.CompatOverlay })),
	onWorld(boolField("coverage", func(w *World) *bool { return &w.Coverage })),
	{"coverage_packages", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		pkgs, err := d.strings(v, path)
		for i, pat := range pkgs {
			if err == nil && (pat == "" || strings.ContainsAny(pat, " \t,")) {
				err = d.errAt(v, index(path, i), "%q is not a package pattern; write an import path or a pattern such as example.com/mod/...", pat)
			}
		}
		p.w.CoveragePackages = pkgs
		return len(pkgs) > 0, err
	}},
	onWorld(durField("watchdog", true, func(w *World) *time.Duration { return &w.Watchdog })),
	onWorld(sizeField("memory_limit", MinMemoryLimit, MaxMemoryLimit, func(w *World) *int64 { return &w.MemoryLimit })),
	{"consistency", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		ms, err := d.consistency(v, path)
		p.w.Consistency = ms
		return !slices.Equal(ms, []string{DefaultConsistency}), err
	}},
	{"preempt", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		return false, d.preempt(v, path, &p.w.Preempt)
	}},
	{"cpu", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		return false, decodeFields(d, v, path, &p.w.CPU, cpuFields)
	}},
	{"faults", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		return false, d.faults(v, path, &p.w.Faults)
	}},
	{"extends", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		s, err := d.str(v, path)
		if err == nil && s == "" {
			err = d.errAt(v, path, "empty path; name the world file this one extends, or remove the field")
		}
		p.w.Extends = s
		return true, err
	}},
	{"profiles", func(d *decoder, p *pending, v *value, path string) (bool, error) {
		profiles, err := d.profiles(v, path)
		p.w.Profiles = profiles
		return len(profiles) > 0, err
	}},
}

// consistency decodes the consistency models transactions must satisfy: a
// model's name, or a list of them, by Elle's names.
func (d *decoder) consistency(v *value, path string) ([]string, error) {
	elems, single := v.elems, false
	switch v.kind {
	case kindString:
		elems, single = []*value{v}, true
	case kindArray:
		if len(elems) == 0 {
			return nil, d.errAt(v, path, "empty list; name at least one model, such as %q or %q", DefaultConsistency, "serializable")
		}
	default:
		return nil, d.want(v, path, `a consistency model such as "serializable", or a list of them`)
	}
	valid := elle.TransactionalModels()
	var out []string
	for i, e := range elems {
		p := path
		if !single {
			p = index(path, i)
		}
		m, err := d.str(e, p)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(valid, m) {
			msg := fmt.Sprintf("unknown consistency model %q", m)
			if slices.Contains(elle.KnownModels(), m) {
				msg = fmt.Sprintf("%q forbids no anomaly that a check of transactions finds, so a check for it alone always passes", m)
			} else if s := Suggest(m, valid); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return nil, d.errAt(e, p, "%s; the models are %s", msg, strings.Join(valid, ", "))
		}
		if slices.Contains(out, m) {
			return nil, d.errAt(e, p, "%q is listed twice", m)
		}
		out = append(out, m)
	}
	return out, nil
}

// onWorld adapts a field of World to the pending table.
func onWorld(f field[World]) field[pending] {
	return field[pending]{f.name, func(d *decoder, p *pending, v *value, path string) (bool, error) {
		return f.dec(d, p.w, v, path)
	}}
}

func (d *decoder) world(root *value) (*World, error) {
	w := &World{
		File:        d.top.file,
		Dir:         d.top.dir,
		Duration:    DefaultDuration,
		Latency:     DefaultLatency,
		Watchdog:    DefaultWatchdog,
		MemoryLimit: DefaultMemoryLimit,
		Preempt:     DefaultPreempt(),
		CPU:         DefaultCPU(),
		Faults:      DefaultFaults(),
		line:        map[string]pos{},
	}
	d.w = w
	if root.kind != kindObject {
		return nil, d.errAt(root, "", "want a JSON object at the top of the file, got %s", describe(root))
	}
	p := &pending{w: w}
	if err := decodeFields(d, root, "", p, worldFields); err != nil {
		return nil, err
	}
	if p.workload != nil {
		w.Workloads = append(w.Workloads, *p.workload)
	}
	w.Workloads = append(w.Workloads, p.workloads...)
	if len(w.Workloads) == 0 {
		return nil, d.errAt(root, "",
			`no workload; add "workload": {"name": "client", "pkg": "./client"}, the program that checks the system`)
	}
	return w, nil
}

// Programs.

func (d *decoder) programs(v *value, path string, role Role) ([]Program, error) {
	if v.kind != kindArray {
		return nil, d.want(v, path, "a list of programs")
	}
	var out []Program
	for i, e := range v.elems {
		p, err := d.program(e, index(path, i), role)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

var programFields = []field[Program]{
	{"name", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		s, err := d.str(v, path)
		if err != nil {
			return false, err
		}
		if msg := checkName(s); msg != "" {
			return false, d.errAt(v, path, "%s", msg)
		}
		p.Name = s
		return true, nil
	}},
	{"pkg", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		s, err := d.hostPath(v, path)
		p.Pkg = s
		return true, err
	}},
	{"wasm", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		s, err := d.hostPath(v, path)
		p.Wasm = s
		return true, err
	}},
	{"args", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		args, err := d.strings(v, path)
		p.Args = args
		return len(args) > 0, err
	}},
	{"env", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		env, err := d.env(v, path)
		p.Env = env
		return len(env) > 0, err
	}},
	{"faults", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		b, err := d.boolean(v, path)
		if err != nil {
			return false, err
		}
		if p.Role == RoleFinally && b {
			return false, d.errAt(v, path, "the finally check never takes faults; remove this field")
		}
		p.Faults = &b
		// A node takes faults unless told otherwise; the others do not.
		return b != (p.Role == RoleNode), nil
	}},
	{"disk", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		s, err := d.hostPath(v, path)
		p.Disk = s
		return true, err
	}},
	{"files", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		files, err := d.files(v, path)
		p.Files = files
		return len(files) > 0, err
	}},
	{"upgrade_to", func(d *decoder, p *Program, v *value, path string) (bool, error) {
		if p.Role == RoleFinally {
			return false, d.errAt(v, path, "the finally check never restarts, so it would never run its upgrade; remove this field")
		}
		s, err := d.hostPath(v, path)
		p.UpgradeTo = s
		return true, err
	}},
	// 0, the world's, cannot be written, so any value sets it.
	sizeField("memory_limit", MinMemoryLimit, MaxMemoryLimit, func(p *Program) *int64 { return &p.MemoryLimit }),
}

func (d *decoder) program(v *value, path string, role Role) (Program, error) {
	p := Program{Role: role, Path: path, Line: v.src.line(v.start)}
	if v.kind != kindObject {
		return p, d.want(v, path, `a program such as {"name": "n1", "pkg": "./node"}`)
	}
	d.w.line[path] = pos{v.src, p.Line}
	if err := decodeFields(d, v, path, &p, programFields); err != nil {
		return p, err
	}
	if p.Name == "" {
		return p, d.errAt(v, path, `needs a "name"`)
	}
	switch {
	case p.Pkg == "" && p.Wasm == "":
		return p, d.errAt(v, path, `needs "pkg" (a directory with a Go main package) or "wasm" (a prebuilt module)`)
	case p.Pkg != "" && p.Wasm != "":
		return p, d.errPos(d.w.line[join(path, "wasm")], join(path, "wasm"), `set "pkg" or "wasm", not both`)
	}
	return p, nil
}

// checkName returns why s is not a valid program name, or "". Names become
// host names on the simulated network, hence DNS labels.
func checkName(s string) string {
	switch {
	case s == "":
		return "empty name; use lowercase letters, digits and '-', such as \"n1\""
	case len(s) > 63:
		return fmt.Sprintf("name %q is longer than 63 characters, the limit of a DNS label", s)
	case s[0] == '-' || s[len(s)-1] == '-':
		return fmt.Sprintf("name %q starts or ends with '-'; a name is a DNS label", s)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Sprintf("name %q is not a valid DNS label; use only lowercase letters, digits and '-'", s)
		}
	}
	return ""
}

// env accepts {"K": "V"}, stored sorted by key, or ["K=V", ...] in order.
func (d *decoder) env(v *value, path string) ([]string, error) {
	var out []string
	var keys []string
	add := func(k, val string, at *value, p string) error {
		switch {
		case k == "":
			return d.errAt(at, p, "empty variable name")
		case strings.Contains(k, "="):
			return d.errAt(at, p, "variable name %q contains '='", k)
		case k == "SEEDFALL" || k == "SEEDFALL_NODE":
			return d.errAt(at, p, "%s is set by seedfall for every node; remove it", k)
		case slices.Contains(keys, k):
			return d.errAt(at, p, "%s is set twice", k)
		}
		keys = append(keys, k)
		out = append(out, k+"="+val)
		return nil
	}
	switch v.kind {
	case kindObject:
		if err := d.noRepeats(v, path); err != nil {
			return nil, err
		}
		ms := slices.Clone(v.members)
		slices.SortStableFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for _, m := range ms {
			p := mapKey(path, m.key)
			val, err := d.str(m.val, p)
			if err != nil {
				return nil, err
			}
			if err := add(m.key, val, m.val, p); err != nil {
				return nil, err
			}
		}
	case kindArray:
		for i, e := range v.elems {
			p := index(path, i)
			s, err := d.str(e, p)
			if err != nil {
				return nil, err
			}
			k, val, ok := strings.Cut(s, "=")
			if !ok {
				return nil, d.errAt(e, p, "want \"NAME=value\", got %q", s)
			}
			if err := add(k, val, e, p); err != nil {
				return nil, err
			}
		}
	default:
		return nil, d.want(v, path, `{"NAME": "value"} or ["NAME=value"]`)
	}
	return out, nil
}

// files maps paths on the node's disk to host files, stored sorted by disk path.
func (d *decoder) files(v *value, at string) ([]FileCopy, error) {
	if v.kind != kindObject {
		return nil, d.want(v, at, `an object such as {"data/seed.db": "./testdata/seed.db"}`)
	}
	if err := d.noRepeats(v, at); err != nil {
		return nil, err
	}
	var out []FileCopy
	for _, m := range v.members {
		p := mapKey(at, m.key)
		switch {
		case m.key == "":
			return nil, d.errPos(m.pos(), p, "empty disk path")
		case strings.HasPrefix(m.key, "/"):
			return nil, d.errPos(m.pos(), p, "disk path is absolute; write it relative to the node's disk, such as \"data/seed.db\"")
		}
		clean := path.Clean(m.key)
		if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, d.errPos(m.pos(), p, "disk path does not name a file on the node's disk")
		}
		host, err := d.hostPath(m.val, p)
		if err != nil {
			return nil, err
		}
		for _, f := range out {
			if f.Path == clean {
				return nil, d.errPos(m.pos(), p, "%q is copied twice", clean)
			}
		}
		out = append(out, FileCopy{Path: clean, Host: host})
	}
	slices.SortFunc(out, func(a, b FileCopy) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// Links.

var linkFields = []field[Link]{
	{"from", func(d *decoder, l *Link, v *value, path string) (bool, error) {
		s, err := d.str(v, path)
		l.From = s
		return s != "", err
	}},
	{"to", func(d *decoder, l *Link, v *value, path string) (bool, error) {
		s, err := d.str(v, path)
		l.To = s
		return s != "", err
	}},
	rangeField("latency", func(l *Link) *Range { return &l.Latency }),
}

func (d *decoder) links(v *value, path string) ([]Link, error) {
	if v.kind != kindArray {
		return nil, d.want(v, path, `a list of links such as {"to": "n3", "latency": ["20ms", "80ms"]}`)
	}
	var out []Link
	for i, e := range v.elems {
		p := index(path, i)
		l := Link{Latency: Range{-1, -1}, Line: e.src.line(e.start)}
		if err := decodeFields(d, e, p, &l, linkFields); err != nil {
			return nil, err
		}
		if l.Latency == (Range{-1, -1}) {
			return nil, d.errAt(e, p, `needs "latency", such as ["20ms", "80ms"]`)
		}
		d.w.line[p] = pos{e.src, l.Line}
		out = append(out, l)
	}
	return out, nil
}

// CPU.

var cpuFields = []field[CPU]{
	numField("ns_per_call", 0, MaxNsPerCall, fmt.Sprintf("nanoseconds per counted call from 0 (free CPU) to %g", MaxNsPerCall),
		func(c *CPU) *float64 { return &c.NsPerCall }),
	numField("jitter", 0, 0.9, "a jitter from 0 to 0.9", func(c *CPU) *float64 { return &c.Jitter }),
}

// Preempt.

var preemptFields = []field[Preempt]{
	enumField("strategy", "strategy", []Strategy{StrategyNone, StrategyRandom, StrategyPCT, StrategyCalls},
		func(p *Preempt) *Strategy { return &p.Strategy }),
	boolField("interleave", func(p *Preempt) *bool { return &p.Interleave }),
	intField("depth", 1, MaxPreemptDepth, fmt.Sprintf("a depth from 1 to %d (the limit)", MaxPreemptDepth), func(p *Preempt) *int { return &p.Depth }),
	stepsField(),
	intField("calls", 1, MaxPreemptCalls, "a call count from 1 to 4194304", func(p *Preempt) *int { return &p.Calls }),
	boolField("loops", func(p *Preempt) *bool { return &p.Loops }),
}

// stepsField decodes preempt.steps: a count of 1 or more, or "auto"
// (StepsAuto), which also undoes a count set by the world a profile or
// file extends.
func stepsField() field[Preempt] {
	const what = `a step count of 1 or more, or "auto"`
	return field[Preempt]{"steps", func(d *decoder, p *Preempt, v *value, path string) (bool, error) {
		n := int64(StepsAuto)
		switch {
		case v.kind == kindString && v.str == "auto":
		case v.kind == kindNumber:
			var err error
			if n, err = d.integer(v, path, 1, math.MaxInt64, what); err != nil {
				return false, err
			}
		default:
			return false, d.want(v, path, what)
		}
		changed := p.Steps != int(n)
		p.Steps = int(n)
		return changed, nil
	}}
}

func (d *decoder) preempt(v *value, path string, p *Preempt) error {
	if err := decodeFields(d, v, path, p, preemptFields); err != nil {
		return err
	}
	if p.Interleave {
		if p.Strategy != StrategyNone && p.Strategy != StrategyRandom {
			sp := join(path, "strategy")
			return d.errPos(d.w.line[sp], sp,
				`%q conflicts with "interleave": true, which means "random"; set "interleave": false to use %q`, p.Strategy, p.Strategy)
		}
		p.Strategy = StrategyRandom
	}
	return nil
}

// Profiles.

func (d *decoder) profiles(v *value, path string) ([]Profile, error) {
	if v.kind != kindObject {
		return nil, d.want(v, path, `an object of named partial worlds such as {"ci": {"duration": "5m"}}`)
	}
	if err := d.noRepeats(v, path); err != nil {
		return nil, err
	}
	var out []Profile
	for _, m := range v.members {
		p := mapKey(path, m.key)
		if m.key == "" {
			return nil, d.errPos(m.pos(), p, "empty profile name")
		}
		if m.val.kind != kindObject {
			return nil, d.want(m.val, p, "an object with the fields this profile changes")
		}
		out = append(out, Profile{Name: m.key, File: m.src.file, Line: m.line})
	}
	return out, nil
}
