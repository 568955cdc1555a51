package wasi

import (
	"slices"
	"testing"
)

func TestDecodeFields(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"2:kv,3:put,1:k,1:v,", []string{"kv", "put", "k", "v"}, true},
		{"0:,5:a,b:c,", []string{"", "a,b:c"}, true},
		{"", nil, true},
		{"3:ab,", nil, false},
		{"2:ab", nil, false},
		{"x:ab,", nil, false},
		{"99999999999999999999:a,", nil, false},
	} {
		got, ok := DecodeFields([]byte(tc.in))
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("DecodeFields(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
