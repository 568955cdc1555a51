package results_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/results/resultstest"
)

// Against a baseline, a sweep's findings are new, ongoing or regressed,
// and the baseline's that it no longer shows are resolved; a triage kept
// in a results directory makes a finding it resolved regress when it
// comes back.
func TestTriage(t *testing.T) {
	dir := t.TempDir()
	beta := func(n int) string { return fmt.Sprintf("workload|client|client#1 exited with status %d", n) }
	alpha := `property|client|property "alpha" failed`
	gamma := "liveness|server|server#2 did not answer for 5s"
	resultstest.Dir(t, filepath.Join(dir, "b0"), nil, alpha, beta(1), "", alpha)
	var note bytes.Buffer
	base, err := results.LoadBaseline(filepath.Join(dir, "b0"), &note)
	if err != nil || note.Len() > 0 {
		t.Fatalf("LoadBaseline: %v %s", err, note.String())
	}
	sweep := func(b *results.Baseline, fails ...string) *results.Triage {
		now := b.Findings()
		for i, f := range fails {
			if f != "" {
				p := strings.SplitN(f, "|", 3)
				now.Add(p[0], p[1], p[2], uint64(i+1), false)
			}
		}
		return b.Triage(now)
	}
	tri := sweep(base, beta(2), gamma, "", "")
	var got []string
	for _, f := range tri.Findings {
		got = append(got, f.State+" "+f.Class)
	}
	if g, want := strings.Join(got, ", "), "new liveness, ongoing workload, resolved property"; g != want || !tri.Failing() {
		t.Fatalf("triage: %s (failing %v), want %s and failing", g, tri.Failing(), want)
	}
	if f := tri.Findings[2]; f.BaselineSeeds != 2 {
		t.Errorf("the resolved finding: %+v, want 2 seeds in the baseline", f)
	}
	var table bytes.Buffer
	tri.Write(&table, false)
	if want := "triage against " + results.DisplayPath(filepath.Join(dir, "b0")) + ": 1 new, 1 ongoing, 1 resolved, 0 regressed\n"; !strings.HasPrefix(table.String(), want) {
		t.Errorf("the table begins %q, want %q", table.String(), want)
	}

	// The triage kept with the next results makes alpha regress.
	resultstest.Dir(t, filepath.Join(dir, "r1"), nil, beta(2), gamma, "", "")
	b, _ := json.Marshal(tri)
	if err := os.WriteFile(filepath.Join(dir, "r1", results.TriageFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	base, err = results.LoadBaseline(filepath.Join(dir, "r1"), &note)
	if err != nil {
		t.Fatal(err)
	}
	tri = sweep(base, alpha, beta(7))
	if tri.Regressed != 1 || tri.Ongoing != 1 || tri.Resolved != 1 || tri.New != 0 {
		t.Errorf("against r1: %+v, want alpha regressed, beta ongoing, gamma resolved", tri)
	}
}

// Results of two worlds, or of two builds, do not merge, and the message
// names the difference; shards of one list merge in the list's order, and
// a missing shard is named.
func TestLoadSet(t *testing.T) {
	dir := t.TempDir()
	shard := func(k, n int) func(*results.Meta) {
		return func(m *results.Meta) {
			m.Shard, m.Seeds, m.Total = &results.ShardMeta{Index: k, Count: n}, "1-6", 6
		}
	}
	resultstest.Dir(t, filepath.Join(dir, "res", "shard-1-of-3"), shard(1, 3), "", "workload|client|client#1 exited with status 1")
	resultstest.Dir(t, filepath.Join(dir, "res", "shard-2-of-3"), shard(2, 3), "", "")
	set, err := results.LoadSet([]string{filepath.Join(dir, "res")})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	if err := set.Each(func(r *results.Record) { seeds = append(seeds, r.Line.Seed) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seeds) != "[1 2 4 5]" {
		t.Errorf("merged seeds %v, want [1 2 4 5]: seed i of the list from shard i mod 3 + 1", seeds)
	}
	if got := set.Incomplete(); len(got) != 1 || !strings.HasPrefix(got[0], "shard 3 of 3 of -seeds 1-6 is missing: no shard-3-of-3 directory in ") {
		t.Errorf("Incomplete: %q", got)
	}

	resultstest.Dir(t, filepath.Join(dir, "other"), func(m *results.Meta) {
		m.World.Hash, m.World.Resolved, m.World.Name = "5678", json.RawMessage(`{"faults":{"crash_per_sec":2}}`), "seedfall.json -set faults.crash_per_sec=2"
	}, "")
	resultstest.Dir(t, filepath.Join(dir, "one"), nil, "")
	_, err = results.LoadSet([]string{filepath.Join(dir, "one"), filepath.Join(dir, "other")})
	want := fmt.Sprintf("cannot merge %s and %s: they ran different worlds (seedfall.json and seedfall.json -set faults.crash_per_sec=2): faults.crash_per_sec is 1 in the first and 2 in the second; merge only results of one world file, profile and -set",
		results.DisplayPath(filepath.Join(dir, "one")), results.DisplayPath(filepath.Join(dir, "other")))
	if err == nil || err.Error() != want {
		t.Errorf("two worlds: %v\nwant %s", err, want)
	}
	resultstest.Dir(t, filepath.Join(dir, "rebuilt"), func(m *results.Meta) { m.Build[0].Hash = "ef01" }, "")
	_, err = results.LoadSet([]string{filepath.Join(dir, "one"), filepath.Join(dir, "rebuilt")})
	if err == nil || !strings.Contains(err.Error(), "they ran different builds: program client is sha256 abcd in the first and sha256 ef01 in the second") {
		t.Errorf("two builds: %v", err)
	}
}
