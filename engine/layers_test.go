package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
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

// The fault families sit behind a port (port.go): no file of the package
// but run.go names the runner, so none can reach into its state or call
// it but through the port and the hooks the runner sets up.
func TestOnlyRunGoSeesTheRunner(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if name == "run.go" || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Name == "runner" {
				t.Errorf("%s names the runner: a family reaches the run through its port", name)
				return false
			}
			return true
		})
	}
}
