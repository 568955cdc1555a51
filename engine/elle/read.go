package elle

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Limits bound what a reader accepts, so that a damaged or hostile file
// is refused with a message instead of exhausting memory.
type Limits struct {
	// MaxOpBytes is the size of one operation: a line of a JSON-lines
	// history, or an element of a JSON array.
	MaxOpBytes int
	// MaxOps is the number of operations in a history.
	MaxOps int
	// MaxElements is the number of list elements in all reads together
	// (a list-append history's reads return whole lists).
	MaxElements int
}

// DefaultLimits are the limits ReadFile and Parse apply: 16 MiB an
// operation, 10 million operations, 200 million read elements (about
// 3.2 GB of memory for the elements alone).
var DefaultLimits = Limits{MaxOpBytes: 16 << 20, MaxOps: 10_000_000, MaxElements: 200_000_000}

// ReadFile reads a JSON history (see Parse) from a file.
func ReadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseLimits(f, path, DefaultLimits)
}

// Parse reads a history in the JSON form Jepsen and elle-cli write: one
// JSON object per line, or a JSON array of objects, each like
//
//	{"index":0,"type":"invoke","f":"txn","value":[["append",1,2],["r",1,null]],"process":0,"time":12}
//
// "type" is "invoke", "ok", "fail" or "info"; micro-operation names are
// "append", "r" or "w"; keys and values are integers or strings. Names may
// keep the colon of the EDN keywords they were converted from (":ok",
// ":append"). "index" and "time" are optional. An operation whose
// "process" is a string (Jepsen's "nemesis") is not a client's and is left
// out. name is the file's name, for messages.
func Parse(r io.Reader, name string) (*History, error) {
	return ParseLimits(r, name, DefaultLimits)
}

// ParseLimits is Parse with limits of its own.
func ParseLimits(r io.Reader, name string, lim Limits) (*History, error) {
	rd := &reader{sp: splitter{r: bufio.NewReaderSize(r, 1<<16), line: 1, name: name, max: lim.MaxOpBytes}, lim: lim}
	h := &History{Name: name}
	if err := rd.read(h); err != nil {
		return nil, err
	}
	return h, nil
}

type reader struct {
	sp       splitter
	lim      Limits
	elements int
	arena    []Value
}

func (rd *reader) read(h *History) error {
	sp := &rd.sp
	c, err := sp.skipSpace()
	if err == io.EOF {
		return nil // an empty history: the check says it could not infer anything
	}
	if err != nil {
		return err
	}
	if c == ';' || c == '#' || c == '(' {
		return sp.errorf(sp.line, "%s", ednMessage)
	}
	array := c == '['
	if array {
		sp.next()
	}
	for n := 0; ; n++ {
		c, err := sp.skipSpace()
		switch {
		case err == io.EOF && array:
			return sp.errorf(sp.line, "the JSON array of operations is not closed: the file ends before its ]")
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		if array && c == ']' {
			sp.next()
			if c, err := sp.skipSpace(); err != io.EOF {
				if err != nil {
					return err
				}
				return sp.errorf(sp.line, "%q after the array of operations: want the file to end after its ]", c)
			}
			return nil
		}
		if array && n > 0 {
			if c != ',' {
				return sp.errorf(sp.line, "want a comma between operations, got %q", c)
			}
			sp.next()
			if _, err := sp.skipSpace(); err != nil {
				if err == io.EOF {
					return sp.errorf(sp.line, "the JSON array of operations is not closed: the file ends before its ]")
				}
				return err
			}
		}
		if len(h.Ops) >= rd.lim.MaxOps {
			return sp.errorf(sp.line, "more than %d operations, the most seedfall history reads: check a part of the history", rd.lim.MaxOps)
		}
		data, line, err := sp.value()
		if err != nil {
			return err
		}
		var op parsedOp
		p := opParser{b: data, name: sp.name, line: line, rd: rd}
		skip, err := p.op(&op)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		op.Line = line
		if !op.hasIndex {
			op.Index = int64(len(h.Ops))
		}
		h.Ops = append(h.Ops, op.Op)
	}
}

// ednMessage says what to do with an EDN history.
const ednMessage = "this looks like EDN (Clojure data, as Jepsen writes history.edn), which seedfall history does not read: " +
	"convert it to JSON first, one operation per line (for instance with edn2json, or jet: https://github.com/borkdude/jet); " +
	"keywords may stay strings with their colon, such as \":append\""

// splitter cuts a stream into JSON values without decoding them, counting
// lines, so that each operation is decoded on its own and its size is
// bounded before it is kept.
type splitter struct {
	r    *bufio.Reader
	name string
	line int
	max  int
	buf  []byte
}

func (s *splitter) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s", s.name, line, fmt.Sprintf(format, args...))
}

