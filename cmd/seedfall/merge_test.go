package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/results"
)

// The tests here run the seedfall command (the test binary, which
// testscript.Main puts in $PATH under that name) on copies of kvlog and of
// the bank world of testdata/script/properties.txtar: a sweep split in
// shards, the shards merged, and what merge prints, against one sweep.

// sf runs a seedfall command in dir and returns its stdout, stderr and
// exit status.
func sf(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("seedfall", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+sharedCache)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode()
}

// mustSF is sf that wants exit status code.
func mustSF(t *testing.T, code int, dir string, args ...string) string {
	t.Helper()
	out, errOut, got := sf(t, dir, args...)
	if got != code {
		t.Fatalf("seedfall %s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errOut)
	}
	return out
}

// normWall replaces the wall times in output, as the doc transcripts
// compare them.
func normWall(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = normLine(l)
	}
	return strings.Join(lines, "\n")
}

// bankWorld extracts the bank world of properties.txtar: a workload with
// sim properties, which -overdraw makes fail some seeds.
func bankWorld(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := extractTxtar("testdata/script/properties.txtar", dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// jsonLines are the per-seed objects of run -json output, by seed.
func jsonLines(t *testing.T, out string) map[uint64]results.Line {
	t.Helper()
	m := map[uint64]results.Line{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, `{"seed":`) {
			continue
		}
		var r results.Line
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if _, dup := m[r.Seed]; dup {
			t.Fatalf("seed %d twice", r.Seed)
		}
		m[r.Seed] = r
	}
	return m
}

// Three shards of a sweep run every seed once, each with the digest of the
// sweep run whole; merging them prints what the whole sweep prints, as
// text and as -json, the failures, the summary and the coverage table
// (wall times aside), and writes the same HTML report.
func TestShardsMergeToTheSweep(t *testing.T) {
	for _, w := range []struct {
		name  string
		dir   string
		args  []string
		seeds int
	}{
		{"kvlog", copyExample(t), []string{"-c", "kvlog/seedfall.json", "-seeds", "1-9"}, 9},
		{"bank", bankWorld(t), []string{"-c", "seedfall.json", "-seeds", "1-8", "-set", `workload.args=["-overdraw"]`}, 8},
	} {
		t.Run(w.name, func(t *testing.T) {
			dir, res := w.dir, t.TempDir()
			run := func(args ...string) []string {
				return append(append([]string{"run", "-parallel", "1"}, w.args...), args...)
			}
			whole := mustSF(t, 1, dir, run("-report", filepath.Join(res, "whole.html"))...)
			wholeJSONOut := mustSF(t, 1, dir, run("-json")...)
			wholeJSON := jsonLines(t, wholeJSONOut)
			if len(wholeJSON) != w.seeds {
				t.Fatalf("the whole sweep ran %d seeds, want %d", len(wholeJSON), w.seeds)
			}
			union := map[uint64]results.Line{}
			for k := 1; k <= 3; k++ {
				out, _, _ := sf(t, dir, run("-json", "-shard", fmt.Sprintf("%d/3", k), "-out", filepath.Join(res, "shards"))...)
				for seed, r := range jsonLines(t, out) {
					if _, dup := union[seed]; dup {
						t.Errorf("seed %d is in two shards", seed)
					}
					// Seed i of the list (from 0) is in shard i mod 3 + 1.
					if want := int(seed-1)%3 + 1; want != k {
						t.Errorf("seed %d is in shard %d, want %d", seed, k, want)
					}
					union[seed] = r
				}
			}
			if len(union) != len(wholeJSON) {
				t.Errorf("the shards ran %d seeds, the whole sweep %d", len(union), len(wholeJSON))
			}
			for seed, r := range wholeJSON {
				if u, ok := union[seed]; !ok || u.Digest != r.Digest || u.Passed != r.Passed {
					t.Errorf("seed %d: digest %s (passed %v) in the shards, %s (passed %v) whole", seed, u.Digest, u.Passed, r.Digest, r.Passed)
				}
			}

			merged := mustSF(t, 1, dir, "merge", filepath.Join(res, "shards"), "-report", filepath.Join(res, "merged.html"))
			if normWall(merged) != normWall(whole) {
				t.Errorf("merge prints\n%s\nthe whole sweep\n%s", merged, whole)
			}
			if w.name == "bank" && !strings.Contains(merged, "property coverage over 8 seeds:") {
				t.Errorf("no coverage table in\n%s", merged)
			}
			if w.name == "kvlog" && !strings.Contains(merged, "9 seeds: 0 passed, 9 failed") {
				t.Errorf("no summary line in\n%s", merged)
			}
			mergedJSON := mustSF(t, 1, dir, "merge", "-json", filepath.Join(res, "shards"))
			if normWall(mergedJSON) != normWall(wholeJSONOut) {
				t.Errorf("merge -json prints\n%s\nthe whole sweep\n%s", mergedJSON, wholeJSONOut)
			}
			// merge -out keeps the union as one results directory, which
			// merges to the same again, with every failing seed's schedule.
			mustSF(t, 1, dir, "merge", filepath.Join(res, "shards"), "-out", filepath.Join(res, "union"))
			if again := mustSF(t, 1, dir, "merge", filepath.Join(res, "union")); normWall(again) != normWall(whole) {
				t.Errorf("merge of merge -out prints\n%s\nthe whole sweep\n%s", again, whole)
			}
			failed := 0
			for _, r := range wholeJSON {
				if !r.Passed {
					failed++
					if _, err := os.Stat(filepath.Join(res, "union", results.SchedulesDir, fmt.Sprintf("seed-%d.faults.json", r.Seed))); err != nil {
						t.Errorf("merge -out: %v", err)
					}
				}
			}
			if failed == 0 {
				t.Errorf("no seed of the sweep failed")
			}
			a, _ := os.ReadFile(filepath.Join(res, "whole.html"))
			b, _ := os.ReadFile(filepath.Join(res, "merged.html"))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("merge -report wrote %d bytes, different from the whole sweep's %d", len(b), len(a))
			}
		})
	}
}

