package world

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// A world file whose name ends in .toml is TOML: the same fields as the JSON
// form, tables for objects, arrays of tables for nodes, workloads and
// links. It is read into the same value tree the JSON parser builds, each
// key and value placed at its TOML line, so the decoder, its checks and its
// errors are the very ones a JSON world gets.

// isTOML reports whether a world file name is a TOML file.
func isTOML(file string) bool {
	return strings.EqualFold(filepath.Ext(file), ".toml")
}

// parseTOML reads a TOML source into a value tree. BurntSushi/toml parses
// the values; a scan of the text (tomlPlaces) gives each key's line and
// the order keys are written in, which the decoded maps do not keep.
func (s *source) parseTOML() (*value, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(s.data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line := pe.Position.Line
			if line < 1 {
				line = 1
			}
			return nil, &Error{File: s.file, Line: line, Msg: "syntax error: " + tomlMessage(pe.Message, s.lineText(line))}
		}
		return nil, &Error{File: s.file, Line: 1, Msg: "syntax error: " + err.Error()}
	}
	t := &tomlTree{src: s, places: tomlPlaces(s.data)}
	return t.value(doc, "", 0)
}

// tomlMessage words BurntSushi's message like ours, adding a hint for the
// mistake a JSON user makes most: a duration left unquoted.
func tomlMessage(msg, line string) string {
	msg = strings.TrimSuffix(msg, ".")
	if len(msg) > 1 && msg[0] >= 'A' && msg[0] <= 'Z' && msg[1] >= 'a' && msg[1] <= 'z' {
		msg = strings.ToLower(msg[:1]) + msg[1:]
	}
	if _, v, ok := strings.Cut(line, "="); ok && unquotedDuration.MatchString(v) {
		msg += `; durations are strings, such as "250ms"`
	}
	return msg
}

var unquotedDuration = regexp.MustCompile(`^\s*\[?\s*[0-9.]+(ns|us|µs|ms|s|m|h)\b`)

// lineText returns the text of a 1-based line.
func (s *source) lineText(n int) string {
	if n < 1 || n > len(s.lines) {
		return ""
	}
	end := len(s.data)
	if n < len(s.lines) {
		end = s.lines[n] - 1
	}
	return string(s.data[s.lines[n-1]:end])
}

// tomlTree builds the value tree from BurntSushi's decoded document.
type tomlTree struct {
	src    *source
	places map[string]tomlPlace
}

func (t *tomlTree) value(x any, path string, start int) (*value, error) {
	v := &value{src: t.src, start: start, end: start}
	switch x := x.(type) {
	case map[string]any:
		v.kind = kindObject
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Keys in the order they are written; any the scan missed (it
		// should miss none) follow, sorted, so the order never depends on
		// map iteration.
		slices.SortFunc(keys, func(a, b string) int {
			pa, oka := t.places[path+tomlKey(a)]
			pb, okb := t.places[path+tomlKey(b)]
			switch {
			case oka && okb:
				return pa.seq - pb.seq
			case oka:
				return -1
			case okb:
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			p := path + tomlKey(k)
			at, ok := t.places[p]
			if !ok {
				at = tomlPlace{key: start, val: start}
			}
			mv, err := t.value(x[k], p, at.val)
			if err != nil {
				return nil, err
			}
			v.members = append(v.members, member{key: k, line: t.src.line(at.key), src: t.src, val: mv})
		}
	case []map[string]any:
		v.kind = kindArray
		for i, e := range x {
			ev, err := t.value(e, path+tomlIndex(i), t.elemStart(path, i, start))
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, ev)
		}
	case []any:
		v.kind = kindArray
		for i, e := range x {
			ev, err := t.value(e, path+tomlIndex(i), t.elemStart(path, i, start))
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, ev)
		}
	case string:
		v.kind, v.str = kindString, x
	case bool:
		v.kind, v.b = kindBool, x
	case int64:
		v.kind, v.str = kindNumber, strconv.FormatInt(x, 10)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, errIn(t.src, t.src.line(start), jsonPath(path), "want a number, got "+strconv.FormatFloat(x, 'g', -1, 64)+"; a world has no use for nan or inf")
		}
		v.kind, v.str = kindNumber, strconv.FormatFloat(x, 'g', -1, 64)
	default:
		// Dates and times: JSON has none, and no field takes one.
		return nil, errIn(t.src, t.src.line(start), jsonPath(path), fmt.Sprintf("want a string, a number, true or false, got the TOML date %s; quote it if it is meant as a string", t.text(start)))
	}
	return v, nil
}

