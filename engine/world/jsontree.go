package world

import "bytes"

// JSONValue is a JSON value that remembers the line it starts on, for other
// files seedfall reads (schedules) that want errors like the world file's:
// ParseJSON reads them with the world file's own parser, syntax messages and
// nesting limit.
type JSONValue struct {
	Kind    string // "null", "bool", "number", "string", "object" or "array"
	Line    int
	Bool    bool
	Str     string // a string's contents, or a number's text
	Members []JSONMember
	Elems   []*JSONValue
	// Describe says what the value is, for "want X, got Y" messages:
	// null, true, 12, "text" (cut at 40 bytes), an object, a list.
	Describe string
}

// JSONMember is one key of an object, in file order.
type JSONMember struct {
	Key  string
	Line int
	Val  *JSONValue
}

// ParseJSON parses data, read from file, into a JSONValue tree. An empty
// file gets "empty file; " and the hint; other problems are *Error values
// with the file and line, as the world file's are.
func ParseJSON(file string, data []byte, emptyHint string) (*JSONValue, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &Error{File: file, Line: 1, Msg: "empty file; " + emptyHint}
	}
	v, err := newSource(file, data).parse()
	if err != nil {
		return nil, err
	}
	return exportJSON(v), nil
}

var kindNames = [...]string{kindNull: "null", kindBool: "bool", kindNumber: "number", kindString: "string", kindObject: "object", kindArray: "array"}

func exportJSON(v *value) *JSONValue {
	out := &JSONValue{Kind: kindNames[v.kind], Line: v.src.line(v.start), Bool: v.b, Str: v.str, Describe: describe(v)}
	for _, m := range v.members {
		out.Members = append(out.Members, JSONMember{Key: m.key, Line: m.line, Val: exportJSON(m.val)})
	}
	for _, e := range v.elems {
		out.Elems = append(out.Elems, exportJSON(e))
	}
	return out
}
