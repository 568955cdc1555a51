package wasi

import (
	"context"
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// HistoryRecorder takes the operations a program records with sim.Put,
// sim.Get and sim.Invoke (engine/history.go). Fields are the guest's
// netstrings, decoded: the model and the input for Invoke, the status ("ok"
// or "fail") and the output for Return.
type HistoryRecorder interface {
	// Invoke records an invocation and returns its id (at least 1).
	Invoke(fields []string) int64
	// Return records the outcome of the operation id.
	Return(id int64, fields []string)
}

func init() {
	seedfallFuncs = append(seedfallFuncs,
		// op_invoke(buf_ptr, buf_len) -> id
		hostFunc{name: "op_invoke", params: vt(i32, i32), results: vt(i64), fn: func(ctx context.Context, m api.Module, s []uint64) {
			p := proc(ctx)
			fields, ok := readFields(m, uint32(s[0]), uint32(s[1]))
			s[0] = 0
			if ok && p.History != nil {
				s[0] = uint64(p.History.Invoke(fields))
			}
		}},
		// op_return(id, buf_ptr, buf_len)
		hostFunc{name: "op_return", params: vt(i64, i32, i32), fn: func(ctx context.Context, m api.Module, s []uint64) {
			p := proc(ctx)
			fields, ok := readFields(m, uint32(s[1]), uint32(s[2]))
			if ok && p.History != nil && int64(s[0]) > 0 {
				p.History.Return(int64(s[0]), fields)
			}
		}},
	)
}

// readFields decodes netstrings ("3:put,1:k,") from guest memory; false
// when the buffer is out of bounds or malformed, or holds more than
// MaxFields fields. Each field is cut to MaxPayload (limits.go).
func readFields(m api.Module, ptr, n uint32) ([]string, bool) {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		return nil, false
	}
	return decodeFields(b, MaxFields, cut)
}

// DecodeFields decodes a run of netstrings.
func DecodeFields(b []byte) ([]string, bool) {
	return decodeFields(b, -1, func(b []byte) string { return string(b) })
}

// decodeFields decodes at most maxFields netstrings (-1: any number),
// making each string with str.
func decodeFields(b []byte, maxFields int, str func([]byte) string) ([]string, bool) {
	var out []string
	for len(b) > 0 {
		if len(out) == maxFields {
			return nil, false
		}
		i := 0
		for i < len(b) && i <= 20 && b[i] >= '0' && b[i] <= '9' { // no length has more digits; a longer run is malformed
			i++
		}
		if i == 0 || i >= len(b) || b[i] != ':' {
			return nil, false
		}
		l, err := strconv.Atoi(string(b[:i]))
		if err != nil || l > len(b)-i-2 || b[i+1+l] != ',' {
			return nil, false
		}
		out = append(out, str(b[i+1:i+1+l]))
		b = b[i+2+l:]
	}
	return out, true
}
