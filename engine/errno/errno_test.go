package errno

import (
	"testing"
)

// The guest's syscall package numbers errors the way WASI does; spot-check the
// ones the disk and network return against the names we print.
func TestNames(t *testing.T) {
	for e, want := range map[Errno]string{ENOENT: "ENOENT", ENOSPC: "ENOSPC", ECONNREFUSED: "ECONNREFUSED", ENOTCAPABLE: "ENOTCAPABLE", 200: "errno(200)"} {
		if got := e.Error(); got != want {
			t.Errorf("Errno(%d).Error() = %q, want %q", e, got, want)
		}
	}
	if ENOSPC != 51 || ECONNRESET != 15 || EAGAIN != 6 {
		t.Fatalf("WASI numbering is off: ENOSPC=%d ECONNRESET=%d EAGAIN=%d", ENOSPC, ECONNRESET, EAGAIN)
	}
}
