package results

import (
	"testing"
)

func TestReasonShape(t *testing.T) {
	for _, c := range []struct{ reason, shape string }{
		{"client#1 exited with status 1", "client#<n> exited with status <n>"},
		{"client#2 exited with status 3", "client#<n> exited with status <n>"},
		{`property "balance never negative" failed in client#1: details {"balance":-5,"withdraw":145}`,
			`property "balance never negative" failed in client#<n>: details {"balance":<n>,"withdraw":<n>}`},
		{"server#2 did not answer for 1.5s after t=2.46237307s", "server#<n> did not answer for <dur> after t=<dur>"},
		{"nil dereference at 0xc000012345 in seed-17", "nil dereference at <addr> in seed-<n>"},
		{"dial tcp 10.0.0.1:7000: connect: connection refused", "dial tcp <addr>: connect: connection refused"},
		{"digest 366ee547107a0280 differs", "digest <hex> differs"},
		{"out of memory: 512 MiB limit, 1m30s in", "out of memory: <n> MiB limit, <dur> in"},
		{"deadbeef and cafe stay words", "deadbeef and cafe stay words"},
	} {
		if got := ReasonShape(c.reason); got != c.shape {
			t.Errorf("ReasonShape(%q) = %q, want %q", c.reason, got, c.shape)
		}
	}
}
