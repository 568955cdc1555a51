package starlark

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/shrink"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

// Run is one run of a world as a Starlark value: its seed, verdict,
// schedule and trace.
type Run struct {
	World  *World
	Seed   uint64
	Given  *faults.Schedule // applied exactly; nil: the seed drew its own faults
	Result *engine.Result

	env      *Env
	linesMu  sync.Mutex
	replayed bool // a loaded run's trace was got back by replaying it
}

var _ sl.HasAttrs = (*Run)(nil)

func (r *Run) String() string {
	res := r.Result
	if res.Passed {
		return fmt.Sprintf("<run seed %d: PASS at %v>", r.Seed, time.Duration(res.SimNs))
	}
	return fmt.Sprintf("<run seed %d: FAIL at %v, %s: %s>", r.Seed, time.Duration(res.SimNs), res.Class, firstLine(res.Reason))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func (r *Run) Type() string          { return "run" }
func (r *Run) Freeze()               {}
func (r *Run) Truth() sl.Bool        { return sl.True }
func (r *Run) Hash() (uint32, error) { return sl.String(r.Result.Digest).Hash() }

func (r *Run) AttrNames() []string {
	return []string{"class_", "coverage", "digest", "faults", "features", "logs", "node", "ok", "rare_moments", "reason", "save", "schedule", "seed", "sim_time", "steps", "world"}
}

func (r *Run) Attr(name string) (sl.Value, error) {
	res := r.Result
	switch name {
	case "ok":
		return sl.Bool(res.Passed), nil
	case "seed":
		return sl.MakeUint64(r.Seed), nil
	case "class", "class_": // Starlark reserves the word: r.class_
		return sl.String(res.Class), nil
	case "reason":
		return sl.String(res.Reason), nil
	case "node":
		return sl.String(res.Node), nil
	case "digest":
		return sl.String(res.Digest), nil
	case "sim_time":
		return Duration(res.SimNs), nil
	case "steps":
		return sl.MakeUint64(res.Steps), nil
	case "schedule":
		return r.schedule(), nil
	case "faults":
		return r.schedule().Attr("faults")
	case "world":
		return r.World, nil
	case "logs":
		return sl.NewBuiltin("logs", r.logs), nil
	case "save":
		return sl.NewBuiltin("save", r.save), nil
	case "coverage":
		return r.coverageValue(), nil
	case "features":
		return r.features(), nil
	case "rare_moments":
		return sl.NewBuiltin("rare_moments", r.rareMoments), nil
	}
	return nil, nil
}

// Schedule is the faults the run applied, which replay applies exactly.
func (r *Run) Schedule() *faults.Schedule {
	s := *r.Result.Schedule
	if r.Given != nil {
		s.ShrunkFrom, s.ShrinkRuns = r.Given.ShrunkFrom, r.Given.ShrinkRuns
	}
	return &s
}

func (r *Run) schedule() *Schedule { return NewSchedule(r.Schedule(), r.World.w) }

// logs(node=None) is the run's trace as text, of one program or all.
func (r *Run) logs(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var node string
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "node?", &node); err != nil {
		return nil, err
	}
	if node != "" && r.World.w.Program(node) == nil {
		var names []string
		for _, p := range r.World.w.Programs() {
			names = append(names, p.Name)
		}
		hint := ""
		if s := world.Suggest(node, names); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("logs: no program %q in the world%s; it has %s", node, hint, strings.Join(names, ", "))
	}
	lines, err := r.lines()
	if err != nil {
		return nil, fmt.Errorf("logs: %v", err)
	}
	return sl.String(trace.Render(lines, node)), nil
}

