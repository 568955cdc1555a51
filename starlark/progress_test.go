package starlark

import (
	"strings"
	"sync"
	"testing"

	sl "go.starlark.net/starlark"
)

// Builtins that take a while say how far they are through
// Options.Progress, which is how the REPL shows a progress line.
func TestProgress(t *testing.T) {
	var mu sync.Mutex
	var msgs []string
	env := NewEnv(Options{Engine: testEngine(t), Dir: "testdata", Parallel: 2, Progress: func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, msg)
	}})
	src := `
w = load_config("lossy/seedfall.json")
r = run(w, seed = 1)
s = shrink(r, budget = "30s")
x = explore(w, budget = 3, parallel = 1)
`
	if _, err := sl.ExecFileOptions(FileOptions, env.NewThread("progress"), "<progress>", src, env.Predeclared()); err != nil {
		t.Fatal(ScriptError(err))
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"run seed 1\n",
		"shrink seed 1: running the seed, ",
		"shrink seed 1: removing faults, ",
		" runs so far, ",
		"explore: 3 runs of 3, ",
	} {
		if !strings.Contains(all+"\n", want) {
			t.Errorf("progress messages:\n%s\nwant one containing %q", all, want)
		}
	}
}
