package github_test

import (
	"bufio"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The action's work is sweep.sh: these tests run it as the action does,
// with GitHub's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY) in a temporary
// directory, on copies of examples/kvlog's worlds, and check its outputs,
// its files and its exit status.

// step is one run of sweep.sh.
type step struct {
	status  int
	out     map[string]string // GITHUB_OUTPUT
	summary string            // GITHUB_STEP_SUMMARY
	stderr  string
	dir     string // SEEDFALL_OUT
}

// seedfallBin is the seedfall the first run of the script built, moved
// to binDir, which the others use.
var seedfallBin struct {
	sync.Mutex
	path string
}

var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "seedfall-action-")
	if err != nil {
		panic(err)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sweep runs sweep.sh in dir with env (and args), the outputs in out.
func sweep(t *testing.T, dir, out string, env map[string]string, args ...string) step {
	t.Helper()
	script, err := filepath.Abs("sweep.sh")
	if err != nil {
		t.Fatal(err)
	}
	gh := t.TempDir()
	cmd := exec.Command("bash", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GITHUB_OUTPUT="+filepath.Join(gh, "output"),
		"GITHUB_STEP_SUMMARY="+filepath.Join(gh, "summary"),
		"SEEDFALL_OUT="+out,
		"SEEDFALL_FLAGS=-parallel 1",
	)
	seedfallBin.Lock()
	if seedfallBin.path != "" {
		cmd.Env = append(cmd.Env, "SEEDFALL_BIN="+seedfallBin.path)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	s := step{out: map[string]string{}, stderr: stderr.String(), dir: out}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		s.status = exit.ExitCode()
	case err != nil:
		seedfallBin.Unlock()
		t.Fatal(err)
	}
	if built := filepath.Join(out, "bin", "seedfall"); seedfallBin.path == "" && len(args) == 0 {
		if err := os.Rename(built, filepath.Join(binDir, "seedfall")); err == nil {
			seedfallBin.path = filepath.Join(binDir, "seedfall")
		}
	}
	seedfallBin.Unlock()
	if b, err := os.ReadFile(filepath.Join(gh, "output")); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				s.out[k] = v
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(gh, "summary")); err == nil {
		s.summary = string(b)
	}
	t.Logf("sweep.sh %v with %v: exit %d\n%s%s", args, env, s.status, stdout, s.stderr)
	return s
}

// want checks outputs of a step.
func (s step) want(t *testing.T, kv ...string) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		if got := s.out[kv[i]]; got != kv[i+1] {
			t.Errorf("output %s=%q, want %q (outputs %v)", kv[i], got, kv[i+1], s.out)
		}
	}
}

