package engine

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/world"
)

// hogWorld is a world whose node allocates without end; fields go at its
// top, nodeFields into the node.
func hogWorld(fields, nodeFields string) string {
	return `{` + fields + `"nodes": [{"name": "s", "pkg": "./hog"` + nodeFields + `}],
		"workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "100000", "-every", "1ms"]}}`
}

// A program that allocates without end fails the run with class memory at
// its memory_limit, with a reason that says who, how much and what to
// raise, and the same digest every time.
func TestMemoryLimit(t *testing.T) {
	r := twice(t, prepare(t, hogWorld(`"memory_limit": "64MiB", `, "")), 1, nil)
	want := `s#1 ran out of memory: it had `
	if r.Passed || r.Class != ClassMemory || r.Node != "s" || !strings.HasPrefix(r.Reason, want) ||
		!strings.HasSuffix(r.Reason, ` more, over its memory_limit of 64 MiB (a leak? raise "memory_limit" if it needs more)`) {
		t.Fatalf("got passed=%v class=%q node=%q reason=%q\n%s", r.Passed, r.Class, r.Node, r.Reason, output(r, "s"))
	}
	out := output(r, "s")
	for _, line := range []string{
		"s#1 - out of memory: refused to grow its memory from ",
		", over its memory_limit of 64 MiB",
		"s#1 ! fatal error: out of memory",
		"s#1 - exit 2",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("the trace lacks %q:\n%s", line, out)
		}
	}

	// Set on the node, a lower limit stops it sooner, and the reason says
	// where the limit is set.
	low := twice(t, prepare(t, hogWorld(`"memory_limit": "64MiB", `, `, "memory_limit": "32MiB"`)), 1, nil)
	if low.Class != ClassMemory || !strings.HasSuffix(low.Reason, `over its memory_limit of 32 MiB (a leak? raise "memory_limit" in nodes[0] if it needs more)`) {
		t.Fatalf("node limit: class=%q reason=%q", low.Class, low.Reason)
	}
	if low.SimNs >= r.SimNs || low.Steps >= r.Steps {
		t.Errorf("32 MiB stopped the hog at %v (%d steps), 64 MiB at %v (%d steps): the lower limit must stop it sooner",
			low.SimNs, low.Steps, r.SimNs, r.Steps)
	}
	if low.Digest == r.Digest {
		t.Error("the two limits gave the same digest")
	}
}

// Running out of memory is told apart from a panic, which stays a panic,
// and a program inside its limit passes as before.
func TestMemoryVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, world, class, reason string
	}{
		{"panic under a limit", `{"memory_limit": "16MiB", "nodes": [{"name": "s", "pkg": "./panicky"}], "workload": {"name": "c", "pkg": "./sleeper"}}`,
			ClassPanic, "s#1 panicked (exit status 2)"},
		{"inside the limit", `{"memory_limit": "8MiB", "nodes": [{"name": "s", "pkg": "./sleeper"}], "workload": {"name": "c", "pkg": "./hello"}}`,
			"", "every workload exited 0"},
		{"the workload", `{"nodes": [], "workload": {"name": "c", "pkg": "./hog", "memory_limit": "16MiB"}}`,
			ClassMemory, "c#1 ran out of memory: it had "},
		{"the finally check", `{"nodes": [], "workload": {"name": "c", "pkg": "./exitcode", "args": ["0"]}, "finally": {"name": "f", "pkg": "./hog", "memory_limit": "16MiB"}}`,
			ClassMemory, "f#1 ran out of memory: it had "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := twice(t, prepare(t, tc.world), 1, nil)
			if r.Class != tc.class || !strings.HasPrefix(r.Reason, tc.reason) {
				t.Fatalf("got class=%q reason=%q, want %q %q\n%s", r.Class, r.Reason, tc.class, tc.reason, output(r, ""))
			}
		})
	}
}

