// Package resultstest writes results directories by hand, for the tests of
// what reads them: merge, triage, the report.
package resultstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/results"
)

// Dir writes a results directory by hand, as run -out would: seed i+1 (of
// a shard, its i-th seed) fails with fails[i] ("class|program|reason"), or
// passes when it is "". edit, if not nil, changes run.json first.
func Dir(t testing.TB, dir string, edit func(*results.Meta), fails ...string) {
	t.Helper()
	meta := results.Meta{Format: results.Format, Seedfall: "v0.0.0-test",
		World: results.WorldIdentity{Name: "seedfall.json", Args: "-c seedfall.json", Hash: "1234", Resolved: json.RawMessage(`{"faults":{"crash_per_sec":1}}`)},
		Build: []results.ProgramBuild{{Program: "client", Hash: "abcd"}}, Seeds: fmt.Sprintf("1-%d", len(fails)), Total: len(fails), Count: len(fails), Nodes: []string{"client"}}
	if edit != nil {
		edit(&meta)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(meta)
	var lines, failures bytes.Buffer
	passed := 0
	for i, f := range fails {
		seed := uint64(i + 1)
		if sh := meta.Shard; sh != nil {
			seed = uint64(sh.Index + i*sh.Count) // of the list 1-N
		}
		r := results.Line{Seed: seed, Passed: f == "", Reason: "every workload exited 0", SimNs: 1e9, WallNs: 1e6, Steps: 10, Digest: fmt.Sprintf("%064d", seed)}
		if f == "" {
			passed++
		} else {
			parts := strings.SplitN(f, "|", 3)
			r.Class, r.Node, r.Reason = parts[0], parts[1], parts[2]
			rec, _ := json.Marshal(results.FailureRecord{Seed: seed, Replay: fmt.Sprintf("seedfall replay -c seedfall.json -seed %d", seed)})
			failures.Write(append(rec, '\n'))
		}
		l, _ := json.Marshal(r)
		lines.Write(append(l, '\n'))
	}
	done, _ := json.Marshal(results.CompleteMark{Seeds: len(fails), Passed: passed, Failed: len(fails) - passed})
	for name, data := range map[string][]byte{results.MetaFile: b, results.LinesFile: lines.Bytes(), results.FailuresFile: failures.Bytes(), results.CompleteFile: done} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
