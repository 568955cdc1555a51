package examples_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// On one machine the workers' clocks agree with the server's, so both ways
// of timing the lease keep the work inside it; a worker that overstays its
// lease (a negative margin) is caught by the server and fails the check.
func TestLeaseRunsNatively(t *testing.T) {
	server, worker, checker := build(t, "lease/server"), build(t, "lease/worker"), build(t, "lease/checker")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"wall clock", nil, 0, " 0 without a live lease"},
		{"monotonic", []string{"-monotonic"}, 0, " 0 without a live lease"},
		{"overstaying", []string{"-margin", "-150ms"}, 1, "FAIL: a worker worked after its lease had ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := freeAddr(t)
			serve(t, server, "-listen", addr, "-ttl", "300ms")
			waitListening(t, addr)
			for i := 1; i <= 2; i++ {
				serve(t, worker, append([]string{"-server", addr, "-name", fmt.Sprint("w", i), "-every", "20ms", "-margin", "50ms"}, tc.args...)...)
			}
			out, err := exec.Command(checker, "-server", addr, "-after", "1s").CombinedOutput()
			if code := exitCode(t, err); code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Fatalf("checker exited %d, want %d and %q:\n%s", code, tc.code, tc.want, out)
			}
		})
	}
}
