package engine

import (
	"os/exec"
	"strings"
	"testing"
)

// The layers (docs/api.md): nothing under engine/ depends on a skin (the
// command line, Starlark, the REPL), and nothing under engine/internal/
// depends on the facade it serves.
func TestLayers(t *testing.T) {
	const mod = "github.com/seedfall/seedfall/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Deps \" \"}}", mod+"engine/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ": ")
		if !strings.HasPrefix(pkg, mod+"engine") {
			continue
		}
		for _, dep := range strings.Fields(deps) {
			for _, skin := range []string{mod + "cmd/", mod + "starlark", mod + "repl"} {
				if strings.HasPrefix(dep, skin) {
					t.Errorf("%s depends on %s, a skin", pkg, dep)
				}
			}
			if strings.HasPrefix(pkg, mod+"engine/internal/") && dep == mod+"engine" {
				t.Errorf("%s depends on the facade", pkg)
			}
		}
	}
}
