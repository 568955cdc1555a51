package starlark

import (
	"fmt"
	"strings"

	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/faults"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// cause(r, moments=16, branches=8, parallel=None, all=False,
// checkpoints=False) finds when a failing run's failure became
// inevitable, as seedfall cause does: the interval, the faults and events
// in it, and the moments its forks tried.
func (e *Env) causeFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var r *Run
	moments, branches := 16, 8
	parallel := e.o.Parallel
	var all, checkpoints bool
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "r", &r, "moments?", &moments, "branches?", &branches,
		"parallel?", &parallel, "all?", &all, "checkpoints?", &checkpoints); err != nil {
		return nil, err
	}
	switch {
	case r.Result.Passed:
		return nil, fmt.Errorf("cause: seed %d passed: there is no failure to explain (cause a run whose .ok is False)", r.Seed)
	case moments < 2:
		return nil, fmt.Errorf("cause: moments is %d; it must be at least 2", moments)
	case branches < 1:
		return nil, fmt.Errorf("cause: branches is %d; it must be at least 1", branches)
	case parallel < 1:
		return nil, fmt.Errorf("cause: parallel is %d; it must be at least 1", parallel)
	}
	ctx := e.Context()
	p, err := e.Prepare(ctx, r.World)
	if err != nil {
		return nil, fmt.Errorf("cause: %w", err)
	}
	opt := cause.Options{Moments: moments, Branches: branches, Parallel: parallel, Exhaustive: all, Checkpoints: checkpoints}
	if e.o.Progress != nil {
		opt.Progress = func(done, most int) {
			e.progress("cause seed %d: %s, at most %d", r.Seed, plural(done, "run"), most)
		}
	}
	res, err := cause.Find(ctx, p, r.Seed, r.Schedule(), opt)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("cause: %w", ErrInterrupted)
	}
	if err != nil {
		return nil, fmt.Errorf("cause: %w", err)
	}
	return &Cause{res: res, run: r}, nil
}

// Cause is what cause found about a run.
type Cause struct {
	res *cause.Result
	run *Run
}

var _ sl.HasAttrs = (*Cause)(nil)

func (c *Cause) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<cause seed %d: inevitable in (%v, %v]", c.run.Seed, c.res.After, c.res.Inevitable)
	if len(c.res.Faults) == 0 {
		b.WriteString(", no fault in it")
	}
	for i, f := range c.res.Faults {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep + strings.Join(strings.Fields(faults.Describe(f)), " "))
	}
	fmt.Fprintf(&b, "; %s>", plural(c.res.Runs, "run"))
	return b.String()
}
func (c *Cause) Type() string          { return "cause" }
func (c *Cause) Freeze()               {}
func (c *Cause) Truth() sl.Bool        { return sl.True }
func (c *Cause) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: cause") }

func (c *Cause) AttrNames() []string {
	return []string{"after", "events", "faults", "inevitable", "moments", "run", "runs"}
}

func (c *Cause) Attr(name string) (sl.Value, error) {
	res := c.res
	switch name {
	case "after":
		return Duration(res.After), nil
	case "inevitable":
		return Duration(res.Inevitable), nil
	case "faults":
		return faultList(res.Faults), nil
	case "events":
		l := make([]sl.Value, len(res.Events))
		for i, ev := range res.Events {
			l[i] = sl.String(strings.TrimSpace(ev.String()))
		}
		return frozenList(l), nil
	case "moments":
		l := make([]sl.Value, len(res.Moments))
		for i, m := range res.Moments {
			l[i] = starlarkstruct.FromStringDict(starlarkstruct.Default, sl.StringDict{
				"at":      Duration(m.At),
				"failed":  sl.MakeInt(m.Failed),
				"runs":    sl.MakeInt(m.Runs),
				"verdict": sl.String(m.Verdict.String()),
			})
		}
		return frozenList(l), nil
	case "run":
		return c.run, nil
	case "runs":
		return sl.MakeInt(res.Runs), nil
	}
	return nil, nil
}
