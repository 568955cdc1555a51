//go:build !wasip1

package sim

import (
	"strings"
	"testing"
)

func TestEncodeFields(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"kv", "put", "k", "v"}, "2:kv,3:put,1:k,1:v,"},
		{[]string{"kv", "get", ""}, "2:kv,3:get,0:,"},
		{[]string{"a,b:c"}, "5:a,b:c,"},
	} {
		if got := string(encodeFields(tc.in)); got != tc.want {
			t.Errorf("encodeFields(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestInvokeChecksModelAndInput(t *testing.T) {
	for _, tc := range []struct {
		model, input, err string
	}{
		{"counter", "add 3", ""},
		{"counter", "add -2", ""},
		{"counter:hits", "read", ""},
		{"counter", "add x", `want "add N" or "read"`},
		{"counter", "inc", `want "add N" or "read"`},
		{"queue", "push 1", `unknown model "queue"`},
	} {
		err := checkInvoke(tc.model, tc.input)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("checkInvoke(%q, %q) = %v, want nil", tc.model, tc.input, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("checkInvoke(%q, %q) = %v, want an error with %q", tc.model, tc.input, err, tc.err)
		}
	}
}

// Natively the calls record nothing and do not fail, so a client runs
// unchanged in production; finishing an op twice is still a bug.
func TestNativeOpsAreNoOps(t *testing.T) {
	t.Setenv("SEEDFALL", "")
	p := Put("k", "v")
	p.Ok()
	g := Get("k")
	g.Ok("v", true)
	Invoke("counter", "add 1").Fail()
	defer func() {
		if recover() == nil {
			t.Errorf("a second Ok on the same op did not panic")
		}
	}()
	p.Ok()
}