func (s *splitter) readErr(err error) error {
	return fmt.Errorf("%s:%d: %v", s.name, s.line, err)
}

// skipSpace skips white space and returns the next byte, unread.
func (s *splitter) skipSpace() (byte, error) {
	for {
		c, err := s.r.ReadByte()
		if err != nil {
			if err == io.EOF {
				return 0, err
			}
			return 0, s.readErr(err)
		}
		switch c {
		case '\n':
			s.line++
		case ' ', '\t', '\r':
		default:
			s.r.UnreadByte()
			return c, nil
		}
	}
}

func (s *splitter) next() { s.r.ReadByte() }

// value reads one JSON value (an object, an array, a string or a scalar)
// and returns its bytes and the line it begins on.
func (s *splitter) value() ([]byte, int, error) {
	start := s.line
	s.buf = s.buf[:0]
	depth := 0
	inString, escaped := false, false
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			if depth == 0 && !inString && len(s.buf) > 0 {
				return s.buf, start, nil
			}
			return nil, start, s.errorf(start, "the file ends inside an operation (a truncated file?)")
		}
		if err != nil {
			return nil, start, s.readErr(err)
		}
		if len(s.buf) >= s.max {
			return nil, start, s.errorf(start, "an operation longer than %d bytes, the most seedfall history reads: is this a history?", s.max)
		}
		if inString {
			s.buf = append(s.buf, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return s.buf, start, nil
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				s.r.UnreadByte()
				return s.buf, start, nil
			}
			depth--
			if depth == 0 {
				s.buf = append(s.buf, c)
				return s.buf, start, nil
			}
		case ' ', '\t', '\r', '\n', ',':
			if depth == 0 {
				s.r.UnreadByte()
				return s.buf, start, nil
			}
		}
		if c == '\n' {
			s.line++
		}
		s.buf = append(s.buf, c)
	}
}

// parsedOp is an Op and whether its index was given.
type parsedOp struct {
	Op
	hasIndex bool
}

// opParser decodes one operation's JSON object. It is written by hand
// rather than with encoding/json so that a list-append history's long
// reads decode without an interface value per element, and so that an
// error names the field it is about.
type opParser struct {
	b    []byte
	i    int
	name string
	line int
	rd   *reader
}

// errorf is an error at the parser's position, naming the field.
func (p *opParser) errorf(field, format string, args ...any) error {
	line := p.line + bytes.Count(p.b[:min(p.i, len(p.b))], []byte{'\n'})
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	return fmt.Errorf("%s:%d: %s", p.name, line, msg)
}

func (p *opParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *opParser) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *opParser) expect(field string, c byte) error {
	if got := p.peek(); got != c {
		return p.errorf(field, "want %q, got %s", c, p.describe())
	}
	p.i++
	return nil
}

// describe names what is at the parser's position, for an error.
func (p *opParser) describe() string {
	if p.i >= len(p.b) {
		return "the end of the operation"
	}
	end := p.i + 1
	for end < len(p.b) && end-p.i < 20 && !strings.ContainsRune(",]}\n", rune(p.b[end])) {
		end++
	}
	return strconv.Quote(string(p.b[p.i:end]))
}

