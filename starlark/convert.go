package starlark

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"

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

// goValue converts a Starlark value to plain Go values for encoders that
// take them (TOML): maps, slices, strings, int64, float64, bool.
func goValue(v sl.Value, where string) (any, error) {
	switch x := v.(type) {
	case sl.NoneType:
		return nil, fmt.Errorf("%s: None has no TOML form; leave the key out", orValue(where))
	case sl.Bool:
		return bool(x), nil
	case sl.Int:
		i, ok := x.Int64()
		if !ok {
			return nil, fmt.Errorf("%s: %v is too large for TOML", orValue(where), x)
		}
		return i, nil
	case sl.Float:
		return float64(x), nil
	case sl.String:
		return string(x), nil
	case Duration:
		return x.String(), nil
	case jsonValue:
		j, err := x.JSON()
		if err != nil {
			return nil, err
		}
		dv, err := fromJSON(j)
		if err != nil {
			return nil, err
		}
		return goValue(dv, where)
	case sl.IterableMapping:
		m := map[string]any{}
		for _, kv := range x.Items() {
			k, ok := sl.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("%s: key %s is a %s; TOML keys are strings", orValue(where), kv[0], kv[0].Type())
			}
			if kv[1] == sl.None {
				continue // TOML has no null: an absent key means the same
			}
			gv, err := goValue(kv[1], join(where, k))
			if err != nil {
				return nil, err
			}
			m[k] = gv
		}
		return m, nil
	case sl.Indexable:
		out := make([]any, 0, x.Len())
		for i := 0; i < x.Len(); i++ {
			gv, err := goValue(x.Index(i), fmt.Sprintf("%s[%d]", where, i))
			if err != nil {
				return nil, err
			}
			out = append(out, gv)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s: a %s has no TOML form", orValue(where), v.Type())
}

func orValue(where string) string {
	if where == "" {
		return "the value"
	}
	return where
}

// starValue converts decoded Go values (from TOML) to Starlark, maps in
// the order keys gives, else sorted.
func starValue(v any) sl.Value {
	switch x := v.(type) {
	case nil:
		return sl.None
	case bool:
		return sl.Bool(x)
	case int64:
		return sl.MakeInt64(x)
	case int:
		return sl.MakeInt(x)
	case float64:
		return sl.Float(x)
	case string:
		return sl.String(x)
	case []any:
		elems := make([]sl.Value, len(x))
		for i, e := range x {
			elems[i] = starValue(e)
		}
		return sl.NewList(elems)
	case []map[string]any:
		elems := make([]sl.Value, len(x))
		for i, e := range x {
			elems[i] = starValue(e)
		}
		return sl.NewList(elems)
	case map[string]any:
		d := sl.NewDict(len(x))
		for _, k := range sortedKeys(x) {
			d.SetKey(sl.String(k), starValue(x[k]))
		}
		return d
	}
	return sl.String(fmt.Sprint(v))
}