// text returns the scalar written at off, as written.
func (t *tomlTree) text(off int) string {
	end := off
	for end < len(t.src.data) && !strings.ContainsRune(",]}\r\n#", rune(t.src.data[end])) {
		end++
	}
	return strings.TrimSpace(string(t.src.data[off:end]))
}

func (t *tomlTree) elemStart(path string, i, fallback int) int {
	if at, ok := t.places[path+tomlIndex(i)]; ok {
		return at.val
	}
	return fallback
}

// Scan paths: "\x00k" before each key and "\x00i" before each list index,
// so that no key, whatever it holds, reads as another path.
func tomlKey(k string) string { return "\x00k" + k }
func tomlIndex(i int) string  { return "\x00i" + strconv.Itoa(i) }

// jsonPath turns a scan path into the key path errors print.
func jsonPath(p string) string {
	out := ""
	for _, seg := range strings.Split(p, "\x00")[1:] {
		if seg[0] == 'i' {
			n, _ := strconv.Atoi(seg[1:])
			out = index(out, n)
		} else {
			out = mapKey(out, seg[1:])
		}
	}
	return out
}

// tomlPlace is where a key path is first written: the offset of its key
// (or table header), of its value, and its rank in the file.
type tomlPlace struct {
	key, val, seq int
}

// tomlPlaces scans a TOML document that BurntSushi/toml has accepted and
// returns where each key path, and each element of a list, is first
// written. It follows table headers, arrays of tables, dotted keys, inline
// tables and lists (across lines), and skips strings and comments; since
// the document is known to be valid, it need not check anything.
func tomlPlaces(data []byte) map[string]tomlPlace {
	s := &tomlScan{d: data, out: map[string]tomlPlace{}, tables: map[string]int{}}
	s.document()
	return s.out
}

type tomlScan struct {
	d      []byte
	i      int
	out    map[string]tomlPlace
	seq    int
	tables map[string]int // array-of-tables path -> tables so far
}

func (s *tomlScan) record(path string, key, val int) {
	if _, ok := s.out[path]; !ok {
		s.out[path] = tomlPlace{key: key, val: val, seq: s.seq}
		s.seq++
	}
}

func (s *tomlScan) peek() byte {
	if s.i < len(s.d) {
		return s.d[s.i]
	}
	return 0
}

