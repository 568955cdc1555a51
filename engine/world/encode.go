package world

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// JSON returns the world as a JSON world file: the resolved world that
// `seedfall config` prints, every field with its value after extends, the
// profile, -set and the preset, so it stands alone (it names no file to
// extend and no profiles). Host paths are relative to w.Dir: parsed with
// dir w.Dir, as Parse(data, "world.json", w.Dir), it gives an equal world.
func (w *World) JSON() ([]byte, error) {
	return w.Resolved(false)
}

// TOML is JSON in TOML: the same resolved world, top-level fields first,
// then [faults], [preempt] and the other tables, then [[nodes]],
// [[workloads]] and [[links]]. Parse(data, "world.toml", w.Dir) gives an
// equal world.
func (w *World) TOML() ([]byte, error) {
	j, err := w.JSON()
	if err != nil {
		return nil, err
	}
	return JSONToTOML(j, "world.json")
}

// JSONToTOML rewrites a JSON world file, or any JSON object, as TOML,
// keeping its keys and their order (keys holding tables go after the
// others, as TOML requires). Nulls, which TOML cannot write, are left out
// of objects; file names the data in errors.
func JSONToTOML(data []byte, file string) ([]byte, error) {
	v, err := newSource(file, data).parse()
	if err != nil {
		return nil, err
	}
	if v.kind != kindObject {
		return nil, errIn(v.src, v.src.line(v.start), "", "want a JSON object at the top of the file, got "+describe(v))
	}
	var b bytes.Buffer
	if err := tomlTable(&b, v, ""); err != nil {
		return nil, err
	}
	return bytes.TrimLeft(b.Bytes(), "\n"), nil
}

// TOMLToJSON rewrites a TOML world file as JSON, keeping its keys in the
// order they are written, indented by two spaces. file names the data in
// errors.
func TOMLToJSON(data []byte, file string) ([]byte, error) {
	src := newSource(file, data)
	src.toml = true
	v, err := src.parse()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	jsonValue(&b, v)
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err) // a bug in jsonValue
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func jsonValue(b *bytes.Buffer, v *value) {
	switch v.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kindNumber:
		b.WriteString(v.str)
	case kindString:
		s, _ := json.Marshal(v.str)
		b.Write(s)
	case kindObject:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteByte(':')
			jsonValue(b, m.val)
		}
		b.WriteByte('}')
	case kindArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			jsonValue(b, e)
		}
		b.WriteByte(']')
	}
}

// tableList reports whether v is written as an array of tables: a
// non-empty list of objects only.
func tableList(v *value) bool {
	if v.kind != kindArray || len(v.elems) == 0 {
		return false
	}
	for _, e := range v.elems {
		if e.kind != kindObject {
			return false
		}
	}
	return true
}

// tomlTable writes the members of the object v, the table at header: its
// plain keys, then its tables and arrays of tables under their headers.
func tomlTable(b *bytes.Buffer, v *value, header string) error {
	for _, m := range v.members {
		if m.val.kind == kindNull || m.val.kind == kindObject && len(m.val.members) > 0 || tableList(m.val) {
			continue
		}
		b.WriteString(tomlKeyText(m.key))
		b.WriteString(" = ")
		if err := tomlInline(b, m.val); err != nil {
			return err
		}
		b.WriteByte('\n')
	}
	for _, m := range v.members {
		name := tomlKeyText(m.key)
		if header != "" {
			name = header + "." + name
		}
		switch {
		case m.val.kind == kindObject && len(m.val.members) > 0:
			fmt.Fprintf(b, "\n[%s]\n", name)
			if err := tomlTable(b, m.val, name); err != nil {
				return err
			}
		case tableList(m.val):
			for _, e := range m.val.elems {
				fmt.Fprintf(b, "\n[[%s]]\n", name)
				if err := tomlTable(b, e, name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// tomlInline writes a value on one line: a scalar, a list or an inline
// table.
func tomlInline(b *bytes.Buffer, v *value) error {
	switch v.kind {
	case kindNull:
		return errIn(v.src, v.src.line(v.start), "", "null in a list has no TOML form; leave it out")
	case kindBool:
		b.WriteString(strconv.FormatBool(v.b))
	case kindNumber:
		b.WriteString(v.str)
		if _, err := strconv.ParseInt(v.str, 10, 64); err != nil && !strings.ContainsAny(v.str, ".eE") {
			b.WriteString(".0") // a whole number past TOML's 64-bit integers
		}
	case kindString:
		b.WriteString(tomlQuote(v.str))
	case kindArray:
		b.WriteByte('[')
		for i, e := range v.elems {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := tomlInline(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case kindObject:
		b.WriteByte('{')
		n := 0
		for _, m := range v.members {
			if m.val.kind == kindNull {
				continue
			}
			if n > 0 {
				b.WriteString(", ")
			}
			n++
			b.WriteString(tomlKeyText(m.key))
			b.WriteString(" = ")
			if err := tomlInline(b, m.val); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

// tomlKeyText writes a key bare when TOML allows it, quoted otherwise.
func tomlKeyText(k string) string {
	if k == "" {
		return `""`
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return tomlQuote(k)
		}
	}
	return k
}

// tomlQuote writes a TOML basic string. strconv.Quote will not do: TOML
// has no \x, \a or \v escapes.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
