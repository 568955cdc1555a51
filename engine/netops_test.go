package engine

import (
	"strings"
	"testing"
)

// The netops guest checks TCP as Go programs use it on Linux (the same
// checks pass natively between two processes). Links are slower than 1ms so
// that a 1ms dial times out, as a dial into a black hole does on Linux.
func TestNetworkBehavesLikeLinux(t *testing.T) {
	p := prepare(t, `{"net_overlay": true, "latency": ["2ms", "5ms"],
		"nodes": [{"name": "server", "pkg": "./netops", "args": ["-role", "server"]}],
		"workload": {"name": "client", "pkg": "./netops"}}`)
	r := twice(t, p, 1, nil)
	out := output(r, "client")
	oks := 0
	for _, l := range r.Lines {
		switch {
		case strings.HasPrefix(l.Text, "ok "):
			oks++
		case strings.HasPrefix(l.Text, "FAIL "):
			t.Error(l.Text)
		}
	}
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	if oks < 32 || !strings.Contains(out, "checks, 0 failed") {
		t.Fatalf("only %d checks reported ok:\n%s", oks, out)
	}
}
