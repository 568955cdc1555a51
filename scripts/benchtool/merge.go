package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// mergeSeeds is the size of the sweep whose merge PrintMergeFigures times.
const mergeSeeds = 10_000

// PrintMergeFigures times seedfall merge of a sweep of 10,000 seeds, in
// milliseconds per 10,000 seeds: the results directory of a real sweep of
// examples/kvlog (20 seeds, most failing, so each has its failures.jsonl
// line and schedule), replicated to 10,000 seeds and split in 8 shards as
// run -shard K/8 -out would write them. Each way of merging runs rounds
// times; the table shows the fastest and the slowest.
func PrintMergeFigures(cache string, rounds int) {
	dir, err := os.MkdirTemp("", "seedfall-bench-merge")
	check(err)
	defer os.RemoveAll(dir)
	check(os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(*root, "examples"))))
	os.RemoveAll(filepath.Join(dir, "examples/kvlog/.seedfall"))
	real := filepath.Join(dir, "real")
	seedfall(cache, 1, "run", "-c", filepath.Join(dir, "examples/kvlog/seedfall.json"), "-seeds", "1-20", "-parallel", "1", "-out", real)
	synth := filepath.Join(dir, "synth")
	failing := synthesize(real, synth, 8)

	fmt.Printf("\n%-44s %9s %9s\n", fmt.Sprintf("merge, %d seeds (%d failing) in 8 shards", mergeSeeds, failing), "fastest", "slowest")
	for _, way := range []struct {
		name string
		args []string
	}{
		{"merge (text)", nil},
		{"merge -json", []string{"-json"}},
		{"merge -report -junit", []string{"-report", filepath.Join(dir, "r.html"), "-junit", filepath.Join(dir, "j.xml")}},
		{"merge -out (copies the schedules)", []string{"-out", filepath.Join(dir, "merged")}},
	} {
		var took []time.Duration
		for range rounds {
			start := time.Now()
			out := seedfall(cache, 1, append([]string{"merge", synth}, way.args...)...)
			took = append(took, time.Since(start))
			if !bytes.Contains(out, []byte("\"seed\":10000,")) && !bytes.Contains(out, []byte("10000 seeds: ")) {
				fmt.Fprintf(os.Stderr, "merge %v printed no seed 10000:\n%s", way.args, out)
				os.Exit(1)
			}
		}
		slices.Sort(took)
		per := func(d time.Duration) string {
			return fmt.Sprintf("%.0fms", float64(d.Milliseconds())*10_000/mergeSeeds)
		}
		fmt.Printf("%-44s %9s %9s\n", way.name, per(took[0]), per(took[len(took)-1]))
	}
	fmt.Println("ms per 10,000 seeds: the whole command, start-up included.")
}

// seedfall runs a seedfall command that must exit with status want, and
// returns its stdout.
func seedfall(cache string, want int, args ...string) []byte {
	cmd := exec.Command(*bin, args...)
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+cache)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != want {
		fmt.Fprintf(os.Stderr, "%s: exit status %d (%v)\n%s%s", strings.Join(cmd.Args, " "), code, err, out.String(), errOut.String())
		os.Exit(1)
	}
	return out.Bytes()
}

// synthesize writes mergeSeeds seeds, split in n shards, from the results
// directory of a real sweep: seed s is a copy of the real seed (s-1) mod
// R + 1, renumbered. It returns how many seeds fail.
func synthesize(real, to string, n int) (failing int) {
	var meta map[string]any
	b, err := os.ReadFile(filepath.Join(real, "run.json"))
	check(err)
	check(json.Unmarshal(b, &meta))
	lines := readLines(filepath.Join(real, "results.jsonl"))
	fails := map[int][]byte{} // by the seed's index in lines
	failLines := readLines(filepath.Join(real, "failures.jsonl"))
	for i, j := 0, 0; i < len(lines); i++ {
		if bytes.Contains(lines[i], []byte(`"passed":false`)) {
			fails[i] = failLines[j]
			j++
		}
	}
	seedRe := regexp.MustCompile(`^\{"seed":\d+,`)
	pathRe := regexp.MustCompile(`seed-\d+\.faults\.json`)
	schedSeedRe := regexp.MustCompile(`"seed": \d+,`)
	renumber := func(line []byte, seed int) []byte {
		line = seedRe.ReplaceAll(line, fmt.Appendf(nil, `{"seed":%d,`, seed))
		return pathRe.ReplaceAll(line, fmt.Appendf(nil, "seed-%d.faults.json", seed))
	}
	for k := 1; k <= n; k++ {
		dir := filepath.Join(to, fmt.Sprintf("shard-%d-of-%d", k, n))
		check(os.MkdirAll(filepath.Join(dir, "schedules"), 0o755))
		var res, fl bytes.Buffer
		count, passed, kept := 0, 0, 0
		for i := k - 1; i < mergeSeeds; i += n {
			seed, tmpl := i+1, i%len(lines)
			count++
			res.Write(append(renumber(lines[tmpl], seed), '\n'))
			f, ok := fails[tmpl]
			if !ok {
				passed++
				continue
			}
			failing++
			var rec map[string]any
			check(json.Unmarshal(f, &rec))
			rec["seed"] = seed
			if kept++; kept > 50 { // as run -out keeps them: the first 50 failures' lines
				delete(rec, "lines")
			}
			rb, _ := json.Marshal(rec)
			fl.Write(append(rb, '\n'))
			sch, err := os.ReadFile(filepath.Join(real, "schedules", fmt.Sprintf("seed-%d.faults.json", tmpl+1)))
			check(err)
			sch = schedSeedRe.ReplaceAll(sch, fmt.Appendf(nil, `"seed": %d,`, seed))
			check(os.WriteFile(filepath.Join(dir, "schedules", fmt.Sprintf("seed-%d.faults.json", seed)), sch, 0o644))
		}
		m := map[string]any{}
		for key, v := range meta {
			m[key] = v
		}
		m["seeds"], m["total"], m["count"], m["pinned"] = fmt.Sprintf("1-%d", mergeSeeds), mergeSeeds, count, false
		m["shard"] = map[string]int{"index": k, "count": n}
		mb, _ := json.MarshalIndent(m, "", "  ")
		done, _ := json.Marshal(map[string]int{"seeds": count, "passed": passed, "failed": count - passed})
		for name, data := range map[string][]byte{"run.json": mb, "results.jsonl": res.Bytes(), "failures.jsonl": fl.Bytes(), "complete.json": done} {
			check(os.WriteFile(filepath.Join(dir, name), data, 0o644))
		}
	}
	return failing
}

func readLines(path string) [][]byte {
	b, err := os.ReadFile(path)
	check(err)
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