// copyExample copies kvlog and its client into a fresh directory, as the
// scripts do: commands write .seedfall/ next to the world.
func copyExample(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "kvlog/seedfall.json", "kvlog/server/main.go", "kvlog/server/store.go", "kvclient/main.go"} {
		b, err := os.ReadFile(filepath.Join("../../examples", f))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A shard killed in the middle of a line leaves a directory whose whole
// lines merge; merge says the shard is incomplete and how much of it
// there is, and exits 2 unless -partial accepts it.
func TestMergeIncompleteShard(t *testing.T) {
	dir, res := copyExample(t), t.TempDir()
	for k := 1; k <= 3; k++ {
		sf(t, dir, "run", "-parallel", "1", "-c", "kvlog/seedfall.json", "-seeds", "1-9", "-shard", fmt.Sprintf("%d/3", k), "-out", res)
	}
	// As a kill leaves it: the first line whole, the second cut, no
	// complete.json.
	shard2 := filepath.Join(res, "shard-2-of-3")
	lines, err := os.ReadFile(filepath.Join(shard2, results.LinesFile))
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.IndexByte(lines, '\n') + 1
	if err := os.WriteFile(filepath.Join(shard2, results.LinesFile), lines[:first+30], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(shard2, results.CompleteFile)); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := sf(t, dir, "merge", "-json", res)
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	if want := "seedfall merge: shard 2 of 3 (" + shard2 + ") is incomplete: 1 of 3 seeds\n"; !strings.Contains(errOut, want) {
		t.Errorf("stderr\n%s\nsays nothing like %q", errOut, want)
	}
	if !strings.Contains(errOut, "merged 7 of 9 seeds") {
		t.Errorf("stderr\n%s\ndoes not say how many seeds merged", errOut)
	}
	got := slices.Sorted(func(yield func(uint64) bool) {
		for seed := range jsonLines(t, out) {
			if !yield(seed) {
				return
			}
		}
	})
	if want := []uint64{1, 2, 3, 4, 6, 7, 9}; !slices.Equal(got, want) {
		t.Errorf("merged seeds %v, want %v", got, want)
	}
	mustSF(t, 1, dir, "merge", "-partial", res)
}

// -junit writes XML that parses, with a testcase per seed, the failures
// counted, and each failure's replay command.
func TestJUnit(t *testing.T) {
	dir, res := bankWorld(t), t.TempDir()
	args := []string{"-c", "seedfall.json", "-seeds", "1-8", "-set", `workload.args=["-overdraw"]`}
	out := mustSF(t, 1, dir, append([]string{"run", "-parallel", "1", "-json", "-junit", filepath.Join(res, "run.xml"), "-out", filepath.Join(res, "r")}, args...)...)
	failed := 0
	for _, r := range jsonLines(t, out) {
		if !r.Passed {
			failed++
		}
	}
	if failed == 0 || failed == 8 {
		t.Fatalf("%d of 8 seeds failed: the test wants some of each", failed)
	}
	mustSF(t, 1, dir, "merge", "-junit", filepath.Join(res, "merge.xml"), filepath.Join(res, "r"))
	for _, file := range []string{"run.xml", "merge.xml"} {
		b, err := os.ReadFile(filepath.Join(res, file))
		if err != nil {
			t.Fatal(err)
		}
		var doc results.JUnitXML
		if err := xml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if doc.Tests != 8 || doc.Failures != failed || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 8 || doc.Suites[0].Failures != failed {
			t.Fatalf("%s: %d tests, %d failures, %d suites; want 8 and %d in one", file, doc.Tests, doc.Failures, len(doc.Suites), failed)
		}
		n := 0
		for i, c := range doc.Suites[0].Cases {
			if want := fmt.Sprintf("seed=%d", i+1); c.Name != want || c.Classname != `seedfall.json -set 'workload.args=["-overdraw"]'` {
				t.Errorf("%s: testcase %q of %q, want %q", file, c.Name, c.Classname, want)
			}
			if c.Failure == nil {
				continue
			}
			n++
			replay := fmt.Sprintf(`replay: seedfall replay -c seedfall.json -set 'workload.args=["-overdraw"]' -seed %d`, i+1)
			if c.Failure.Type != "property" || !strings.HasPrefix(c.Failure.Message, `property: property "balance never negative" failed`) || !strings.Contains(c.Failure.Text, replay) {
				t.Errorf("%s: seed %d: failure %+v, want class property and %q", file, i+1, c.Failure, replay)
			}
		}
		if n != failed {
			t.Errorf("%s: %d testcases with a failure, want %d", file, n, failed)
		}
	}
}

// A seed run twice through -out leaves the same line (wall time aside).
func TestResultsDeterministic(t *testing.T) {
	dir, res := copyExample(t), t.TempDir()
	var lines [2]string
	for i := range lines {
		out := filepath.Join(res, fmt.Sprint(i))
		sf(t, dir, "run", "-c", "kvlog/seedfall.json", "-seeds", "3-4", "-out", out)
		b, err := os.ReadFile(filepath.Join(out, results.LinesFile))
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = regexp.MustCompile(`"wall_ns":\d+`).ReplaceAllString(string(b), "")
	}
	if lines[0] != lines[1] || strings.Count(lines[0], "\n") != 2 {
		t.Errorf("two runs of seeds 3-4 wrote\n%s\nand\n%s", lines[0], lines[1])
	}
}

// A sweep killed (SIGKILL) while it writes leaves a directory whose whole
// lines merge, and merge says how much of it there is.
func TestMergeKilledRun(t *testing.T) {
	dir, out := copyExample(t), filepath.Join(t.TempDir(), "killed")
	cmd := exec.Command("seedfall", "run", "-c", "kvlog/seedfall.json", "-seeds", "1-100000000", "-parallel", "1", "-out", out)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+sharedCache)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(filepath.Join(out, results.LinesFile))
		if bytes.Count(b, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no 3 seeds in results.jsonl in 2 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	stdout, stderr, code := sf(t, dir, "merge", "-json", out)
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	n := len(jsonLines(t, stdout))
	if want := fmt.Sprintf("seedfall merge: %s is incomplete: %d of 100000000 seeds\n", out, n); n < 3 || !strings.Contains(stderr, want) {
		t.Errorf("merged %d seeds; stderr\n%s\nsays nothing like %q", n, stderr, want)
	}
}
