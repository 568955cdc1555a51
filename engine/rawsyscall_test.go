package engine

import (
	"strings"
	"testing"
)

// Under compat_overlay, code that makes system calls through
// syscall.Syscall (pogreb's madvise) builds, and the calls that mean
// something here succeed: advice is taken, fdatasync makes the file
// durable; any other fails with ENOSYS, as on wasip1 without the overlay.
func TestRawSyscallsUnderCompat(t *testing.T) {
	p := prepare(t, `{"nodes": [], "workload": {"name": "w", "pkg": "./rawsyscall"}, "compat_overlay": true}`)
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	out := output(r, "w")
	for _, want := range []string{"madvise: errno 0", "fdatasync: errno 0", "unknown: Not implemented on wasip1", "RLIMIT_AS 0xffffffffffffffff <nil>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