func (p *opParser) op(o *parsedOp) (skip bool, err error) {
	if c := p.peek(); c != '{' {
		if c == '[' {
			return false, p.errorf("", "want an operation, a JSON object like {\"type\":\"ok\", ...}, got an array (an array of arrays?)")
		}
		return false, p.errorf("", "want an operation, a JSON object like {\"type\":\"ok\", ...}, got %s", p.describe())
	}
	p.i++
	var hasType, hasProcess, hasValue bool
	var valueErr error
	if p.peek() == '}' {
		p.i++
		return false, p.errorf("", "an empty operation: want at least \"type\", \"process\" and \"value\"")
	}
	for {
		if c := p.peek(); c != '"' {
			if c == ':' {
				return false, p.errorf("", "%s", ednMessage)
			}
			return false, p.errorf("", "want a field name in double quotes, got %s", p.describe())
		}
		key, err := p.str("")
		if err != nil {
			return false, err
		}
		if err := p.expect(key, ':'); err != nil {
			return false, err
		}
		switch key {
		case "index":
			n, err := p.int("index")
			if err != nil {
				return false, err
			}
			o.Index, o.hasIndex = n, true
		case "type":
			s, err := p.name1("type")
			if err != nil {
				return false, err
			}
			switch s {
			case "invoke":
				o.Type = Invoke
			case "ok":
				o.Type = OK
			case "fail":
				o.Type = Fail
			case "info":
				o.Type = Info
			default:
				return false, p.errorf("type", "want \"invoke\", \"ok\", \"fail\" or \"info\", got %q", s)
			}
			hasType = true
		case "process":
			switch c := p.peek(); {
			case c == '"':
				// Jepsen's nemesis (or another non-client process): not a
				// transaction.
				if _, err := p.str("process"); err != nil {
					return false, err
				}
				skip = true
			default:
				n, err := p.int("process")
				if err != nil {
					return false, err
				}
				o.Process = n
			}
			hasProcess = true
		case "f":
			if p.peek() == 'n' {
				if err := p.null("f"); err != nil {
					return false, err
				}
				break
			}
			s, err := p.name1("f")
			if err != nil {
				return false, err
			}
			o.F = s
		case "time":
			n, err := p.number("time", true)
			if err != nil {
				return false, err
			}
			o.Time, o.HasTime = n, true
		case "value":
			// A nemesis's value is no transaction; whether this op is a
			// nemesis's may only show after its value.
			start := p.i
			mops, err := p.mops()
			if err != nil {
				p.i = start
				if err := p.skip("value"); err != nil {
					return false, err
				}
				valueErr = err
			}
			o.Value, hasValue = mops, true
		default:
			if err := p.skip(key); err != nil {
				return false, err
			}
		}
		switch p.peek() {
		case ',':
			p.i++
			continue
		case '}':
			p.i++
		default:
			return false, p.errorf("", "want a comma or } after field %q, got %s", key, p.describe())
		}
		break
	}
	switch {
	case skip:
		return true, nil
	case valueErr != nil:
		return false, valueErr
	case !hasType:
		return false, p.errorf("", "no \"type\": want \"invoke\", \"ok\", \"fail\" or \"info\"")
	case !hasProcess:
		return false, p.errorf("", "no \"process\": want the number of the client that ran the transaction")
	case !hasValue:
		return false, p.errorf("", "no \"value\": want the transaction, a list of micro-operations like [[\"append\",1,2],[\"r\",1,null]]")
	}
	return false, nil
}

// mops decodes a transaction: [[f, k, v], ...].
func (p *opParser) mops() ([]Mop, error) {
	if p.peek() != '[' {
		return nil, p.errorf("value", "want the transaction, a list of micro-operations like [[\"append\",1,2],[\"r\",1,null]], got %s", p.describe())
	}
	p.i++
	var mops []Mop
	if p.peek() == ']' {
		p.i++
		return mops, nil
	}
	for n := 0; ; n++ {
		field := "value[" + strconv.Itoa(n) + "]"
		m, err := p.mop(field)
		if err != nil {
			return nil, err
		}
		mops = append(mops, m)
		switch p.peek() {
		case ',':
			p.i++
			continue
		case ']':
			p.i++
			return mops, nil
		default:
			return nil, p.errorf("value", "want a comma or ] after %s, got %s", field, p.describe())
		}
	}
}

func (p *opParser) mop(field string) (Mop, error) {
	var m Mop
	if p.peek() != '[' {
		return m, p.errorf(field, "want a micro-operation like [\"append\",1,2], got %s", p.describe())
	}
	p.i++
	f, err := p.name1(field)
	if err != nil {
		return m, err
	}
	switch f {
	case "append":
		m.F = Append
	case "r":
		m.F = Read
	case "w":
		m.F = Write
	default:
		return m, p.errorf(field, "micro-operation %q: want \"append\", \"r\" or \"w\"", f)
	}
	if err := p.expect(field, ','); err != nil {
		return m, err
	}
	if m.Key, err = p.scalar(field + " key"); err != nil {
		return m, err
	}
	if p.peek() == ']' {
		// ["r", k] as Jepsen writes an invocation's read.
		p.i++
		if m.F != Read {
			return m, p.errorf(field, "%s of key %v without a value", f, m.Key)
		}
		m.Nil = true
		return m, nil
	}
	if err := p.expect(field, ','); err != nil {
		return m, err
	}
	switch c := p.peek(); {
	case c == 'n':
		if err := p.null(field + " value"); err != nil {
			return m, err
		}
		if m.F != Read {
			return m, p.errorf(field, "%s of nil to key %v: want an integer or a string", f, m.Key)
		}
		m.Nil = true
	case c == '[':
		if m.F != Read {
			return m, p.errorf(field, "%s of a list to key %v: want an integer or a string", f, m.Key)
		}
		l, err := p.list(field + " value")
		if err != nil {
			return m, err
		}
		m.List, m.IsList = l, true
	default:
		if m.Value, err = p.scalar(field + " value"); err != nil {
			return m, err
		}
	}
	if err := p.expect(field, ']'); err != nil {
		return m, err
	}
	return m, nil
}

