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

// memory_limit, at the top and per program, takes sizes with binary units
// or a number of bytes, in JSON, TOML and -set, and errors name the field,
// the line and the bounds.
func TestMemoryLimit(t *testing.T) {
	w := mustParse(t, withWorkload(""))
	if w.MemoryLimit != DefaultMemoryLimit || w.MemoryLimitOf(&w.Workloads[0]) != 512<<20 || w.MemoryLimitField(&w.Workloads[0]) != "memory_limit" {
		t.Fatalf("default: %d, %d, %s", w.MemoryLimit, w.MemoryLimitOf(&w.Workloads[0]), w.MemoryLimitField(&w.Workloads[0]))
	}
	if err := w.Unsupported(map[string]bool{"workload": true}); err != nil {
		t.Fatalf("the default limit counts as set: %v", err)
	}
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{`"512MiB"`, 512 << 20}, {`"1GiB"`, 1 << 30}, {`"1 GiB"`, 1 << 30}, {`"1.5GiB"`, 3 << 29}, {`"4GiB"`, 4 << 30},
		{`"4096 KiB"`, 4 << 20}, {`"8mib"`, 8 << 20}, {`"268435456B"`, 256 << 20}, {`"4194305 bytes"`, 4<<20 + 1},
		{`"268435456"`, 256 << 20}, {`268435456`, 256 << 20}, {`4194304`, 4 << 20},
	} {
		w := mustParse(t, withWorkload(`"memory_limit": `+tc.in))
		if w.MemoryLimit != tc.want {
			t.Errorf("memory_limit %s = %d, want %d", tc.in, w.MemoryLimit, tc.want)
		}
	}

	w = mustParse(t, `{"memory_limit": "2GiB",
"nodes": [{"name": "n1", "pkg": "./n", "memory_limit": "256MiB"}, {"name": "n2", "pkg": "./n"}],
"workload": {"name": "c", "pkg": "./c", "memory_limit": "64MiB"},
"workloads": [{"name": "d", "pkg": "./c", "memory_limit": "32MiB"}],
"finally": {"name": "f", "pkg": "./c", "memory_limit": "16MiB"}}`)
	for _, want := range []struct {
		name  string
		limit int64
		field string
	}{
		{"n1", 256 << 20, "nodes[0].memory_limit"}, {"n2", 2 << 30, "memory_limit"}, {"c", 64 << 20, "workload.memory_limit"},
		{"d", 32 << 20, "workloads[0].memory_limit"}, {"f", 16 << 20, "finally.memory_limit"},
	} {
		p := w.Program(want.name)
		if got := w.MemoryLimitOf(p); got != want.limit {
			t.Errorf("%s: limit %d, want %d", want.name, got, want.limit)
		}
		if got := w.MemoryLimitField(p); got != want.field {
			t.Errorf("%s: field %s, want %s", want.name, got, want.field)
		}
	}
	if err := w.Unsupported(map[string]bool{"nodes": true, "workload": true, "workloads": true, "finally": true}); err == nil ||
		err.Error() != "seedfall.json:1: memory_limit: not supported yet" {
		t.Errorf("Unsupported: %v", err)
	}
	if err := w.Unsupported(map[string]bool{"memory_limit": true, "nodes[].name": true, "nodes[].pkg": true, "workload": true, "workloads": true, "finally": true}); err == nil ||
		err.Error() != "seedfall.json:2: nodes[0].memory_limit: not supported yet" {
		t.Errorf("Unsupported: %v", err)
	}

	// The resolved world writes the limits, and reads back the same.
	for _, format := range []string{"json", "toml"} {
		var data []byte
		var err error
		if format == "json" {
			data, err = w.JSON()
		} else {
			data, err = w.TOML()
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), "2 GiB") || !strings.Contains(string(data), "256 MiB") {
			t.Errorf("%s lacks the limits:\n%s", format, data)
		}
		back, err := Parse(data, "world."+format, "/proj")
		if err != nil {
			t.Fatalf("%s: %v\n%s", format, err, data)
		}
		for _, p := range w.Programs() {
			if got, want := back.MemoryLimitOf(back.Program(p.Name)), w.MemoryLimitOf(p); got != want {
				t.Errorf("%s: %s's limit read back as %d, want %d", format, p.Name, got, want)
			}
		}
	}

	for _, tc := range []struct{ name, file, src, want string }{
		{"below", "seedfall.json", withWorkload(`"memory_limit": "1MiB"`),
			`seedfall.json:2: memory_limit: want a size from 4 MiB to 4 GiB, got "1MiB"`},
		{"above", "seedfall.json", withWorkload(`"memory_limit": "5GiB"`),
			`seedfall.json:2: memory_limit: want a size from 4 MiB to 4 GiB, got "5GiB"`},
		{"bytes below", "seedfall.json", withWorkload(`"memory_limit": 512`),
			`seedfall.json:2: memory_limit: want a size from 4 MiB to 4 GiB, got 512`},
		{"decimal unit", "seedfall.json", withWorkload(`"memory_limit": "1GB"`),
			`seedfall.json:2: memory_limit: want a size such as "512MiB" or "1GiB" (a number and B, KiB, MiB or GiB), got "1GB"`},
		{"no number", "seedfall.json", withWorkload(`"memory_limit": "GiB"`),
			`seedfall.json:2: memory_limit: want a size such as "512MiB" or "1GiB" (a number and B, KiB, MiB or GiB), got "GiB"`},
		{"negative", "seedfall.json", withWorkload(`"memory_limit": "-1GiB"`),
			`seedfall.json:2: memory_limit: want a size such as "512MiB" or "1GiB" (a number and B, KiB, MiB or GiB), got "-1GiB"`},
		{"fraction of a byte", "seedfall.json", withWorkload(`"memory_limit": "4194304.5"`),
			`seedfall.json:2: memory_limit: want a size such as "512MiB" or "1GiB" (a number and B, KiB, MiB or GiB), got "4194304.5"`},
		{"fractional number", "seedfall.json", withWorkload(`"memory_limit": 4194304.5`),
			`seedfall.json:2: memory_limit: want a whole number, got 4194304.5`},
		{"bool", "seedfall.json", withWorkload(`"memory_limit": true`),
			`seedfall.json:2: memory_limit: want a size such as "512MiB" or "1GiB", got true`},
		{"typo", "seedfall.json", withWorkload(`"memory_limt": "1GiB"`),
			`seedfall.json:2: memory_limt: unknown field (did you mean "memory_limit"?)`},
		{"node", "seedfall.json", withWorkload(`"nodes": [` + "\n" + `{"name": "n1", "pkg": "./n",` + "\n" + `"memory_limit": "2MiB"}]`),
			`seedfall.json:4: nodes[0].memory_limit: want a size from 4 MiB to 4 GiB, got "2MiB"`},
		{"finally", "seedfall.json", withWorkload(`"finally": {"name": "f", "pkg": "./f", "memory_limit": "8GiB"}`),
			`seedfall.json:2: finally.memory_limit: want a size from 4 MiB to 4 GiB, got "8GiB"`},
		{"toml", "seedfall.toml", "[workload]\nname = \"c\"\npkg = \"./c\"\nmemory_limit = \"100GiB\"\n",
			`seedfall.toml:4: workload.memory_limit: want a size from 4 MiB to 4 GiB, got "100GiB"`},
		{"toml top", "seedfall.toml", "memory_limit = 1\n[workload]\nname = \"c\"\npkg = \"./c\"\n",
			`seedfall.toml:1: memory_limit: want a size from 4 MiB to 4 GiB, got 1`},
	} {
		_, err := Parse([]byte(tc.src), tc.file, "/proj")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, tc.want)
		}
	}

	// -set takes a bare size.
	w, err := ParseWith([]byte(withWorkload("")), "seedfall.json", "/proj", Options{Set: []string{"memory_limit=256MiB", "workload.memory_limit=64 MiB"}})
	if err != nil {
		t.Fatal(err)
	}
	if w.MemoryLimit != 256<<20 || w.Workloads[0].MemoryLimit != 64<<20 {
		t.Errorf("-set: %d %d", w.MemoryLimit, w.Workloads[0].MemoryLimit)
	}
	if _, err := ParseWith([]byte(withWorkload("")), "seedfall.json", "/proj", Options{Set: []string{"memory_limit=1k"}}); err == nil ||
		err.Error() != `-set: memory_limit: want a size such as "512MiB" or "1GiB" (a number and B, KiB, MiB or GiB), got "1k"` {
		t.Errorf("-set 1k: %v", err)
	}
}
