package guest

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseGoMod(t *testing.T) {
	tests := []struct {
		name        string
		gomod       string
		path, goVer string
		replacesSim bool
		local       []string
	}{
		{"minimal", "module example.com/app\n\ngo 1.22\n", "example.com/app", "1.22", false, nil},
		{"no go line", "module example.com/app\n", "example.com/app", "", false, nil},
		{"replace block", `module example.com/app // the app

go 1.21.3

require (
	github.com/seedfall/seedfall/sim v0.0.0
	example.com/dep v1.2.3 // indirect
)

replace (
	example.com/dep => ../dep // local
	example.com/remote v1.0.0 => example.com/fork v1.0.1
	github.com/seedfall/seedfall/sim => ./third_party/sim
)
`, "example.com/app", "1.21.3", true, []string{"../dep", "./third_party/sim"}},
		{"single-line replaces", "module m\nreplace a => /abs/a\nreplace b v1.0.0 => ./b\nreplace c => c.example/x v1.0.0\n", "m", "", false, []string{"/abs/a", "./b"}},
		{"quoted", "module \"example.com/q\"\nreplace x => \"./with space\"\n", "example.com/q", "", false, []string{"./with space"}},
		{"arrow without spaces", "module m\nreplace x=>./x\n", "m", "", false, []string{"./x"}},
		{"commented out", "module m\n// replace github.com/seedfall/seedfall/sim => ./sim\n", "m", "", false, nil},
		{"dot", "module m\nreplace x => .\nreplace y => ..\n", "m", "", false, []string{".", ".."}},
		{"garbage is skipped", "module m\nreplace =>\nreplace x =>\n)\n\"unterminated\n", "m", "", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseGoMod([]byte(tt.gomod))
			if got.path != tt.path || got.goVersion != tt.goVer || got.replacesSim != tt.replacesSim || !slices.Equal(got.localReplaces, tt.local) {
				t.Errorf("parseGoMod = %+v\nwant path %q go %q replacesSim %v local %q", got, tt.path, tt.goVer, tt.replacesSim, tt.local)
			}
		})
	}
}

func TestCompareGoVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.21", "1.21", 0},
		{"1.21", "1.21.0", 0},
		{"1.20", "1.21", -1},
		{"1.9", "1.21", -1},
		{"1.22rc1", "1.21.5", 1},
		{"1.21.10", "1.21.9", 1},
		{"2", "1.99", 1},
	}
	for _, tt := range tests {
		if got := compareGoVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareGoVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// The workspace's go line sets the program's GODEBUG defaults: it is the
// module's own unless sim (or another module of the workspace) needs a
// newer one.
func TestWriteGoWork(t *testing.T) {
	tests := []struct {
		gomod, want string
	}{
		{"module m\n\ngo 1.23.1\n", "go 1.23.1\n"},
		{"module m\n\ngo 1.20\n", "go 1.21\n"},
		{"module m\n", "go 1.21\n"},
	}
	for _, tt := range tests {
		tmp := t.TempDir()
		sim := filepath.Join(tmp, "sim")
		if err := os.MkdirAll(sim, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sim, "go.mod"), []byte("module github.com/seedfall/seedfall/sim\n\ngo 1.21\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		path, err := writeGoWork(tmp, "/src/app", parseGoMod([]byte(tt.gomod)), []string{sim})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(path) != tmp || !strings.HasPrefix(string(b), tt.want) ||
			!strings.Contains(string(b), `"/src/app"`) || !strings.Contains(string(b), strconv.Quote(sim)) {
			t.Errorf("go.work for %q:\n%s\nwant it to start with %q and use both modules", tt.gomod, b, tt.want)
		}
	}
}