// lines returns the trace; a run read by load_run has none saved, so it is
// replayed once, and must give the saved digest.
func (r *Run) lines() ([]trace.Line, error) {
	r.linesMu.Lock()
	defer r.linesMu.Unlock()
	if r.Result.Lines != nil || r.replayed {
		return r.Result.Lines, nil
	}
	again, err := r.env.RunValue(r.env.Context(), r.World, r.Seed, r.Schedule())
	if err != nil {
		return nil, err
	}
	if again.Result.Digest != r.Result.Digest {
		return nil, fmt.Errorf("replaying seed %d gives digest %.12s, not the saved %.12s: the programs changed since the run was saved", r.Seed, again.Result.Digest, r.Result.Digest)
	}
	r.Result.Lines, r.replayed = again.Result.Lines, true
	return r.Result.Lines, nil
}

// savedRun is the file r.save writes.
type savedRun struct {
	Seed     uint64          `json:"seed"`
	Digest   string          `json:"digest"`
	Verdict  savedVerdict    `json:"verdict"`
	World    json.RawMessage `json:"world"`
	Schedule json.RawMessage `json:"schedule"`
}

type savedVerdict struct {
	Passed  bool   `json:"passed"`
	Class   string `json:"class,omitempty"`
	Reason  string `json:"reason"`
	Node    string `json:"node,omitempty"`
	SimTime string `json:"sim_time"`
	Steps   uint64 `json:"steps"`
}

// save(path) writes the run: world (absolute paths), seed, schedule,
// verdict and digest; load_run reads it back.
func (r *Run) save(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &path); err != nil {
		return nil, err
	}
	data, err := r.MarshalFile()
	if err != nil {
		return nil, fmt.Errorf("save: %v", err)
	}
	abs := r.env.resolve(t, path)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("save: %v", err)
	}
	if err := fsutil.WriteFile(abs, data, 0o644); err != nil {
		return nil, fmt.Errorf("save: cannot write %s: %v", path, unwrapPath(err))
	}
	return sl.None, nil
}

// MarshalFile is the run's file, as save writes it.
func (r *Run) MarshalFile() ([]byte, error) {
	wj, err := r.World.w.Resolved(true)
	if err != nil {
		return nil, err
	}
	sj, err := r.Schedule().MarshalJSON()
	if err != nil {
		return nil, err
	}
	res := r.Result
	out, err := json.MarshalIndent(savedRun{Seed: r.Seed, Digest: res.Digest,
		Verdict: savedVerdict{Passed: res.Passed, Class: res.Class, Reason: res.Reason, Node: res.Node,
			SimTime: time.Duration(res.SimNs).String(), Steps: res.Steps},
		World: wj, Schedule: sj}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// load_run(path) reads a run saved by r.save. Its logs() replay it.
func (e *Env) loadRunFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var path string
	if err := sl.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &path); err != nil {
		return nil, err
	}
	abs := e.resolve(t, path)
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("load_run: cannot read %s: %v", path, unwrapPath(err))
	}
	var sr savedRun
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&sr); err != nil {
		return nil, fmt.Errorf("load_run: %s is not a saved run (%v)", path, err)
	}
	if len(sr.World) == 0 || len(sr.Schedule) == 0 {
		return nil, fmt.Errorf("load_run: %s is not a saved run: it has no world or no schedule", path)
	}
	w, err := world.Parse(sr.World, path, filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("load_run: %w", err)
	}
	spec, err := fromJSON(sr.World)
	if err != nil {
		return nil, fmt.Errorf("load_run: %v", err)
	}
	wv, err := wrapWorld(thaw(spec.(*sl.Dict)), w, path, 0)
	if err != nil {
		return nil, fmt.Errorf("load_run: %v", err)
	}
	var sch faults.Schedule
	if err := json.Unmarshal(sr.Schedule, &sch); err != nil {
		return nil, fmt.Errorf("load_run: %s: schedule: %v", path, err)
	}
	simNs, err := time.ParseDuration(sr.Verdict.SimTime)
	if err != nil {
		return nil, fmt.Errorf("load_run: %s: verdict.sim_time %q is not a duration", path, sr.Verdict.SimTime)
	}
	v := sr.Verdict
	res := &engine.Result{Seed: sr.Seed, Passed: v.Passed, Class: v.Class, Reason: v.Reason, Node: v.Node,
		SimNs: int64(simNs), Steps: v.Steps, Digest: sr.Digest, Schedule: &sch}
	return &Run{World: wv, Seed: sr.Seed, Given: &sch, Result: res, env: e}, nil
}

