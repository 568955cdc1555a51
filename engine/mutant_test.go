package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/faults"
)

// crashAtOne crashes node d at 1s and restarts it at 1.5s.
var crashAtOne = &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 1_000_000_000, Kind: faults.Crash, Node: "d", Until: 1_500_000_000}}}

// mutantWorld is a world of one node d running guest with args, crashed by
// crashAtOne, and a workload that outlives the crash.
func mutantWorld(guest string, strict bool, args ...string) string {
	a := `[]`
	if len(args) > 0 {
		a = `["` + strings.Join(args, `", "`) + `"]`
	}
	return fmt.Sprintf(`{"duration": "3s", "faults": {"strict_dirs": %v},
		"nodes": [{"name": "d", "pkg": "./%s", "args": %s}], "workload": {"name": "c", "pkg": "./sleeper", "args": ["-n", "20"]}}`, strict, guest, a)
}

// runMutant runs seed under m twice, with crashAtOne or the schedule given.
func runMutant(t *testing.T, p *Prepared, seed uint64, m Mutant, schedule ...*faults.Schedule) *Result {
	t.Helper()
	sch := *crashAtOne
	if len(schedule) > 0 {
		sch = *schedule[0]
	}
	sch.Seed = seed
	var res [2]*Result
	for i := range res {
		r, err := p.Run(context.Background(), RunOptions{Seed: seed, Schedule: &sch, Mutant: m})
		if err != nil {
			t.Fatal(err)
		}
		res[i] = r
	}
	if res[0].Digest != res[1].Digest {
		t.Fatalf("seed %d with mutant %s ran twice with different traces:\n%s\n---\n%s", seed, m, output(res[0], ""), output(res[1], ""))
	}
	return res[0]
}

// Each mutant takes away the durability its call gives, and only that: what
// the restarted node finds differs from the run without the mutant exactly
// there, every weakened call is a line of the trace, and a mutant run gives
// the same digest twice.
func TestMutantsWeakenTheirCall(t *testing.T) {
	for _, tc := range []struct {
		mutant      string
		guest       string
		strict      bool
		args        []string
		plain, with string // what d#2 finds without and with the mutant
		note        string // a line of the trace
	}{
		{"fsync", "durable", false, nil,
			`found [a/synced="x" b/synced="y" c/synced="z" synced="s" unsynced=""]`,
			`found [a/synced="" b/synced="" c/synced="" synced="" unsynced=""]`,
			"d#1 - mutant fsync: fsync of synced at disk op #2 made a no-op"},
		{"dirsync", "durable", true, nil,
			`found [a/synced="x" synced="s" unsynced=""]`,
			`found []`,
			"d#1 - mutant dirsync: fsync of directory a at disk op #"},
		{"osync", "fsops", false, []string{"-durability"},
			`found [osync="onetwo" plain=""]`,
			`found [osync="" plain=""]`,
			"d#1 - mutant osync: O_SYNC write of osync at disk op #2 not made durable"},
		{"fdatasync", "weakdisk", false, nil,
			`found [current="v2" ds="d"]`,
			`found [current="v2" ds=""]`,
			"d#1 - mutant fdatasync: fdatasync of ds at disk op #5 made a no-op"},
	} {
		t.Run(tc.mutant, func(t *testing.T) {
			p := prepare(t, mutantWorld(tc.guest, tc.strict, tc.args...))
			m, err := ParseMutant(tc.mutant)
			if err != nil {
				t.Fatal(err)
			}
			plain := runMutant(t, p, 1, Mutant{})
			if out := output(plain, "d"); !strings.Contains(out, "d#2 | "+tc.plain) {
				t.Fatalf("without a mutant want d#2 to find %s:\n%s", tc.plain, out)
			}
			if plain.Weakened != 0 || m.Reached(plain.Reach) == 0 {
				t.Fatalf("without a mutant: weakened %d, reach %+v; want 0 and some reach for %s", plain.Weakened, plain.Reach, m)
			}
			r := runMutant(t, p, 1, m)
			out := output(r, "")
			if !strings.Contains(out, "d#2 | "+tc.with) {
				t.Fatalf("with mutant %s want d#2 to find %s:\n%s", m, tc.with, out)
			}
			if !strings.Contains(out, tc.note) || !strings.Contains(out, "world - mutant "+tc.mutant+": ") {
				t.Fatalf("with mutant %s want the trace to say so (%q):\n%s", m, tc.note, out)
			}
			if r.Weakened == 0 || r.Weakened > m.Reached(r.Reach) || r.Mutant != m {
				t.Fatalf("mutant %s weakened %d calls of %d it could reach", r.Mutant, r.Weakened, m.Reached(r.Reach))
			}
		})
	}
}

// The rename mutant keeps a rename still pending at the crash in half, both
// names or neither, as the mutant stream draws for each seed; the trace
// says which, and without the mutant the crash undoes the rename.
func TestMutantTearsPendingRenames(t *testing.T) {
	p := prepare(t, mutantWorld("weakdisk", true))
	if out := output(runMutant(t, p, 1, Mutant{}), "d"); !strings.Contains(out, `d#2 | found [current.tmp="v2" current="v1" ds="d"]`) {
		t.Fatalf("without a mutant want the rename undone:\n%s", out)
	}
	want := map[string]string{
		"both names":   `found [current.tmp="v2" current="v2" ds="d"]`,
		"neither name": `found [ds="d"]`,
	}
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		r := runMutant(t, p, seed, Mutant{Kind: MutantRename})
		out := output(r, "d")
		found := false
		for tear, state := range want {
			note := "d#1 - mutant rename: the crash keeps the rename of current.tmp to current in half: " + tear
			if strings.Contains(out, note) {
				found, seen[tear] = true, true
				if !strings.Contains(out, "d#2 | "+state) {
					t.Fatalf("seed %d: after %q want d#2 to find %s:\n%s", seed, tear, state, out)
				}
			}
		}
		if !found || r.Weakened != 1 {
			t.Fatalf("seed %d: want one torn rename in the trace (weakened %d):\n%s", seed, r.Weakened, out)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("seeds 1-6 tore the rename only as %v: the draw does not vary with the seed", seen)
	}
}

// A partial mutant weakens some of the calls it reaches, as its stream
// draws, and the same ones every time.
func TestPartialMutantDrawsPerCall(t *testing.T) {
	p := prepare(t, mutantWorld("durable", false))
	m, err := ParseMutant("fsync/2")
	if err != nil {
		t.Fatal(err)
	}
	var weakened, reach uint64
	for seed := uint64(1); seed <= 6; seed++ {
		r := runMutant(t, p, seed, m)
		weakened += r.Weakened
		reach += m.Reached(r.Reach)
	}
	if weakened == 0 || weakened >= reach {
		t.Fatalf("fsync/2 weakened %d of %d fsyncs over 6 seeds: want some, not all", weakened, reach)
	}
}

func TestParseMutant(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"fsync", "fsync", ""},
		{"rename/3", "rename/3", ""},
		{"fsnyc", "", `"fsnyc" is not a mutant (did you mean "fsync"?); the mutants are fsync, fdatasync, dirsync, osync, rename`},
		{"dirsync/1", "", `"dirsync/1": after the / give K, a whole number from 2 to 1000000`},
		{"osync/x", "", `"osync/x": after the / give K`},
	} {
		m, err := ParseMutant(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseMutant(%q) = %v, %v; want error %q", tc.in, m, err, tc.err)
		case tc.err == "" && (err != nil || m.String() != tc.want):
			t.Errorf("ParseMutant(%q) = %v, %v; want %s", tc.in, m, err, tc.want)
		}
	}
}
