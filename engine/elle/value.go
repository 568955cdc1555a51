package elle

import (
	"cmp"
	"encoding/json"
	"strconv"
	"unique"
)

// Value is a key, or a value written, appended or read: an integer or a
// string, as Jepsen histories have them (mostly integers). It is small and
// comparable, so that maps can be keyed by it: a string is interned, and
// two Values of the same string share one handle.
//
// A Value never stands for nil: a read that returned nil says so in its
// micro-operation (Mop.Nil).
type Value struct {
	n int64
	s unique.Handle[string] // the zero handle for an integer
}

// Int is the Value of an integer.
func Int(n int64) Value { return Value{n: n} }

// Str is the Value of a string.
func Str(s string) Value { return Value{s: unique.Make(s)} }

// IsString says whether v is a string (else an integer).
func (v Value) IsString() bool { return v.s != unique.Handle[string]{} }

// Int64 is v's integer (0 for a string).
func (v Value) Int64() int64 { return v.n }

// Text is v's string ("" for an integer).
func (v Value) Text() string {
	if v.IsString() {
		return v.s.Value()
	}
	return ""
}

// String is v as the explanations show it: 5, or "x" quoted.
func (v Value) String() string {
	if v.IsString() {
		return strconv.Quote(v.s.Value())
	}
	return strconv.FormatInt(v.n, 10)
}

// MarshalJSON writes v as a JSON number or string.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.IsString() {
		// JSON's quoting, not Go's: no \x escapes, invalid UTF-8 replaced.
		return json.Marshal(v.s.Value())
	}
	return strconv.AppendInt(nil, v.n, 10), nil
}

// CompareValues orders values for output: integers before strings, each
// in their natural order.
func CompareValues(a, b Value) int {
	as, bs := a.IsString(), b.IsString()
	switch {
	case as && bs:
		return cmp.Compare(a.s.Value(), b.s.Value())
	case as:
		return 1
	case bs:
		return -1
	}
	return cmp.Compare(a.n, b.n)
}

// compareLists orders lists of values by length, then element by element:
// the order Elle sorts the reads of a key in before comparing them.
func compareLists(a, b []Value) int {
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	for i := range a {
		if c := CompareValues(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// isPrefix says whether a is a prefix of b.
func isPrefix(a, b []Value) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// listString writes a list as the explanations show it: [1 2 3].
func listString(l []Value) string {
	b := []byte{'['}
	for i, v := range l {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, v.String()...)
	}
	return string(append(b, ']'))
}