// A supervised node that runs out of memory fails the run: the memory it
// needs is the world's to raise, and a restart would need it again.
func TestMemoryLimitSupervised(t *testing.T) {
	r := twice(t, prepare(t, hogWorld(`"supervise": true, "memory_limit": "16MiB", `, "")), 1, nil)
	if r.Class != ClassMemory || strings.Contains(output(r, "s"), "supervisor restarts") {
		t.Fatalf("class=%q reason=%q\n%s", r.Class, r.Reason, output(r, "s"))
	}
}

// A program whose initial memory is over its limit is refused before any
// run, at the line that sets the limit.
func TestMemoryLimitBelowInitialMemory(t *testing.T) {
	dir, _ := filepath.Abs("testdata/guests")
	for _, tc := range []struct{ js, want string }{
		{`{"memory_limit": "16MiB",` + "\n" + `"nodes": [], "workload": {"name": "c", "pkg": "./bigdata"}}`,
			`seedfall.json:1: memory_limit: c needs 34.4 MiB of memory to start, more than its memory_limit of 16 MiB; raise it to at least 35 MiB`},
		{`{"nodes": [], "workload": {"name": "c", "pkg": "./bigdata",` + "\n" + `"memory_limit": "32MiB"}}`,
			`seedfall.json:2: workload.memory_limit: c needs 34.4 MiB of memory to start, more than its memory_limit of 32 MiB; raise it to at least 35 MiB`},
	} {
		w, err := world.Parse([]byte(tc.js), filepath.Join(dir, "seedfall.json"), dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = testEngine(t).Prepare(context.Background(), w)
		var we *world.Error
		if err == nil || !errors.As(err, &we) || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("Prepare:\n got %v\nwant ...%s", err, tc.want)
		}
	}
	// With room, it runs.
	if r := run(t, prepare(t, `{"memory_limit": "40MiB", "nodes": [], "workload": {"name": "c", "pkg": "./bigdata"}}`), 1, nil); !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
}

func TestMemText(t *testing.T) {
	for n, want := range map[uint64]string{
		64 << 10: "64 KiB", 1 << 20: "1 MiB", 63<<20 + 512<<10: "63.5 MiB", 512 << 20: "512 MiB", 1 << 30: "1 GiB",
		1<<30 - 64<<10: "1023.9 MiB", 4 << 30: "4 GiB",
	} {
		if got := memText(n); got != want {
			t.Errorf("memText(%d) = %q, want %q", n, got, want)
		}
	}
}

// The guard grants the initial memory, refuses every grow past the limit,
// and remembers the first refusal; the slice memory behind it (outside
// Linux) keeps its contents as it grows and never holds more than the limit.
func TestMemGuard(t *testing.T) {
	refusals := 0
	g := &memGuard{limit: 1 << 20, onRefuse: func() { refusals++ }}
	m := g.allocator(nil).Allocate(0, 1<<32)
	b := m.Reallocate(256 << 10)
	b[100] = 7
	if b = m.Reallocate(1 << 20); len(b) != 1<<20 || b[100] != 7 || g.size != 1<<20 {
		t.Fatalf("grow to the limit: len %d, b[100] %d, size %d", len(b), b[100], g.size)
	}
	if cap(m.(*guardedMemory).inner.(*sliceMemory).buf) > 1<<20 {
		t.Fatal("the slice memory holds more than the limit")
	}
	if m.Reallocate(1<<20+64<<10) != nil || m.Reallocate(2<<20) != nil {
		t.Fatal("a grow past the limit was granted")
	}
	if !g.refused || g.had != 1<<20 || g.asked != 1<<20+64<<10 || refusals != 1 {
		t.Fatalf("refused=%v had=%d asked=%d refusals=%d", g.refused, g.had, g.asked, refusals)
	}
	m.Free()

	// The initial memory is granted even over the limit: wazero cannot
	// take a refusal there (Prepare refuses such a program first).
	g = &memGuard{limit: 64 << 10}
	if b := g.allocator(nil).Allocate(0, 1<<32).Reallocate(128 << 10); len(b) != 128<<10 || g.refused {
		t.Fatalf("initial memory: len %d refused %v", len(b), g.refused)
	}
}
