package starlark

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarktest"

	"github.com/seedfall/seedfall/engine"
)

// One engine for every test: builds and compiled modules are shared, as
// in a real session.
var (
	engOnce sync.Once
	eng     *engine.Engine
	engErr  error
)

func testEngine(t testing.TB) *engine.Engine {
	t.Helper()
	engOnce.Do(func() { eng, engErr = engine.New(context.Background(), engine.Options{}) })
	if engErr != nil {
		t.Fatal(engErr)
	}
	return eng
}

// chunk is one part of a test file: the files are split at lines "---",
// as starlark-go's own tests are, and each part runs on its own. A part
// with a comment `### regexp` must fail with an error matching it; any
// other part must run to the end; ":LINE:" in the regexp stands for the
// comment's own line. Inside a part, assert.fails checks an
// error without ending it.
type chunk struct {
	src  string // padded with blank lines so lines keep their numbers
	line int    // first line of the part
	want string // the ### regexp, or ""
}

var wantRe = regexp.MustCompile(`###\s*(.*)$`)

func readChunks(t *testing.T, path string) []chunk {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []chunk
	lines := strings.Split(string(data), "\n")
	start := 0
	flush := func(end int) {
		c := chunk{src: strings.Repeat("\n", start) + strings.Join(lines[start:end], "\n"), line: start + 1}
		for i, l := range lines[start:end] {
			if m := wantRe.FindStringSubmatch(l); m != nil {
				c.want = strings.Trim(strings.TrimSpace(m[1]), `"`)
				c.want = strings.ReplaceAll(c.want, ":LINE:", fmt.Sprintf(":%d:", start+i+1))
			}
		}
		out = append(out, c)
	}
	for i, l := range lines {
		if l == "---" {
			flush(i)
			start = i + 1
		}
	}
	flush(len(lines))
	return out
}

// TestScripts runs testdata/*.star.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test scripts: %v", err)
	}
	assert, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	e := testEngine(t)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			env := NewEnv(Options{Engine: e, Stdout: &out, Args: []string{"a1", "a2"}, Parallel: 2})
			env.AddBuiltin("assert", assert["assert"])
			env.AddBuiltin("tmpdir", sl.String(t.TempDir()))
			for _, c := range readChunks(t, file) {
				th := env.NewThread(file)
				starlarktest.SetReporter(th, t)
				_, err := sl.ExecFileOptions(FileOptions, th, file, c.src, env.Predeclared())
				switch {
				case err == nil && c.want != "":
					t.Errorf("%s:%d: the part succeeded; want an error matching %q", file, c.line, c.want)
				case err != nil && c.want == "":
					t.Errorf("%s:%d: %s", file, c.line, ScriptError(err))
				case err != nil && !regexp.MustCompile(c.want).MatchString(err.Error()):
					t.Errorf("%s:%d: error %q does not match %q", file, c.line, err.Error(), c.want)
				}
			}
			if testing.Verbose() {
				t.Logf("output:\n%s", out.String())
			}
		})
	}
}