// space skips blanks, and with lines set also newlines and comments.
func (s *tomlScan) space(lines bool) {
	for s.i < len(s.d) {
		switch c := s.d[s.i]; {
		case c == ' ' || c == '\t':
			s.i++
		case lines && (c == '\n' || c == '\r'):
			s.i++
		case lines && c == '#':
			for s.i < len(s.d) && s.d[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

func (s *tomlScan) document() {
	table := ""
	for {
		s.space(true)
		if s.i >= len(s.d) {
			return
		}
		if s.peek() == '[' {
			table = s.header()
			continue
		}
		start := s.i
		path := s.keyPath(table, start)
		s.space(false)
		if s.peek() != '=' {
			s.skipLine() // cannot happen in a valid document
			continue
		}
		s.i++
		s.space(false)
		s.record(path, start, s.i)
		s.value(path)
	}
}

// header reads [a.b] or [[a.b]] and returns the table's path.
func (s *tomlScan) header() string {
	at := s.i
	s.i++
	array := s.peek() == '['
	if array {
		s.i++
	}
	s.space(false)
	segs := s.keys()
	path := ""
	for j, k := range segs {
		path += tomlKey(k)
		last := j == len(segs)-1
		if !last || !array {
			s.record(path, at, at)
		}
		if n, ok := s.tables[path]; ok && !last {
			path += tomlIndex(n - 1) // a sub-table of the latest table of the array
		}
	}
	if array {
		s.record(path, at, at)
		n := s.tables[path]
		s.tables[path] = n + 1
		path += tomlIndex(n)
		s.record(path, at, at)
	}
	s.skipLine()
	return path
}

// keyPath reads a dotted key under parent, recording each prefix at the
// offset of its first key.
func (s *tomlScan) keyPath(parent string, start int) string {
	path := parent
	segs := s.keys()
	for j, k := range segs {
		path += tomlKey(k)
		if j < len(segs)-1 {
			s.record(path, start, start)
		}
	}
	return path
}

// keys reads the parts of a dotted key.
func (s *tomlScan) keys() []string {
	var out []string
	for {
		s.space(false)
		out = append(out, s.key())
		s.space(false)
		if s.peek() != '.' {
			return out
		}
		s.i++
	}
}

func (s *tomlScan) key() string {
	switch s.peek() {
	case '"':
		start := s.i
		s.skipString()
		k, err := strconv.Unquote(string(s.d[start:s.i]))
		if err != nil {
			return string(s.d[start+1 : max(start+1, s.i-1)])
		}
		return k
	case '\'':
		start := s.i
		s.skipString()
		return string(s.d[start+1 : max(start+1, s.i-1)])
	}
	start := s.i
	for s.i < len(s.d) {
		c := s.d[s.i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			break
		}
		s.i++
	}
	if s.i == start && s.i < len(s.d) {
		s.i++ // never stall on a byte the scan does not expect
	}
	return string(s.d[start:s.i])
}

// value skips one value, recording the keys of inline tables and the
// elements of lists inside it.
func (s *tomlScan) value(path string) {
	switch s.peek() {
	case '"', '\'':
		s.skipString()
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.space(true)
			if s.i >= len(s.d) || s.peek() == ']' {
				s.i++
				return
			}
			s.record(path+tomlIndex(n), s.i, s.i)
			s.value(path + tomlIndex(n))
			s.space(true)
			if s.peek() == ',' {
				s.i++
			}
		}
	case '{':
		s.i++
		for {
			s.space(true)
			if s.i >= len(s.d) || s.peek() == '}' {
				s.i++
				return
			}
			start := s.i
			p := s.keyPath(path, start)
			s.space(false)
			if s.peek() == '=' {
				s.i++
			}
			s.space(false)
			s.record(p, start, s.i)
			s.value(p)
			s.space(true)
			if s.peek() == ',' {
				s.i++
			}
		}
	default:
		// A number, a boolean or a date, which may hold a space.
		for s.i < len(s.d) {
			switch s.d[s.i] {
			case ',', ']', '}', '\n', '\r', '#':
				return
			}
			s.i++
		}
	}
}

// skipString skips a basic or literal string, on one line or several.
func (s *tomlScan) skipString() {
	q := s.d[s.i]
	if s.i+2 < len(s.d) && s.d[s.i+1] == q && s.d[s.i+2] == q {
		s.i += 3
		for s.i < len(s.d) {
			if q == '"' && s.d[s.i] == '\\' {
				s.i += 2
				continue
			}
			if s.d[s.i] == q && s.i+2 < len(s.d) && s.d[s.i+1] == q && s.d[s.i+2] == q {
				s.i += 3
				// Up to two more quotes may close the string's contents.
				for n := 0; n < 2 && s.i < len(s.d) && s.d[s.i] == q; n++ {
					s.i++
				}
				return
			}
			s.i++
		}
		return
	}
	s.i++
	for s.i < len(s.d) && s.d[s.i] != '\n' {
		c := s.d[s.i]
		if q == '"' && c == '\\' {
			s.i += 2
			continue
		}
		s.i++
		if c == q {
			return
		}
	}
}

func (s *tomlScan) skipLine() {
	for s.i < len(s.d) && s.d[s.i] != '\n' {
		switch s.d[s.i] {
		case '"', '\'':
			s.skipString()
		default:
			s.i++
		}
	}
}
