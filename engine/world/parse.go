package world

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// kind is the JSON type of a value.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindObject
	kindArray
)

// value is one JSON value with its place in the source, so that every error
// found while decoding can name the line it comes from.
type value struct {
	src     *source // the file, preset or -set it comes from
	kind    kind
	start   int // offset of its first byte
	end     int // offset just past its last byte
	b       bool
	str     string // a string's contents, or a number's text
	members []member
	elems   []*value
}

// member is one key of an object, in file order.
type member struct {
	key  string
	line int     // line of the key
	src  *source // where the key is written
	val  *value
}

// source is a config file's bytes and where its lines start. Values merged
// from several sources (extends, a profile, a preset, -set) keep their own,
// so that an error names the file and line the value was written on.
type source struct {
	file  string
	data  []byte
	lines []int  // offset of the first byte of each line
	dir   string // directory that relative paths in it resolve against
	// prefix goes before key paths in errors: "profiles.ci." for a
	// profile's values, whose world path is "duration" but which the user
	// wrote at profiles.ci.duration.
	prefix string
	via    string // said after an error's message, as `set by preset "resilient"`
	at     int    // when set, the line of every value: a preset's values are at the line naming it
	noLine bool   // a -set value has no line
	toml   bool   // the file is TOML (see toml.go), not JSON
}

func newSource(file string, data []byte) *source {
	s := &source{file: file, data: data, lines: []int{0}}
	for i, c := range data {
		if c == '\n' {
			s.lines = append(s.lines, i+1)
		}
	}
	return s
}

// line returns the 1-based line holding the byte at off.
func (s *source) line(off int) int {
	if s.noLine {
		return 0
	}
	if s.at > 0 {
		return s.at
	}
	return sort.SearchInts(s.lines, off+1)
}

// parse reads the whole file into a value tree. The file is checked first
// with encoding/json's validator, whose error offsets are absolute; the
// Decoder's own offsets for syntax errors are relative to the value it was
// reading and would give wrong lines.
func (s *source) parse() (*value, error) {
	if err := s.checkDepth(); err != nil {
		return nil, err
	}
	if s.toml {
		return s.parseTOML()
	}
	var raw json.RawMessage
	if err := json.Unmarshal(s.data, &raw); err != nil {
		return nil, s.syntaxError(err)
	}
	p := &parser{src: s, dec: json.NewDecoder(bytes.NewReader(s.data))}
	p.dec.UseNumber()
	tok, start, err := p.next()
	if err != nil {
		return nil, s.syntaxError(err)
	}
	v, err := p.value(tok, start)
	if err != nil {
		return nil, s.syntaxError(err)
	}
	return v, nil
}

func (s *source) syntaxError(err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return s.endError()
		}
		return &Error{File: s.file, Line: 1, Msg: "syntax error: " + err.Error()}
	}
	if len(bytes.TrimSpace(s.data)) == 0 {
		return &Error{File: s.file, Line: 1, Msg: "empty file; want a JSON object such as {\"workload\": {\"name\": \"client\", \"pkg\": \"./client\"}}"}
	}
	if se.Offset >= int64(len(s.data)) && strings.Contains(se.Error(), "end of JSON input") {
		return s.endError()
	}
	at := max(int(se.Offset)-1, 0)
	msg := "syntax error: " + se.Error()
	if c := s.data[at]; c == '}' || c == ']' {
		prev := bytes.TrimRight(s.data[:at], " \t\r\n")
		if len(prev) > 0 && prev[len(prev)-1] == ',' {
			msg = fmt.Sprintf("syntax error: trailing comma before '%c'; JSON allows none", c)
		}
	}
	return &Error{File: s.file, Line: s.line(at), Msg: msg}
}

func (s *source) endError() error {
	return &Error{File: s.file, Line: s.line(max(len(s.data)-1, 0)),
		Msg: "syntax error: the file ends early; is a closing '}' or ']' missing?"}
}

type parser struct {
	src  *source
	dec  *json.Decoder
	prev int // offset just past the last token read
}

// next reads one token and returns it with the offset of its first byte.
func (p *parser) next() (json.Token, int, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, 0, err
	}
	start := p.prev
	for start < len(p.src.data) {
		c := p.src.data[start]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != ',' && c != ':' {
			break
		}
		start++
	}
	p.prev = int(p.dec.InputOffset())
	return tok, start, nil
}

func (p *parser) value(tok json.Token, start int) (*value, error) {
	v := &value{src: p.src, start: start}
	switch t := tok.(type) {
	case nil:
		v.kind = kindNull
	case bool:
		v.kind, v.b = kindBool, t
	case json.Number:
		v.kind, v.str = kindNumber, string(t)
	case string:
		v.kind, v.str = kindString, t
	case json.Delim:
		switch t {
		case '{':
			v.kind = kindObject
			for {
				tok, kstart, err := p.next()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim('}') {
					break
				}
				key, ok := tok.(string)
				if !ok {
					return nil, fmt.Errorf("object key is %v, not a string", tok)
				}
				tok, vstart, err := p.next()
				if err != nil {
					return nil, err
				}
				val, err := p.value(tok, vstart)
				if err != nil {
					return nil, err
				}
				v.members = append(v.members, member{key: key, line: p.src.line(kstart), src: p.src, val: val})
			}
		case '[':
			v.kind = kindArray
			for {
				tok, estart, err := p.next()
				if err != nil {
					return nil, err
				}
				if tok == json.Delim(']') {
					break
				}
				e, err := p.value(tok, estart)
				if err != nil {
					return nil, err
				}
				v.elems = append(v.elems, e)
			}
		default:
			return nil, fmt.Errorf("unexpected %q", t)
		}
	}
	v.end = p.prev
	return v, nil
}

// describe says what a value is, for "want X, got Y" messages.
func describe(v *value) string {
	switch v.kind {
	case kindNull:
		return "null"
	case kindBool:
		if v.b {
			return "true"
		}
		return "false"
	case kindNumber:
		return v.str
	case kindString:
		s := v.str
		if len(s) > 40 {
			s = s[:37] + "..."
		}
		return fmt.Sprintf("%q", s)
	case kindObject:
		return "an object"
	default:
		return "a list"
	}
}
