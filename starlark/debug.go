package starlark

import (
	"fmt"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	sl "go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// debug(r, at) runs r's seed and schedule to the virtual time at and shows
// the world then, as seedfall debug does: each program's state and
// incarnation, its connections, the writes a crash would lose, and the
// faults in force. Looking at one run again and again forks from a
// recording of it (engine.Recordings).
func (e *Env) debugFn(t *sl.Thread, b *sl.Builtin, args sl.Tuple, kwargs []sl.Tuple) (sl.Value, error) {
	var r *Run
	var at durationArg
	if err := sl.UnpackArgs(b.Name(), args, kwargs, "r", &r, "at", &at); err != nil {
		return nil, err
	}
	if at <= 0 {
		return nil, fmt.Errorf("debug: at is %v; say a virtual time above 0, such as \"1.5s\" (r.sim_time is when the run ended)", time.Duration(at))
	}
	ctx := e.Context()
	p, err := e.Prepare(ctx, r.World)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("debug: %w", ErrInterrupted)
		}
		return nil, fmt.Errorf("debug: %w", err)
	}
	sch := r.Schedule().Changed()
	sch.Seed = r.Seed
	opt := engine.RunOptions{Seed: r.Seed, Schedule: sch, StopAt: time.Duration(at), State: true}
	if !e.o.NoForks {
		opt.From = e.forks.Look(ctx, p, r.Seed, sch, opt.StopAt)
	}
	res, err := p.Run(ctx, opt)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("debug: %w", ErrInterrupted)
	}
	if err != nil {
		return nil, fmt.Errorf("debug: %w", err)
	}
	if !e.o.NoForks {
		e.forks.Ran(p, r.Seed, sch, res)
	}
	return &Debug{res: res, run: r, at: opt.StopAt}, nil
}

// Debug is the world at one moment of a run.
type Debug struct {
	res *engine.Result
	run *Run
	at  time.Duration
}

var _ sl.HasAttrs = (*Debug)(nil)

// ended reports whether the run ended before the moment asked.
func (d *Debug) ended() bool { return !d.res.Stopped }

// String is what seedfall debug prints.
func (d *Debug) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "debug seed %d at %v", d.run.Seed, d.at)
	if d.ended() {
		verdict := "passed"
		if !d.res.Passed {
			verdict = fmt.Sprintf("failed, %s: %s", d.res.Class, d.res.Reason)
		}
		fmt.Fprintf(&b, "\nthe run ended at %v, before it: %s", time.Duration(d.res.SimNs), verdict)
	}
	b.WriteString("\n")
	d.res.State.Write(&b, d.res.Schedule)
	return strings.TrimRight(b.String(), "\n")
}
func (d *Debug) Type() string          { return "debug" }
func (d *Debug) Freeze()               {}
func (d *Debug) Truth() sl.Bool        { return sl.True }
func (d *Debug) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: debug") }

func (d *Debug) AttrNames() []string {
	return []string{"at", "clogs", "ended", "faults", "partition", "programs", "run"}
}

func (d *Debug) Attr(name string) (sl.Value, error) {
	st := d.res.State
	switch name {
	case "at":
		return Duration(st.At), nil
	case "ended":
		return sl.Bool(d.ended()), nil
	case "run":
		return d.run, nil
	case "clogs":
		return stringList(st.Clogs), nil
	case "partition":
		l := make([]sl.Value, len(st.Partition))
		for i, side := range st.Partition {
			l[i] = stringList(side)
		}
		return frozenList(l), nil
	case "faults":
		return faultList(d.res.Schedule.Faults), nil
	case "programs":
		l := make([]sl.Value, len(st.Programs))
		for i, p := range st.Programs {
			conns := make([]sl.Value, len(p.Conns))
			for j, c := range p.Conns {
				conns[j] = starlarkstruct.FromStringDict(starlarkstruct.Default, sl.StringDict{
					"local":     sl.String(c.Local.String()),
					"remote":    sl.String(c.Remote.String()),
					"peer":      sl.String(c.Peer),
					"state":     sl.String(c.State),
					"unread":    sl.MakeInt(c.Unread),
					"listening": sl.Bool(c.Listening),
				})
			}
			pending := make([]sl.Value, len(p.Pending))
			for j, f := range p.Pending {
				pending[j] = starlarkstruct.FromStringDict(starlarkstruct.Default, sl.StringDict{
					"path":         sl.String(f.Path),
					"dir":          sl.Bool(f.Dir),
					"size":         sl.MakeInt64(f.Size),
					"durable_size": sl.MakeInt64(f.DurableSize),
					"ops":          sl.MakeInt(f.Ops),
				})
			}
			l[i] = starlarkstruct.FromStringDict(starlarkstruct.Default, sl.StringDict{
				"name":        sl.String(p.Name),
				"role":        sl.String(p.Role),
				"inc":         sl.MakeInt(p.Inc),
				"what":        sl.String(p.What),
				"slow":        sl.Float(p.Slow),
				"wall_offset": Duration(p.WallOffset),
				"conns":       frozenList(conns),
				"pending":     frozenList(pending),
			})
		}
		return frozenList(l), nil
	}
	return nil, nil
}
