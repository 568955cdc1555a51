package engine

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
)

// The fsops guest runs checks of os, io/fs and path/filepath whose expected
// outcomes come from Linux (the same program passes natively in a temporary
// directory). Under seedfall every check must pass too, reproducibly, and
// strict directory durability must not change what a running program sees.
func TestFileSystemBehavesLikeLinux(t *testing.T) {
	for _, tc := range []struct{ name, faults string }{
		{"default", `{}`},
		{"strict_dirs", `{"strict_dirs": true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prepare(t, `{"faults": `+tc.faults+`, "nodes": [],
				"workload": {"name": "fs", "pkg": "./fsops"}}`)
			r := twice(t, p, 1, nil)
			out := output(r, "fs")
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
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
			}
			// A guest that stopped early or printed nothing must not pass.
			if oks < 88 || !strings.Contains(out, "checks, 0 failed") {
				t.Fatalf("only %d checks reported ok:\n%s", oks, out)
			}
			if !strings.Contains(out, "| wd /\n") {
				t.Errorf("the working directory is not /:\n%s", out)
			}
		})
	}
}

// A write to a file opened with O_SYNC is durable when it returns: a crash
// right after keeps it, while an unsynced write to another file is lost.
func TestOSyncWritesSurviveACrash(t *testing.T) {
	crashAt := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 1_000_000_000, Kind: faults.Crash, Node: "d", Until: 1_500_000_000}}}
	p := prepare(t, `{"duration": "3s", "nodes": [{"name": "d", "pkg": "./fsops", "args": ["-durability"]}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`)
	r := twice(t, p, 1, crashAt)
	out := output(r, "d")
	if !strings.Contains(out, "d#1 | found []") || !strings.Contains(out, `d#2 | found [osync="onetwo" plain=""]`) {
		t.Fatalf("after the crash want osync=\"onetwo\" and an empty plain:\n%s", out)
	}
}