// list decodes a list-append read's value: [1, 2, 3].
func (p *opParser) list(field string) ([]Value, error) {
	p.i++ // [
	if p.peek() == ']' {
		p.i++
		return []Value{}, nil
	}
	// Elements go straight into a shared arena, and the list is a slice of
	// it: no allocation per read beyond the arena's chunks.
	rd := p.rd
	start := len(rd.arena)
	for {
		v, err := p.scalar(field)
		if err != nil {
			return nil, err
		}
		if len(rd.arena) == cap(rd.arena) {
			// A new chunk, with the list so far moved to its start.
			chunk := make([]Value, 0, max(1<<14, 2*(len(rd.arena)-start)))
			rd.arena = append(chunk, rd.arena[start:]...)
			start = 0
		}
		rd.arena = append(rd.arena, v)
		switch p.peek() {
		case ',':
			p.i++
			continue
		case ']':
			p.i++
		default:
			return nil, p.errorf(field, "want a comma or ] in the list, got %s", p.describe())
		}
		break
	}
	n := len(rd.arena) - start
	rd.elements += n
	if rd.elements > rd.lim.MaxElements {
		return nil, p.errorf(field, "the reads hold more than %d elements in all, the most seedfall history reads: check a part of the history", rd.lim.MaxElements)
	}
	return rd.arena[start : start+n : start+n], nil
}

// scalar decodes a key or a value: an integer or a string.
func (p *opParser) scalar(field string) (Value, error) {
	switch c := p.peek(); {
	case c == '"':
		s, err := p.str(field)
		if err != nil {
			return Value{}, err
		}
		return Str(s), nil
	case c == '-' || c >= '0' && c <= '9':
		n, err := p.number(field, false)
		if err != nil {
			return Value{}, err
		}
		return Int(n), nil
	}
	return Value{}, p.errorf(field, "want an integer or a string, got %s", p.describe())
}

// number decodes an integer; with fractions, a number with a fraction or
// an exponent is truncated to one (a time in nanoseconds written 1.5e9).
func (p *opParser) number(field string, fractions bool) (int64, error) {
	p.space()
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-0123456789.eE", p.b[p.i]) >= 0 {
		p.i++
	}
	s := string(p.b[start:p.i])
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if fractions && math.Abs(f) < 9e18 {
			return int64(f), nil
		}
		p.i = start
		return 0, p.errorf(field, "want an integer (a whole number within 64 bits) or a string, got %s", s)
	}
	p.i = start
	return 0, p.errorf(field, "want a number, got %s", p.describe())
}

func (p *opParser) int(field string) (int64, error) {
	if c := p.peek(); c != '-' && (c < '0' || c > '9') {
		return 0, p.errorf(field, "want an integer, got %s", p.describe())
	}
	return p.number(field, false)
}

func (p *opParser) null(field string) error {
	p.space()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return nil
	}
	return p.errorf(field, "want null, got %s", p.describe())
}

// name1 decodes a name, such as a type or a micro-operation: a string,
// without the colon of an EDN keyword.
func (p *opParser) name1(field string) (string, error) {
	if p.peek() != '"' {
		return "", p.errorf(field, "want a string, got %s", p.describe())
	}
	s, err := p.str(field)
	return strings.TrimPrefix(s, ":"), err
}

// str decodes a JSON string.
func (p *opParser) str(field string) (string, error) {
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return "", p.errorf(field, "want a string, got %s", p.describe())
	}
	start := p.i
	p.i++
	plain := true
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			plain = false
			p.i += 2
			continue
		case '"':
			p.i++
			if plain {
				return string(p.b[start+1 : p.i-1]), nil
			}
			var s string
			if err := json.Unmarshal(p.b[start:p.i], &s); err != nil {
				p.i = start
				return "", p.errorf(field, "a string that is not valid JSON: %v", err)
			}
			return s, nil
		}
		p.i++
	}
	p.i = start
	return "", p.errorf(field, "a string that does not end")
}

// skip passes over a value of a field this reader does not use.
func (p *opParser) skip(field string) error {
	p.space()
	start := p.i
	depth := 0
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch c {
		case '"':
			if _, err := p.str(field); err != nil {
				return err
			}
			if depth == 0 {
				return nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				if p.i == start {
					return p.errorf(field, "want a value, got %s", p.describe())
				}
				return nil
			}
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		case ',':
			if depth == 0 {
				if p.i == start {
					return p.errorf(field, "want a value, got %s", p.describe())
				}
				return nil
			}
		}
		p.i++
	}
	if depth > 0 {
		return p.errorf(field, "a value that does not end")
	}
	return nil
}
