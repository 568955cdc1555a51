package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/results/resultstest"
)

// Triage against a baseline marks each finding new, ongoing, resolved or
// regressed: a sweep that fixes alpha and brings gamma, then one that
// brings alpha back (regressed, since the first triage recorded it
// resolved) and a new delta. Only new and regressed findings fail.
func TestTriageStates(t *testing.T) {
	dir := t.TempDir()
	var (
		alpha = func(n int) string {
			return fmt.Sprintf(`property|client|property "alpha" failed in client#1: details {"x":%d}`, n)
		}
		beta  = func(n int) string { return fmt.Sprintf("workload|client|client#1 exited with status %d", n) }
		gamma = "liveness|server|server#2 did not answer for 5s"
		delta = "memory|server|server#1 ran out of memory: 512 MiB"
	)
	resultstest.Dir(t, filepath.Join(dir, "b0"), nil, alpha(3), beta(1), "", alpha(-7))
	resultstest.Dir(t, filepath.Join(dir, "r1"), nil, beta(2), gamma, "", "")
	resultstest.Dir(t, filepath.Join(dir, "r2"), nil, alpha(1), beta(1), delta, "")
	resultstest.Dir(t, filepath.Join(dir, "r3"), nil, "", beta(1), "", "")

	merge := func(code int, args ...string) (string, *results.Triage) {
		t.Helper()
		var out, errOut bytes.Buffer
		if got := Main(append([]string{"merge"}, args...), &out, &errOut); got != code {
			t.Fatalf("merge %s: exit status %d, want %d\n%s%s", strings.Join(args, " "), got, code, out.String(), errOut.String())
		}
		var j bytes.Buffer
		Main(append([]string{"merge", "-json"}, args...), &j, &errOut)
		var tri *results.Triage
		for _, l := range strings.Split(j.String(), "\n") {
			if strings.HasPrefix(l, `{"triage":`) {
				var v struct{ Triage *results.Triage }
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					t.Fatal(err)
				}
				tri = v.Triage
			}
		}
		if tri == nil {
			t.Fatalf("merge -json %s printed no triage:\n%s", strings.Join(args, " "), j.String())
		}
		return out.String(), tri
	}
	states := func(tri *results.Triage) string {
		var s []string
		for _, f := range tri.Findings {
			s = append(s, f.State+" "+f.Class+" "+f.Program)
		}
		return strings.Join(s, ", ")
	}

	out, tri := merge(1, filepath.Join(dir, "r1"), "-baseline", filepath.Join(dir, "b0"), "-out", filepath.Join(dir, "m1"))
	if got, want := states(tri), "new liveness server, ongoing workload client, resolved property client"; got != want {
		t.Errorf("r1 against b0: %s, want %s", got, want)
	}
	if f := tri.Findings[1]; f.Seeds != 1 || f.BaselineSeeds != 1 || f.Shape != "client#<n> exited with status <n>" {
		t.Errorf("the ongoing finding: %+v", f)
	}
	if f := tri.Findings[2]; f.BaselineSeeds != 2 || f.Seeds != 0 {
		t.Errorf("the resolved finding: %+v (alpha failed seeds 1 and 4 of the baseline)", f)
	}
	for _, re := range []string{
		`(?m)^triage against .*b0: 1 new, 1 ongoing, 1 resolved, 0 regressed$`,
		`(?m)^  NEW +liveness +server +server#<n> did not answer for <dur> +1 seed, first seed 2$`,
		`(?m)^  ONGOING +workload +client +client#<n> exited with status <n> +1 seed, first seed 1, 1 in the baseline$`,
		`(?m)^  RESOLVED +property +client +property "alpha" failed in client#<n>: details \{"x":<n>\} +none now, 2 in the baseline$`,
		`(?m)^a new or regressed finding fails the sweep \(exit status 1\); ongoing ones do not$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the triage table has no line %s:\n%s", re, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m1", results.TriageFile)); err != nil {
		t.Fatalf("merge -out kept no triage: %v", err)
	}

	_, tri = merge(1, filepath.Join(dir, "r2"), "-baseline", filepath.Join(dir, "m1"))
	if got, want := states(tri), "new memory server, regressed property client, ongoing workload client, resolved liveness server"; got != want {
		t.Errorf("r2 against m1: %s, want %s", got, want)
	}
	if tri.New != 1 || tri.Regressed != 1 || tri.Ongoing != 1 || tri.Resolved != 1 {
		t.Errorf("counts %+v", tri)
	}

	// Only ongoing and resolved findings: exit status 0, though a seed failed.
	_, tri = merge(0, filepath.Join(dir, "r3"), "-baseline", filepath.Join(dir, "m1"))
	if got, want := states(tri), "ongoing workload client, resolved liveness server, resolved property client"; got != want {
		t.Errorf("r3 against m1: %s, want %s", got, want)
	}
}