// runFn is run(w, seed=1, schedule=None).
func (e *Env) runFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var w *World
	var seed sl.Value = sl.None
	var schV sl.Value = sl.None
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "w", &w, "seed?", &seed, "schedule?", &schV); err != nil {
		return nil, err
	}
	var sch *faults.Schedule
	if schV != sl.None {
		s, err := toSchedule(schV)
		if err != nil {
			return nil, fmt.Errorf("run: schedule: %v", err)
		}
		sch = s
	}
	n := uint64(1)
	if sch != nil {
		n = sch.Seed
	}
	if seed != sl.None {
		var err error
		if n, err = seedOf(seed); err != nil {
			return nil, fmt.Errorf("run: %v", err)
		}
	}
	return e.runAt(t, "run", w, n, sch)
}

func seedOf(v sl.Value) (uint64, error) {
	i, ok := v.(sl.Int)
	if !ok {
		return 0, fmt.Errorf("seed is a %s; seeds are ints from 0", v.Type())
	}
	n, ok := i.Uint64()
	if !ok {
		return 0, fmt.Errorf("seed %v is not an int from 0 to 2^64-1", i)
	}
	return n, nil
}

// runAt runs and names the calling builtin and the script's place in errors.
func (e *Env) runAt(t *sl.Thread, fn string, w *World, seed uint64, sch *faults.Schedule) (*Run, error) {
	e.progress("%s seed %d", fn, seed)
	r, err := e.RunValue(e.Context(), w, seed, sch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return r, nil
}

// ErrInterrupted is what a run stopped by Cancel returns.
var ErrInterrupted = errors.New("interrupted")

// RunValue runs a world value with a seed and, when sch is not nil, that
// schedule exactly (checked against the world first). Runs of the same
// world share one build. It is safe to call from many goroutines.
func (e *Env) RunValue(ctx context.Context, w *World, seed uint64, sch *faults.Schedule) (*Run, error) {
	return e.runValue(ctx, w, seed, sch, !e.o.NoForks)
}

// runValue is RunValue; with forks, a run may fork from the Env's
// recordings (engine.Recordings).
func (e *Env) runValue(ctx context.Context, w *World, seed uint64, sch *faults.Schedule, forks bool) (*Run, error) {
	if sch != nil {
		if err := checkAgainst(sch, w.w); err != nil {
			return nil, err
		}
		c := *sch
		c.Seed = seed
		sch = &c
	}
	p, err := e.Prepare(ctx, w)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrInterrupted
		}
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	opt := engine.RunOptions{Seed: seed, Schedule: sch}
	if sch != nil && forks {
		opt.From = e.forks.Branch(ctx, p, seed, sch)
	}
	res, err := p.Run(ctx, opt)
	if ctx.Err() != nil {
		// Whatever the run says, it may have been cut short.
		return nil, ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	if forks {
		e.forks.Ran(p, seed, res.Schedule, res)
	}
	return &Run{World: w, Seed: seed, Given: sch, Result: res, env: e}, nil
}

// RunWorld runs a parsed world: RunValue for callers that hold a
// *world.World (explore).
func (e *Env) RunWorld(ctx context.Context, w *world.World, seed uint64, sch *faults.Schedule) (*Run, error) {
	wv, err := WorldValue(w)
	if err != nil {
		return nil, err
	}
	return e.RunValue(ctx, wv, seed, sch)
}

// WorldValue makes the Starlark value of a parsed world.
func WorldValue(w *world.World) (*World, error) {
	j, err := w.Resolved(true)
	if err != nil {
		return nil, err
	}
	spec, err := fromJSON(j)
	if err != nil {
		return nil, err
	}
	return wrapWorld(thaw(spec.(*sl.Dict)), w, w.File, 0)
}

// replay(r, schedule=None) runs r's world and seed again with r's schedule
// (or the one given): the same digest, unless the schedule changed.
func (e *Env) replayFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var r *Run
	var schV sl.Value = sl.None
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "r", &r, "schedule?", &schV); err != nil {
		return nil, err
	}
	sch := r.Schedule()
	if schV != sl.None {
		s, err := toSchedule(schV)
		if err != nil {
			return nil, fmt.Errorf("replay: schedule: %v", err)
		}
		sch = s
	}
	return e.runAt(t, "replay", r.World, r.Seed, sch)
}

