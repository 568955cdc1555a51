package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReasonShape(t *testing.T) {
	for _, c := range []struct{ reason, shape string }{
		{"client#1 exited with status 1", "client#<n> exited with status <n>"},
		{"client#2 exited with status 3", "client#<n> exited with status <n>"},
		{`property "balance never negative" failed in client#1: details {"balance":-5,"withdraw":145}`,
			`property "balance never negative" failed in client#<n>: details {"balance":<n>,"withdraw":<n>}`},
		{"server#2 did not answer for 1.5s after t=2.46237307s", "server#<n> did not answer for <dur> after t=<dur>"},
		{"nil dereference at 0xc000012345 in seed-17", "nil dereference at <addr> in seed-<n>"},
		{"dial tcp 10.0.0.1:7000: connect: connection refused", "dial tcp <addr>: connect: connection refused"},
		{"digest 366ee547107a0280 differs", "digest <hex> differs"},
		{"out of memory: 512 MiB limit, 1m30s in", "out of memory: <n> MiB limit, <dur> in"},
		{"deadbeef and cafe stay words", "deadbeef and cafe stay words"},
	} {
		if got := ReasonShape(c.reason); got != c.shape {
			t.Errorf("ReasonShape(%q) = %q, want %q", c.reason, got, c.shape)
		}
	}
}

// fixture writes a results directory by hand: seed i+1 (of a shard, its
// i-th seed) fails with fails[i] ("class|program|reason"), or passes when
// it is "". edit, if
// not nil, changes run.json first.
func fixture(t *testing.T, dir string, edit func(*Meta), fails ...string) {
	t.Helper()
	meta := Meta{Format: Format, Seedfall: "v0.0.0-test",
		World: WorldIdentity{Name: "seedfall.json", Args: "-c seedfall.json", Hash: "1234", Resolved: json.RawMessage(`{"faults":{"crash_per_sec":1}}`)},
		Build: []ProgramBuild{{Program: "client", Hash: "abcd"}}, Seeds: fmt.Sprintf("1-%d", len(fails)), Total: len(fails), Count: len(fails), Nodes: []string{"client"}}
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
		r := Line{Seed: seed, Passed: f == "", Reason: "every workload exited 0", SimNs: 1e9, WallNs: 1e6, Steps: 10, Digest: fmt.Sprintf("%064d", seed)}
		if f == "" {
			passed++
		} else {
			parts := strings.SplitN(f, "|", 3)
			r.Class, r.Node, r.Reason = parts[0], parts[1], parts[2]
			rec, _ := json.Marshal(FailureRecord{Seed: seed, Replay: fmt.Sprintf("seedfall replay -c seedfall.json -seed %d", seed)})
			failures.Write(append(rec, '\n'))
		}
		l, _ := json.Marshal(r)
		lines.Write(append(l, '\n'))
	}
	done, _ := json.Marshal(CompleteMark{Seeds: len(fails), Passed: passed, Failed: len(fails) - passed})
	for name, data := range map[string][]byte{MetaFile: b, LinesFile: lines.Bytes(), FailuresFile: failures.Bytes(), CompleteFile: done} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Against a baseline, a sweep's findings are new, ongoing or regressed,
// and the baseline's that it no longer shows are resolved; a triage kept
// in a results directory makes a finding it resolved regress when it
// comes back.
func TestTriage(t *testing.T) {
	dir := t.TempDir()
	beta := func(n int) string { return fmt.Sprintf("workload|client|client#1 exited with status %d", n) }
	alpha := `property|client|property "alpha" failed`
	gamma := "liveness|server|server#2 did not answer for 5s"
	fixture(t, filepath.Join(dir, "b0"), nil, alpha, beta(1), "", alpha)
	var note bytes.Buffer
	base, err := LoadBaseline(filepath.Join(dir, "b0"), &note)
	if err != nil || note.Len() > 0 {
		t.Fatalf("LoadBaseline: %v %s", err, note.String())
	}
	sweep := func(b *Baseline, fails ...string) *Triage {
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
	if want := "triage against " + DisplayPath(filepath.Join(dir, "b0")) + ": 1 new, 1 ongoing, 1 resolved, 0 regressed\n"; !strings.HasPrefix(table.String(), want) {
		t.Errorf("the table begins %q, want %q", table.String(), want)
	}

	// The triage kept with the next results makes alpha regress.
	fixture(t, filepath.Join(dir, "r1"), nil, beta(2), gamma, "", "")
	b, _ := json.Marshal(tri)
	if err := os.WriteFile(filepath.Join(dir, "r1", TriageFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	base, err = LoadBaseline(filepath.Join(dir, "r1"), &note)
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
	shard := func(k, n int) func(*Meta) {
		return func(m *Meta) {
			m.Shard, m.Seeds, m.Total = &ShardMeta{Index: k, Count: n}, "1-6", 6
		}
	}
	fixture(t, filepath.Join(dir, "res", "shard-1-of-3"), shard(1, 3), "", "workload|client|client#1 exited with status 1")
	fixture(t, filepath.Join(dir, "res", "shard-2-of-3"), shard(2, 3), "", "")
	set, err := LoadSet([]string{filepath.Join(dir, "res")})
	if err != nil {
		t.Fatal(err)
	}
	var seeds []uint64
	if err := set.Each(func(r *Record) { seeds = append(seeds, r.Line.Seed) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seeds) != "[1 2 4 5]" {
		t.Errorf("merged seeds %v, want [1 2 4 5]: seed i of the list from shard i mod 3 + 1", seeds)
	}
	if got := set.Incomplete(); len(got) != 1 || !strings.HasPrefix(got[0], "shard 3 of 3 of -seeds 1-6 is missing: no shard-3-of-3 directory in ") {
		t.Errorf("Incomplete: %q", got)
	}

	fixture(t, filepath.Join(dir, "other"), func(m *Meta) {
		m.World.Hash, m.World.Resolved, m.World.Name = "5678", json.RawMessage(`{"faults":{"crash_per_sec":2}}`), "seedfall.json -set faults.crash_per_sec=2"
	}, "")
	fixture(t, filepath.Join(dir, "one"), nil, "")
	_, err = LoadSet([]string{filepath.Join(dir, "one"), filepath.Join(dir, "other")})
	want := fmt.Sprintf("cannot merge %s and %s: they ran different worlds (seedfall.json and seedfall.json -set faults.crash_per_sec=2): faults.crash_per_sec is 1 in the first and 2 in the second; merge only results of one world file, profile and -set",
		DisplayPath(filepath.Join(dir, "one")), DisplayPath(filepath.Join(dir, "other")))
	if err == nil || err.Error() != want {
		t.Errorf("two worlds: %v\nwant %s", err, want)
	}
	fixture(t, filepath.Join(dir, "rebuilt"), func(m *Meta) { m.Build[0].Hash = "ef01" }, "")
	_, err = LoadSet([]string{filepath.Join(dir, "one"), filepath.Join(dir, "rebuilt")})
	if err == nil || !strings.Contains(err.Error(), "they ran different builds: program client is sha256 abcd in the first and sha256 ef01 in the second") {
		t.Errorf("two builds: %v", err)
	}
}