// copyKVLog copies kvlog's worlds, server and client into a fresh
// directory, the root of a repository the action runs in.
func copyKVLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "kvlog/seedfall.json", "kvlog/seedfall.fixed.json",
		"kvlog/server/main.go", "kvlog/server/store.go", "kvclient/main.go"} {
		b, err := os.ReadFile(filepath.Join("../../examples", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// junitCounts reads a JUnit file's test and failure counts.
func junitCounts(t *testing.T, path string) (tests, failures int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s does not parse: %v", path, err)
	}
	return doc.Tests, doc.Failures
}

// TestSweep runs kvlog's buggy world, then runs it again and the fixed
// world against earlier results as the baseline: the job fails on the
// first run, passes when the finding is ongoing or resolved, and fails
// when it is new or regressed.
func TestSweep(t *testing.T) {
	repo := copyKVLog(t)
	buggy := map[string]string{"SEEDFALL_WORLD": "kvlog/seedfall.json", "SEEDFALL_SEEDS": "1-3"}
	first := sweep(t, repo, filepath.Join(t.TempDir(), "out"), buggy)
	if first.status != 1 {
		t.Fatalf("the buggy world: exit status %d, want 1", first.status)
	}
	first.want(t, "exit-code", "1", "seeds", "3", "passed", "0", "failed", "3", "new", "",
		"junit", filepath.Join(first.dir, "junit.xml"), "report", filepath.Join(first.dir, "report.html"),
		"results", filepath.Join(first.dir, "results"))
	if tests, failures := junitCounts(t, first.out["junit"]); tests != 3 || failures != 3 {
		t.Errorf("junit.xml: %d tests, %d failures, want 3 and 3", tests, failures)
	}
	for _, f := range []string{"report.html", "output.txt", "results"} {
		if _, err := os.Stat(filepath.Join(first.dir, f)); err != nil {
			t.Errorf("the action uploads %s, which the script did not write: %v", f, err)
		}
	}
	for _, want := range []string{"### seedfall: `kvlog/seedfall.json`, seeds 1-3\n", "\n**failed**\n",
		"\n3 seeds: 0 passed, 3 failed (seeds 1 2 3) in ", "replay: seedfall replay -c kvlog/seedfall.json -seed 1"} {
		if !strings.Contains(first.summary, want) {
			t.Errorf("the step summary lacks %q:\n%s", want, first.summary)
		}
	}

	// The same failures again: ongoing, so the job passes.
	buggy["SEEDFALL_BASELINE"] = first.out["results"]
	again := sweep(t, repo, filepath.Join(t.TempDir(), "out"), buggy)
	if again.status != 0 {
		t.Errorf("the buggy world against its own results: exit status %d, want 0", again.status)
	}
	again.want(t, "exit-code", "0", "failed", "3", "new", "0", "ongoing", "1", "resolved", "0", "regressed", "0")
	if !strings.Contains(again.summary, "**passed**: no new or regressed finding") || !strings.Contains(again.summary, "1 ongoing") {
		t.Errorf("the step summary:\n%s", again.summary)
	}

	// The fixed world: the finding is resolved.
	fixed := map[string]string{"SEEDFALL_WORLD": "kvlog/seedfall.fixed.json", "SEEDFALL_SEEDS": "1-3", "SEEDFALL_BASELINE": first.out["results"]}
	resolved := sweep(t, repo, filepath.Join(t.TempDir(), "out"), fixed)
	if resolved.status != 0 {
		t.Errorf("the fixed world against the buggy one's results: exit status %d, want 0", resolved.status)
	}
	resolved.want(t, "exit-code", "0", "passed", "3", "failed", "0", "new", "0", "resolved", "1")

	// The buggy world against the fixed one's results, which recorded
	// the finding resolved: it regressed, and the job fails.
	buggy["SEEDFALL_BASELINE"] = resolved.out["results"]
	regressed := sweep(t, repo, filepath.Join(t.TempDir(), "out"), buggy)
	if regressed.status != 1 {
		t.Errorf("the buggy world against the fixed one's results: exit status %d, want 1", regressed.status)
	}
	regressed.want(t, "exit-code", "1", "new", "0", "regressed", "1")
	if !strings.Contains(regressed.summary, "**failed**: a new or regressed finding") {
		t.Errorf("the step summary:\n%s", regressed.summary)
	}

	// Against results that never saw it (the fixed world's first run), the
	// finding is new, and the job fails.
	delete(fixed, "SEEDFALL_BASELINE")
	clean := sweep(t, repo, filepath.Join(t.TempDir(), "out"), fixed)
	if clean.status != 0 {
		t.Fatalf("the fixed world: exit status %d, want 0", clean.status)
	}
	clean.want(t, "exit-code", "0", "seeds", "3", "passed", "3", "failed", "0")
	buggy["SEEDFALL_BASELINE"] = clean.out["results"]
	newer := sweep(t, repo, filepath.Join(t.TempDir(), "out"), buggy)
	if newer.status != 1 {
		t.Errorf("the buggy world against the fixed one's first results: exit status %d, want 1", newer.status)
	}
	newer.want(t, "exit-code", "1", "new", "1", "ongoing", "0", "regressed", "0")

	// No baseline yet (the artifact was not found): every failure counts.
	buggy["SEEDFALL_BASELINE"] = filepath.Join(t.TempDir(), "missing")
	none := sweep(t, repo, filepath.Join(t.TempDir(), "out"), buggy)
	if none.status != 1 || !strings.Contains(none.summary, "no baseline at "+buggy["SEEDFALL_BASELINE"]+" yet: every failing seed counts") {
		t.Errorf("a missing baseline: exit status %d, summary:\n%s", none.status, none.summary)
	}
}

// TestShards runs the sweep as two shards, each in a job of its own that
// passes though its seeds fail, then merges them as the last job does:
// the same counts as one sweep, and the job fails.
func TestShards(t *testing.T) {
	repo := copyKVLog(t)
	shards := filepath.Join(t.TempDir(), "shards") // the shards' artifacts, downloaded
	for _, k := range []string{"1", "2"} {
		s := sweep(t, repo, filepath.Join(t.TempDir(), "out"), map[string]string{
			"SEEDFALL_WORLD": "kvlog/seedfall.json", "SEEDFALL_SEEDS": "1-3", "SEEDFALL_SHARDS": "2", "SEEDFALL_SHARD": k})
		if s.status != 0 {
			t.Fatalf("shard %s: exit status %d, want 0 (the merge decides)", k, s.status)
		}
		if !strings.Contains(s.summary, "shard "+k+" of 2") || !strings.Contains(s.summary, "**ran**: the merge says whether it passed") {
			t.Errorf("shard %s's step summary:\n%s", k, s.summary)
		}
		if err := os.CopyFS(shards, os.DirFS(s.out["results"])); err != nil {
			t.Fatal(err)
		}
	}
	merged := sweep(t, repo, filepath.Join(t.TempDir(), "out"), map[string]string{
		"SEEDFALL_SHARDS": "2", "SEEDFALL_SHARD_DIRS": shards, "SEEDFALL_FLAGS": ""})
	if merged.status != 1 {
		t.Errorf("the merge of failing shards: exit status %d, want 1", merged.status)
	}
	merged.want(t, "exit-code", "1", "seeds", "3", "passed", "0", "failed", "3")
	if !strings.Contains(merged.summary, "### seedfall: 2 shards merged") || !strings.Contains(merged.summary, "3 seeds: 0 passed, 3 failed (seeds 1 2 3)") {
		t.Errorf("the merge's step summary:\n%s", merged.summary)
	}
}

// TestInputErrors: inputs that cannot work stop the step with status 2
// and say which input is wrong, before anything runs.
func TestInputErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SEEDFALL_WORLD": "w.json", "SEEDFALL_SHARDS": "x"}, `seedfall action: shards: "x" is not a count of shards (1, 2, ...)`},
		{map[string]string{"SEEDFALL_WORLD": "w.json", "SEEDFALL_SHARDS": "2", "SEEDFALL_SHARD": "3"}, "seedfall action: shard: 3 is not a shard number from 1 to 2"},
		{map[string]string{"SEEDFALL_WORLD": "w.json", "SEEDFALL_SHARD": "2"}, "seedfall action: shard: 2, but shards is 1: set shards to the number of shards"},
		{map[string]string{}, "seedfall action: world: say which world file to run"},
		{map[string]string{"SEEDFALL_SHARDS": "2", "SEEDFALL_SHARD_DIRS": filepath.Join(dir, "none")}, "seedfall action: no shard results at " + filepath.Join(dir, "none") + " to merge"},
	} {
		s := sweep(t, dir, filepath.Join(dir, "out"), c.env, "")
		if s.status != 2 || strings.TrimSpace(s.stderr) != c.want || s.out["exit-code"] != "2" {
			t.Errorf("%v: exit status %d, stderr %q, outputs %v; want 2 and %q", c.env, s.status, s.stderr, s.out, c.want)
		}
	}
}

