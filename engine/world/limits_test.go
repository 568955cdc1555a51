package world

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func manyNodes(n int) string {
	var b strings.Builder
	b.WriteString(`{"workload": {"name": "client", "pkg": "./client"}, "nodes": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"name": "n%d", "pkg": "./server"}`, i)
	}
	b.WriteString("]}")
	return b.String()
}

// TestLimitErrors: rates, depths, program counts and nesting have limits,
// and the error names the field and the limit (issue 12).
func TestLimitErrors(t *testing.T) {
	deepJSON := withWorkload(`"env": ` + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1))
	deepTOML := "[workload]\nname = \"c\"\npkg = \"./c\"\nargs = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	tests := []struct {
		name, file, src, want string
	}{
		{"partition rate", "seedfall.json", withWorkload(`"faults": {"partition_per_sec": 1e12}`),
			"seedfall.json:2: faults.partition_per_sec: 1e12 per second is over the limit of 1000; a run cannot hold more faults than that"},
		{"crash rate", "seedfall.json", withWorkload(`"faults": {"crash_per_sec": 1e6, "restart_after": "0s"}`),
			"seedfall.json:2: faults.crash_per_sec: 1e6 per second is over the limit of 1000; a run cannot hold more faults than that"},
		{"pct depth", "seedfall.json", withWorkload(`"preempt": {"strategy": "pct", "depth": 1000000000}`),
			"seedfall.json:2: preempt.depth: want a depth from 1 to 1000 (the limit), got 1000000000"},
		{"programs", "seedfall.json", manyNodes(MaxPrograms + 1),
			"seedfall.json:257: nodes[256]: more than 256 programs (nodes, workloads and finally together); the limit is 256"},
		{"nesting JSON", "seedfall.json", deepJSON,
			"seedfall.json:2: arrays and objects nest more than 256 deep; no world needs that many levels"},
		{"nesting TOML", "seedfall.toml", deepTOML,
			"seedfall.toml:4: arrays and objects nest more than 256 deep; no world needs that many levels"},
		{"too large", "seedfall.json", withWorkload(`"duration": "1s"` + strings.Repeat(" ", MaxConfigBytes)),
			fmt.Sprintf("seedfall.json: the world file has %d bytes, over the limit of 16 MiB", MaxConfigBytes+len(withWorkload(`"duration": "1s"`)))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.src), tt.file, "/proj")
			if err == nil {
				t.Fatalf("no error, want %s", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %s\nwant %s", err, tt.want)
			}
			var we *Error
			if !errors.As(err, &we) {
				t.Errorf("error is %T, want *Error", err)
			}
		})
	}
}

// At the limits, and with brackets inside strings and comments, worlds
// still parse.
func TestWithinLimits(t *testing.T) {
	mustParse(t, withWorkload(`"faults": {"partition_per_sec": 1000, "crash_per_sec": 0.5}, "preempt": {"strategy": "pct", "depth": 1000}`))
	mustParse(t, manyNodes(MaxPrograms-1))
	mustParse(t, `{"workload": {"name": "client", "pkg": "./client", "env": {"X": "`+strings.Repeat("[{", 1000)+`\"]"}}}`)
	toml := "# " + strings.Repeat("[", 1000) + "\n[workload]\nname = \"c\" # {{{{\npkg = './c" + strings.Repeat("[", 300) + "'\n" +
		"args = [\"\"\"" + strings.Repeat("{", 300) + "\"\"\", '''" + strings.Repeat("[", 300) + "''']\n"
	if _, err := Parse([]byte(toml), "seedfall.toml", "/proj"); err != nil {
		t.Fatal(err)
	}
}

// Deep nesting is refused before decoding, so it costs little memory.
func TestDeepNestingIsCheap(t *testing.T) {
	src := []byte("[workload]\nargs = " + strings.Repeat("[", 1<<20) + "\n")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse(src, "seedfall.toml", "/proj")
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nest more than 256 deep") {
		t.Fatalf("err = %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Fatalf("refusing 1M levels allocated %d bytes", grew)
	}
}

// World files, and the files they extend, must be regular files of at
// most MaxConfigBytes.
func TestLoadBoundedFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxConfigBytes + 1); err != nil { // sparse: cheap
		t.Fatal(err)
	}
	f.Close()
	child := filepath.Join(dir, "child.json")
	write := func(ext string) {
		t.Helper()
		if err := os.WriteFile(child, []byte("{\n\"extends\": \""+ext+"\",\n\"workload\": {\"name\": \"c\", \"pkg\": \"./c\"}}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ path, extends, want string }{
		{dir, "", dir + ": cannot read the world file: it is a directory, not a regular file"},
		{big, "", big + ": cannot read the world file: it has 16777217 bytes, over the limit of 16 MiB"},
		{child, "big.json", child + `:2: extends: cannot read "big.json": it has 16777217 bytes, over the limit of 16 MiB; the path is relative to ` + child},
		{child, dir, child + `:2: extends: cannot read "` + dir + `": it is a directory, not a regular file; the path is relative to ` + child},
		{"/dev/zero", "", "/dev/zero: cannot read the world file: it is a character device, not a regular file"},
		{child, "/dev/zero", child + `:2: extends: cannot read "/dev/zero": it is a character device, not a regular file; the path is relative to ` + child},
	} {
		if strings.HasPrefix(tc.path, "/dev/") || strings.HasPrefix(tc.extends, "/dev/") {
			if _, err := os.Stat("/dev/zero"); err != nil {
				continue
			}
		}
		if tc.extends != "" {
			write(tc.extends)
		}
		_, err := Load(tc.path)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Load(%s) extends %q:\n got %v\nwant %s", tc.path, tc.extends, err, tc.want)
		}
	}
}

func TestReadBounded(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadBounded(p, 5); err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	if _, err := ReadBounded(p, 4); err == nil || err.Error() != "it has 5 bytes, over the limit of 4 bytes" {
		t.Fatalf("over the limit: %v", err)
	}
}