// branch(r, stream=None, at="1s", key=1) replays r with one more branch:
// from the first step at or after at, the stream (or every stream) draws
// from a seed re-keyed with key.
func (e *Env) branchFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var r *Run
	var stream string
	var streamV sl.Value = sl.None
	at := durationArg(time.Second)
	key := 1
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "r", &r, "stream?", &streamV, "at?", &at, "key?", &key); err != nil {
		return nil, err
	}
	if streamV != sl.None {
		s, ok := sl.AsString(streamV)
		if !ok {
			return nil, fmt.Errorf("branch: stream is a %s; name one of %s, or None for all", streamV.Type(), strings.Join(faults.BranchStreams, ", "))
		}
		stream = s
	}
	if stream != "" && !slices.Contains(faults.BranchStreams, stream) {
		hint := ""
		if s := world.Suggest(stream, faults.BranchStreams); s != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, fmt.Errorf("branch: %q is not a stream%s; name one of %s, or None for all", stream, hint, strings.Join(faults.BranchStreams, ", "))
	}
	if key < 0 {
		return nil, fmt.Errorf("branch: key %d is negative; keys are ints from 0", key)
	}
	sch := r.Schedule()
	if at < 0 {
		return nil, fmt.Errorf("branch: at %v is negative", time.Duration(at))
	}
	if n := len(sch.Branches); n > 0 && time.Duration(at) < sch.Branches[n-1].At {
		return nil, fmt.Errorf("branch: at %v is before the run's last branch at %v: branches must not go back in time", time.Duration(at), sch.Branches[n-1].At)
	}
	if end := sch.Duration; end > 0 && time.Duration(at) > end {
		return nil, fmt.Errorf("branch: at %v is after the end of the run at %v", time.Duration(at), end)
	}
	sch = sch.Changed()
	sch.Branches = append(sch.Branches, faults.Branch{At: time.Duration(at), Key: uint64(key), Stream: stream})
	return e.runAt(t, "branch", r.World, r.Seed, sch)
}

// shrink(r, budget="1m", parallel=None) cuts a failing run's schedule down
// to the faults that matter and returns the run of the shrunk schedule.
func (e *Env) shrinkFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var r *Run
	budget := durationArg(time.Minute)
	parallel := e.o.Parallel
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "r", &r, "budget?", &budget, "parallel?", &parallel); err != nil {
		return nil, err
	}
	if r.Result.Passed {
		return nil, fmt.Errorf("shrink: seed %d passed: there is nothing to shrink (shrink a run whose .ok is False)", r.Seed)
	}
	ctx := e.Context()
	p, err := e.Prepare(ctx, r.World)
	if err != nil {
		return nil, fmt.Errorf("shrink: %w", err)
	}
	opt := shrink.Options{Budget: time.Duration(budget), Parallel: parallel}
	if e.o.Progress != nil {
		opt.Progress = func(p shrink.Progress) {
			e.progress("shrink seed %d: %s, %s so far, %s left", r.Seed, p.Step, plural(p.Runs, "run"), plural(p.Faults, "fault"))
		}
	}
	res, err := shrink.Shrink(ctx, p, r.Seed, r.Schedule(), opt)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("shrink: %w", ErrInterrupted)
		}
		return nil, fmt.Errorf("shrink: %w", err)
	}
	if res.Run == nil {
		return nil, fmt.Errorf("shrink: seed %d passed when run again with its own schedule, so there is nothing to shrink", r.Seed)
	}
	return &Run{World: r.World, Seed: r.Seed, Given: res.Schedule, Result: res.Run, env: e}, nil
}