// TestNames: the artifacts' names, from the world file or the name input.
func TestNames(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		env            map[string]string
		name, artifact string
	}{
		{map[string]string{"SEEDFALL_WORLD": "examples/kvlog/seedfall.json"}, "seedfall-kvlog", "seedfall-kvlog"},
		{map[string]string{"SEEDFALL_WORLD": "seedfall.json"}, "seedfall", "seedfall"},
		{map[string]string{"SEEDFALL_WORLD": "kvlog/seedfall.fixed.json", "SEEDFALL_SHARDS": "3", "SEEDFALL_SHARD": "2"}, "seedfall-seedfall.fixed", "seedfall-seedfall.fixed-shard-2-of-3"},
		{map[string]string{"SEEDFALL_WORLD": "w.star", "SEEDFALL_NAME": "nightly"}, "nightly", "nightly"},
	} {
		s := sweep(t, dir, filepath.Join(dir, "out"), c.env, "names")
		if s.status != 0 || s.out["name"] != c.name || s.out["artifact"] != c.artifact {
			t.Errorf("%v: exit %d, outputs %v; want name=%s artifact=%s", c.env, s.status, s.out, c.name, c.artifact)
		}
	}
}

// TestActionInputs: action.yml and sweep.sh agree. Every input is
// documented and used, every ${{ inputs.X }} is declared, every output is
// one the script writes, and every SEEDFALL_ variable the action sets is
// one the script reads.
func TestActionInputs(t *testing.T) {
	b, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	yml := string(b)
	sh, err := os.ReadFile("sweep.sh")
	if err != nil {
		t.Fatal(err)
	}
	script := string(sh)
	// The keys two spaces in, under "inputs:" and under "outputs:".
	section := func(name string) map[string]string {
		keys := map[string]string{}
		in, key := false, ""
		for _, l := range strings.Split(yml, "\n") {
			switch {
			case l == name+":":
				in = true
			case in && l != "" && !strings.HasPrefix(l, " "):
				return keys
			case in && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && strings.HasSuffix(l, ":"):
				key = strings.TrimSuffix(strings.TrimSpace(l), ":")
				keys[key] = ""
			case in && key != "":
				keys[key] += strings.TrimSpace(l) + "\n"
			}
		}
		return keys
	}
	inputs, outputs := section("inputs"), section("outputs")
	if len(inputs) < 5 || len(outputs) < 5 {
		t.Fatalf("read %d inputs and %d outputs from action.yml", len(inputs), len(outputs))
	}
	for name, body := range inputs {
		if !strings.Contains(body, "description: ") {
			t.Errorf("input %s has no description", name)
		}
		if !strings.Contains(yml, "inputs."+name+" ") && !strings.Contains(yml, "inputs."+name+"}") {
			t.Errorf("input %s is never used", name)
		}
	}
	for _, m := range regexpAll(`inputs\.([a-z-]+)`, yml) {
		if _, ok := inputs[m]; !ok {
			t.Errorf("action.yml uses inputs.%s, which it does not declare", m)
		}
	}
	for name, body := range outputs {
		if !strings.Contains(body, "value: ${{ steps.sweep.outputs."+name+" }}") {
			t.Errorf("output %s is not the sweep step's %s", name, name)
		}
		if !strings.Contains(script, `echo "`+name+`=`) {
			t.Errorf("output %s: sweep.sh never writes %s=", name, name)
		}
	}
	for _, v := range regexpAll(`\b(SEEDFALL_[A-Z_]+):`, yml) {
		if !strings.Contains(script, "${"+v) {
			t.Errorf("action.yml sets %s, which sweep.sh does not read", v)
		}
	}
}

func regexpAll(pattern, s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(pattern).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
