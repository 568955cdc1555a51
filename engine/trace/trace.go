// Package trace owns a run's event trace: every node's output with its
// virtual timestamp and every lifecycle event and fault, in the order they
// happened. The digest of the trace is what "the same run" means: two runs
// with the same binaries, world, seed and schedule have byte-identical traces.
package trace

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
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

	// gap marks the line Lines puts where lines were not kept: it is about
	// every node, so Render shows it whatever node it is asked for.
	gap bool
}

// Gap reports whether l is the line that stands for lines a trace did not
// keep in memory (see Trace.Lines); it is not part of the digest.
func (l Line) Gap() bool { return l.gap }

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

// What a trace keeps of its lines in memory: the first lines while they
// cost at most KeepHead bytes, then only the last lines that cost at most
// KeepTail bytes. A line costs its text plus LineCost for the rest of it.
// Together they bound a run's lines at 64 MiB however much its programs
// print: half a million lines of 64 bytes, more than anyone reads, yet both
// the start of a run and its end (the failure) are always there. The digest is
// computed over every line as it is added, so it is the same whether or
// not all of them are kept (docs/limits.md, "Output and the watchdog").
const (
	KeepHead = 48 << 20
	KeepTail = 16 << 20
	LineCost = 64 // a Line without its text is 56 bytes on 64-bit hosts
)

// Trace accumulates lines and their digest.
type Trace struct {
	headMax, tailMax int

	head      []Line
	headBytes int
	full      bool   // a line did not fit the head: every later line goes to the tail
	tail      []Line // tail[off:] are kept, oldest first
	off       int
	tailBytes int

	gapLines int   // lines dropped from the tail
	gapBytes int64 // their text
	gapFrom  int64 // At of the first dropped line
	gapTo    int64 // At of the last one
	h        hash.Hash
	buf      []byte
}

// New returns an empty trace that keeps KeepHead and KeepTail bytes.
func New() *Trace { return NewBounded(KeepHead, KeepTail) }

// NewBounded returns an empty trace that keeps the first lines costing up
// to head bytes and then the last lines costing up to tail bytes (at least
// the newest line).
func NewBounded(head, tail int) *Trace {
	return &Trace{headMax: head, tailMax: tail, h: sha256.New()}
}

// Add appends a line.
func (t *Trace) Add(l Line) {
	t.buf = l.append(t.buf[:0])
	t.buf = append(t.buf, '\n')
	t.h.Write(t.buf)

	l.gap = false
	cost := len(l.Text) + LineCost
	if !t.full && t.headBytes+cost <= t.headMax {
		t.head = append(t.head, l)
		t.headBytes += cost
		return
	}
	t.full = true
	t.tail = append(t.tail, l)
	t.tailBytes += cost
	for t.tailBytes > t.tailMax && len(t.tail)-t.off > 1 {
		d := &t.tail[t.off]
		if t.gapLines == 0 {
			t.gapFrom = d.At
		}
		t.gapTo = d.At
		t.gapLines++
		t.gapBytes += int64(len(d.Text))
		t.tailBytes -= len(d.Text) + LineCost
		*d = Line{} // let its text go
		t.off++
	}
	// Move the kept lines down once the dropped ones are half the slice:
	// each line is moved O(1) times on average, and the slice stays within
	// about twice what is kept.
	if t.off >= 1024 && t.off >= len(t.tail)/2 {
		n := copy(t.tail, t.tail[t.off:])
		clear(t.tail[n:])
		t.tail, t.off = t.tail[:n], 0
	}
}

// Fold adds an event that is part of the run but not of its printed lines,
// such as a network segment, to the digest only.
func (t *Trace) Fold(b []byte) {
	t.h.Write(b)
}

// Lines returns the lines kept so far, in order. When some were not kept,
// one Event line of node "world" stands in their place, at the time of the
// first of them (Line.Gap reports it): it says how many lines and bytes of
// text are missing and that the digest covers them. The slice must not be
// modified.
func (t *Trace) Lines() []Line {
	if len(t.tail) == t.off {
		return t.head
	}
	out := make([]Line, 0, len(t.head)+1+len(t.tail)-t.off)
	out = append(out, t.head...)
	if t.gapLines > 0 {
		out = append(out, t.Gap())
	}
	return append(out, t.tail[t.off:]...)
}

// Dropped is how many lines, and bytes of their text, the trace did not
// keep.
func (t *Trace) Dropped() (lines int, bytes int64) { return t.gapLines, t.gapBytes }

// Gap is the line that stands for the lines not kept (see Lines).
func (t *Trace) Gap() Line {
	var b []byte
	b = strconv.AppendInt(b, int64(t.gapLines), 10)
	b = append(b, " lines ("...)
	b = strconv.AppendInt(b, t.gapBytes, 10)
	b = append(b, " bytes) from "...)
	b = AppendTime(b, t.gapFrom, 0)
	b = append(b, " to "...)
	b = AppendTime(b, t.gapTo, 0)
	b = append(b, " not kept: a run keeps the first "...)
	b = appendMiB(b, t.headMax)
	b = append(b, " and the last "...)
	b = appendMiB(b, t.tailMax)
	b = append(b, " of its lines in memory; the digest covers every line"...)
	return Line{At: t.gapFrom, Node: "world", Kind: Event, Text: string(b), gap: true}
}

// appendMiB writes n bytes as "48 MiB", or as "N bytes" when n is not a
// whole number of MiB.
func appendMiB(b []byte, n int) []byte {
	if n > 0 && n%(1<<20) == 0 {
		return append(strconv.AppendInt(b, int64(n>>20), 10), " MiB"...)
	}
	return append(strconv.AppendInt(b, int64(n), 10), " bytes"...)
}

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

// Render writes the lines of one node (or all when node is "") as text. The
// line that stands for lines not kept is written for any node.
func Render(lines []Line, node string) string {
	var b strings.Builder
	_ = Write(&b, lines, node)
	return b.String()
}

// Write writes what Render returns to w, a line at a time, without making
// the whole text in memory first.
func Write(w io.Writer, lines []Line, node string) error {
	var buf []byte
	for _, l := range lines {
		if node != "" && l.Node != node && !l.gap {
			continue
		}
		buf = l.append(buf[:0])
		buf = append(buf, '\n')
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// Shape is text with each run of digits replaced by one '#', cut to most
// bytes (0: no cut): lines that differ only in their numbers have one
// shape.
func Shape(text string, most int) string {
	var b strings.Builder
	digits := false
	for _, r := range text {
		if most > 0 && b.Len() >= most {
			break
		}
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}
