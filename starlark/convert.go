package starlark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine/faults"
	sl "go.starlark.net/starlark"
)

// toJSON encodes a Starlark value as JSON for the world and schedule
// parsers: dicts keep their order, durations become "1.5s", and a world,
// schedule or fault value its own JSON. where names the value in errors
// ("nodes[0].args").
func toJSON(v sl.Value, where string) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v, where); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v sl.Value, where string) error {
	name := func() string {
		if where == "" {
			return "the value"
		}
		return where
	}
	switch x := v.(type) {
	case sl.NoneType:
		b.WriteString("null")
	case sl.Bool:
		b.WriteString(strconv.FormatBool(bool(x)))
	case sl.Int:
		b.WriteString(x.String())
	case sl.Float:
		f := float64(x)
		if f != f || f > 1e308 || f < -1e308 {
			return fmt.Errorf("%s: %v is not a finite number", name(), x)
		}
		b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	case sl.String:
		j, _ := json.Marshal(string(x))
		b.Write(j)
	case Duration:
		j, _ := json.Marshal(x.String())
		b.Write(j)
	case jsonValue:
		j, err := x.JSON()
		if err != nil {
			return err
		}
		b.Write(j)
	case sl.IterableMapping:
		b.WriteByte('{')
		for i, kv := range x.Items() {
			k, ok := sl.AsString(kv[0])
			if !ok {
				return fmt.Errorf("%s: key %s is a %s; JSON keys are strings", name(), kv[0], kv[0].Type())
			}
			if i > 0 {
				b.WriteByte(',')
			}
			j, _ := json.Marshal(k)
			b.Write(j)
			b.WriteByte(':')
			if err := writeJSON(b, kv[1], join(where, k)); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case sl.Indexable: // list, tuple
		b.WriteByte('[')
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, x.Index(i), fmt.Sprintf("%s[%d]", where, i)); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		return fmt.Errorf("%s: a %s has no JSON form (use strings, numbers, bools, lists and dicts)", name(), v.Type())
	}
	return nil
}

func join(where, key string) string {
	if where == "" {
		return key
	}
	return where + "." + key
}

// jsonValue is a value with a JSON form of its own: a world, a schedule, a
// fault.
type jsonValue interface {
	sl.Value
	JSON() ([]byte, error)
}

// fromJSON decodes JSON into Starlark values, objects into dicts in the
// order their keys are written, and freezes the result.
func fromJSON(data []byte) (sl.Value, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("text after the JSON value")
	}
	v.Freeze()
	return v, nil
}

func decodeValue(d *json.Decoder) (sl.Value, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			dict := sl.NewDict(0)
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				dict.SetKey(sl.String(kt.(string)), v)
			}
			_, err := d.Token()
			return dict, err
		case '[':
			var elems []sl.Value
			for d.More() {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			_, err := d.Token()
			return sl.NewList(elems), err
		}
	case string:
		return sl.String(t), nil
	case json.Number:
		return numberValue(string(t)), nil
	case bool:
		return sl.Bool(t), nil
	case nil:
		return sl.None, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

func numberValue(s string) sl.Value {
	if !strings.ContainsAny(s, ".eE") {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return sl.MakeBigInt(i)
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return sl.Float(f)
}

// frozenList is l as a frozen list.
func frozenList(l []sl.Value) sl.Value {
	v := sl.NewList(l)
	v.Freeze()
	return v
}

// stringList is ss as a frozen list of strings.
func stringList(ss []string) sl.Value {
	l := make([]sl.Value, len(ss))
	for i, s := range ss {
		l[i] = sl.String(s)
	}
	return frozenList(l)
}

// faultList is fs as a frozen list of fault values.
func faultList(fs []faults.Fault) sl.Value {
	l := make([]sl.Value, len(fs))
	for i, f := range fs {
		l[i] = &Fault{f}
	}
	return frozenList(l)
}
