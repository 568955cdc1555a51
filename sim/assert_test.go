//go:build !wasip1

package sim

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestEncodeDetails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		details map[string]any
		want    string
	}{
		{"none", nil, ""},
		{"empty", map[string]any{}, ""},
		{"sorted keys", map[string]any{"b": 2, "a": "x", "c": []int{1}}, `{"a":"x","b":2,"c":[1]}`},
		{"nested map sorted too", map[string]any{"m": map[string]int{"z": 1, "y": 2}}, `{"m":{"y":2,"z":1}}`},
		{"unencodable value kept as text", map[string]any{"f": math.NaN(), "ok": true}, `{"f":"NaN","ok":true}`},
		{"quoted key", map[string]any{`a"b`: nil}, `{"a\"b":null}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := encodeDetails(tc.details); got != tc.want {
				t.Errorf("encodeDetails = %s, want %s", got, tc.want)
			}
		})
	}
}

// Natively a failing property prints one line, once, and the program goes
// on; properties that hold and Sometimes/Reachable print nothing.
func TestNativePropertiesPrintOnceAndGoOn(t *testing.T) {
	t.Setenv("SEEDFALL", "")
	var buf bytes.Buffer
	localMu.Lock()
	old := localOut
	localOut, localSeen = &buf, map[string]bool{}
	localMu.Unlock()
	defer func() { localMu.Lock(); localOut = old; localMu.Unlock() }()

	Always(true, "holds", nil)
	AlwaysOrUnreachable(true, "holds too", nil)
	Sometimes(false, "rare", map[string]any{"x": 1})
	Reachable("here", nil)
	for i := 0; i < 3; i++ {
		Always(i < 1, "i stays small", map[string]any{"i": i})
	}
	AlwaysOrUnreachable(false, "or unreachable", nil)
	Unreachable("never here", map[string]any{"why": "test"})

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`sim: property "i stays small" failed at `,
		`sim: property "or unreachable" failed at `,
		`sim: property "never here" was reached at `,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || !strings.Contains(lines[i], "assert_test.go:") {
			t.Errorf("line %d = %q, want it to start with %q and name the call site", i, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[0], `: details {"i":1}`) {
		t.Errorf("first failure should carry its details: %q", lines[0])
	}
	if !strings.HasSuffix(lines[2], `: details {"why":"test"}`) {
		t.Errorf("unreachable should carry its details: %q", lines[2])
	}
}
