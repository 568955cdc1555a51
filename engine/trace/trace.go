// Package trace owns a run's event trace: every node's output with its
// virtual timestamp and every lifecycle event and fault, in the order they
// happened. The digest of the trace is what "the same run" means: two runs
// with the same binaries, world, seed and schedule have byte-identical traces.
package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"strings"
)

// Kind tells what a line is.
type Kind byte

const (
	Stdout Kind = '|' // a line the program wrote to stdout
	Stderr Kind = '!' // a line the program wrote to stderr
	Event  Kind = '-' // something the world did: start, exit, crash, restart
)

// Line is one entry of the trace.
type Line struct {
	At   int64  // virtual ns
	Node string // program name
	Inc  int    // incarnation, from 1
	Kind Kind
	Text string
}

// String renders the line as logs and the digest see it:
// "     1.204518233 server#2 | text".
func (l Line) String() string {
	var b []byte
	b = l.append(b)
	return string(b)
}

func (l Line) append(b []byte) []byte {
	b = AppendTime(b, l.At, 16)
	b = append(b, ' ')
	b = append(b, l.Node...)
	if l.Inc > 0 { // lines about the network or the world have no incarnation
		b = append(b, '#')
		b = strconv.AppendInt(b, int64(l.Inc), 10)
	}
	b = append(b, ' ', byte(l.Kind), ' ')
	b = append(b, l.Text...)
	return b
}

// AppendTime writes virtual ns as seconds with nine decimals, right-aligned
// in width columns.
func AppendTime(b []byte, ns int64, width int) []byte {
	neg := ns < 0
	if neg {
		ns = -ns
	}
	var tmp [32]byte
	i := len(tmp)
	frac := ns % 1e9
	for k := 0; k < 9; k++ {
		i--
		tmp[i] = byte('0' + frac%10)
		frac /= 10
	}
	i--
	tmp[i] = '.'
	sec := ns / 1e9
	for {
		i--
		tmp[i] = byte('0' + sec%10)
		sec /= 10
		if sec == 0 {
			break
		}
	}
	if neg {
		i--
		tmp[i] = '-'
	}
	for pad := width - (len(tmp) - i); pad > 0; pad-- {
		b = append(b, ' ')
	}
	return append(b, tmp[i:]...)
}

// Trace accumulates lines and their digest.
type Trace struct {
	lines []Line
	h     hash.Hash
	buf   []byte
}

// New returns an empty trace.
func New() *Trace { return &Trace{h: sha256.New()} }

// Add appends a line.
func (t *Trace) Add(l Line) {
	t.lines = append(t.lines, l)
	t.buf = l.append(t.buf[:0])
	t.buf = append(t.buf, '\n')
	t.h.Write(t.buf)
}

// Fold adds an event that is part of the run but not of its printed lines,
// such as a network segment, to the digest only.
func (t *Trace) Fold(b []byte) {
	t.h.Write(b)
}

// Lines returns every line so far. The slice must not be modified.
func (t *Trace) Lines() []Line { return t.lines }

// Digest is the hex SHA-256 of the rendered trace so far plus a closing
// summary (the caller's, e.g. the verdict and step count).
func (t *Trace) Digest(summary string) string {
	h := sha256.New()
	// Continue from a copy of the running state: hash.Hash has no Clone in
	// the interface, so re-hash the small summary over the marshalled state.
	type marshaler interface{ MarshalBinary() ([]byte, error) }
	type unmarshaler interface{ UnmarshalBinary([]byte) error }
	state, err := t.h.(marshaler).MarshalBinary()
	if err == nil {
		err = h.(unmarshaler).UnmarshalBinary(state)
	}
	if err != nil {
		panic("trace: sha256 state: " + err.Error())
	}
	h.Write([]byte(summary))
	return hex.EncodeToString(h.Sum(nil))
}

// Render writes the lines of one node (or all when node is "") as text.
func Render(lines []Line, node string) string {
	var b strings.Builder
	var buf []byte
	for _, l := range lines {
		if node != "" && l.Node != node {
			continue
		}
		buf = l.append(buf[:0])
		b.Write(buf)
		b.WriteByte('\n')
	}
	return b.String()
}
