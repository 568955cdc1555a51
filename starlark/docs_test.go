package starlark

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sl "go.starlark.net/starlark"
)

// TestWorkbenchDoc runs the ```star blocks of docs/workbench.md, in order,
// as one script whose lines are the document's, from a copy of docs/ next
// to a copy of the examples it uses, so what it writes stays out of the
// tree.
func TestWorkbenchDoc(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples")
	}
	out, root := runDoc(t, "workbench.md", 5, "examples/kvlog", "examples/kvclient")
	for _, want := range []string{"20s 1 server", "False workload client True", "True True", "crash server True", "5ms", "500ms True", "False True True", "crash 1ns True", "running data/kv.log True"} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("the examples' output has no line ending %q; the comments in the document say it does:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "docs", "out", "rates.csv")); err != nil {
		t.Errorf("the table example wrote no CSV: %v", err)
	}
}

// The README's workbench example runs as it says.
func TestReadmeWorkbench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the examples")
	}
	out, _ := runBlocks(t, "README.md", "python", 1, "examples/kvlog", "examples/kvclient")
	want := "False workload\n1\nTrue\n<exploration branch_closest: 59 runs, 33 failures (seeds 1, 2, 3, 4, 5, 6, 7, 8, ...)>\n"
	if out != want {
		t.Errorf("README.md's workbench example prints:\n%s\nthe comments in the README say:\n%s", out, want)
	}
}

// runDoc runs the ```star blocks of docs/name, in order, as one script
// whose lines are the document's, from a copy of the document next to
// copies of the repository's dirs it uses (the builder wants real
// directories, not links), so what it writes stays out of the tree. It
// returns what the script printed and the copy's root.
func runDoc(t *testing.T, name string, minBlocks int, dirs ...string) (out, root string) {
	return runBlocks(t, filepath.Join("docs", name), "star", minBlocks, dirs...)
}

// runBlocks is runDoc for the ```lang blocks of path, relative to the
// repository's root.
func runBlocks(t *testing.T, path, lang string, minBlocks int, dirs ...string) (out, root string) {
	t.Helper()
	name := path
	data, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	src, blocks := fencedBlocks(string(data), lang)
	if blocks < minBlocks {
		t.Fatalf("%s has %d %s blocks; the test expects the examples there", name, blocks, lang)
	}
	root = t.TempDir()
	for _, dir := range dirs {
		if err := os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join("..", dir))); err != nil {
			t.Fatal(err)
		}
	}
	mod, err := os.ReadFile("../examples/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "examples", "go.mod"), mod, 0o644); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	env := NewEnv(Options{Engine: testEngine(t), Stdout: &b, Parallel: 4})
	if _, err := sl.ExecFileOptions(FileOptions, env.NewThread("doc"), doc, src, env.Predeclared()); err != nil {
		t.Fatalf("%s: %s\noutput so far:\n%s", name, ScriptError(err), b.String())
	}
	return b.String(), root
}

// fencedBlocks returns the ```lang blocks of a markdown text as one
// script, every other line blank, so errors name the document's lines.
func fencedBlocks(md, lang string) (string, int) {
	var b strings.Builder
	in, n := false, 0
	for _, line := range strings.Split(md, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```"+lang:
			in = true
			n++
			b.WriteString("\n")
		case in && strings.TrimSpace(line) == "```":
			in = false
			b.WriteString("\n")
		case in:
			b.WriteString(line + "\n")
		default:
			b.WriteString("\n")
		}
	}
	return b.String(), n
}
