package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/world"
)

// A printed command gives the world as the user did, quoted for a shell.
func TestCommandArgs(t *testing.T) {
	got := CommandArgs("my world.json", "chaos", []string{"faults.crash_per_sec=0.5", "name=a b"})
	want := `-c 'my world.json' -profile chaos -set faults.crash_per_sec=0.5 -set 'name=a b'`
	if got != want {
		t.Errorf("CommandArgs = %s, want %s", got, want)
	}
}

// A sweep's output prints the failures in detail, then the summary with
// the failing seeds, and fails; a sweep that passes does not.
func TestSweepOutput(t *testing.T) {
	var out, errOut bytes.Buffer
	o := NewSweepOutput(&out, &errOut, false, 3, false, nil, results.WorldIdentity{Name: "w"}, "")
	for seed := uint64(1); seed <= 3; seed++ {
		res := &engine.Result{Seed: seed, Passed: seed != 2, Reason: "ok", SimNs: int64(time.Second), Steps: 10, Schedule: &faults.Schedule{Seed: seed}}
		if !res.Passed {
			res.Class, res.Reason = "crash", "the server exited"
		}
		rec := results.NewRecord(res, "", "")
		rec.Replay = "seedfall replay -c w.json -seed 2"
		o.Add(rec)
	}
	err := o.End(time.Second, false, 3, 3)
	if !errors.Is(err, ErrFailed) {
		t.Errorf("End = %v, want ErrFailed", err)
	}
	text := out.String()
	for _, want := range []string{
		"FAIL seed 2 at t=1s (10 scheduler steps, 0s real)\n  crash: the server exited\n  replay: seedfall replay -c w.json -seed 2\n",
		"3 seeds: 2 passed, 1 failed (seeds 2) in 1s (3 seeds/s)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "PASS") {
		t.Errorf("a sweep of many seeds printed a passing one:\n%s", text)
	}
}

// Editing a schedule needs no engine: it lists, edits, checks and writes
// the file, and prints the command that replays the seed with it.
func TestEditFaults(t *testing.T) {
	w, err := world.Load(filepath.Join("..", "..", "examples", "kvlog", "seedfall.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	from := filepath.Join(dir, "in.faults.json")
	sch := &faults.Schedule{Seed: 7, Faults: []faults.Fault{
		{At: time.Second, Kind: "pause", Node: "server", Until: 1500 * time.Millisecond},
		{At: 2 * time.Second, Kind: "pause", Node: "server", Until: 2500 * time.Millisecond},
	}}
	if err := sch.Save(from); err != nil {
		t.Fatal(err)
	}
	to := filepath.Join(dir, "out.faults.json")
	var notes bytes.Buffer
	r, err := EditFaults(context.Background(), w, Options{Config: "w.json", Args: "-c w.json", Notes: &notes},
		FaultsOptions{Seed: 7, File: from, Out: to, Edits: faults.Edits{Remove: []int{1}}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := r.Write(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if !strings.HasPrefix(lines[0], "seed 7, 1 fault from ") || !strings.HasSuffix(lines[0], ", wrote "+DisplayPath(to)) {
		t.Errorf("header: %s", lines[0])
	}
	if want := "replay: seedfall replay -c w.json -seed 7 -faults " + ShellQuote(DisplayPath(to)); !strings.Contains(text.String(), want+"\n") {
		t.Errorf("output lacks %q:\n%s", want, text.String())
	}
	rep, err := r.Report()
	if err != nil {
		t.Fatal(err)
	}
	if rep.File != DisplayPath(to) || len(rep.Faults) != 1 || !strings.Contains(rep.Faults[0], "2s") {
		b, _ := json.Marshal(rep)
		t.Errorf("report: %s", b)
	}
	if _, err := os.Stat(to); err != nil {
		t.Errorf("not written: %v", err)
	}
}

// cause says in words when a moment's forks disagree, and what an
// interval with no fault and no event means.
func TestCauseSaysWhenForksDisagree(t *testing.T) {
	s := &Session{w: &world.World{}}
	res := &cause.Result{
		Failure: &engine.Result{Seed: 3, SimNs: int64(2 * time.Second), Class: engine.ClassWorkload, Reason: "client#1 exited with status 1"},
		Moments: []cause.Moment{
			{At: 10 * time.Millisecond, Runs: 7, Failed: 6, Verdict: cause.Passes},
			{At: 20 * time.Millisecond, Runs: 8, Failed: 8, Verdict: cause.Fails},
		},
		After: 10 * time.Millisecond, Inevitable: 20 * time.Millisecond, Need: 8, Runs: 15,
	}
	var b bytes.Buffer
	(&Cause{Result: res, s: s, seed: 3, opt: cause.Options{Branches: 8}}).Write(&b)
	out := b.String()
	for _, want := range []string{
		"6/7 still fail  (forks disagree: fewer than the 8 of 8 that make a moment inevitable fail, so it counts as avoidable)",
		"forks of 1 moment disagree: from there the failure depends on what the random streams draw",
		"nothing in that interval is in the trace (no fault, no output)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("cause's table lacks %q:\n%s", want, out)
		}
	}
}

// An isolation failure's verdict explains the anomaly its reason names, in
// a few lines: a long explanation, or a long line, is cut short.
func TestVerdictExplainsAnIsolationFailure(t *testing.T) {
	long := make([]string, 20)
	for i := range long {
		long[i] = "T" + strings.Repeat("x", 400)
	}
	res := &engine.Result{Seed: 3, Class: engine.ClassIsolation, Reason: "the transactions are not serializable: G2-item (1 found); G2-item: T1 rw→ T2 rw→ T1",
		SimNs: int64(time.Second), Steps: 10, Schedule: &faults.Schedule{Seed: 3},
		History: &engine.HistorySummary{Txns: 4, Isolation: "not valid", AnomalyTypes: []string{"G2-item"}, Anomalies: []engine.TxnAnomaly{
			{Type: "G2-item", Workload: "list-append", Summary: "T1 rw→ T2 rw→ T1", Explanation: []string{"T1 = c#1: r 1 []", "T2 = c#2: r 2 []"}},
			{Type: "G0", Workload: "rw-register", Summary: "long", Explanation: long},
		}}}
	var b bytes.Buffer
	WriteResult(&b, res, "seedfall replay -seed 3", "")
	want := "FAIL seed 3 at t=1s (10 scheduler steps, 0s real)\n" +
		"  isolation: the transactions are not serializable: G2-item (1 found); G2-item: T1 rw→ T2 rw→ T1\n" +
		"    T1 = c#1: r 1 []\n    T2 = c#2: r 2 []\n" +
		"  replay: seedfall replay -seed 3\n"
	if b.String() != want {
		t.Errorf("verdict\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeExplanation(&b, long)
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != explanationLines+1 || lines[explanationLines] != "    ... 8 more lines (run -json has them all, in history.anomalies)" ||
		!strings.HasSuffix(lines[0], "x ...") || len(lines[0]) != 4+explanationWidth+4 {
		t.Errorf("a long explanation:\n%s", b.String())
	}
}
