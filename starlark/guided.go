package starlark

import (
	"fmt"
	"time"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/guide"
)

// The primitives of guided search (issue 28; engine/guide): what a run
// reached and when (r.features, r.coverage), a set of what runs reached
// (seen()), and mutations of a run at a moment (ctx.mutate) that fork from
// a checkpoint of the run. stdlib's guided strategy is written with them.

func init() {
	registerBuiltin("seen", func(e *Env) sl.Value { return sl.NewBuiltin("seen", seenFn) })
}

// Feature is one thing a run reached (guide.Feature): f.kind ("block",
// "count", "property", "log", "faults"), f.what, f.at (a duration, or None
// when the run does not say), f.weight (how rare it is in its run: 1 over
// the times its block ran or its line's shape was printed).
type Feature struct{ f guide.Feature }

var _ sl.HasAttrs = Feature{}

func (f Feature) String() string        { return "<feature " + f.f.String() + ">" }
func (f Feature) Type() string          { return "feature" }
func (f Feature) Freeze()               {}
func (f Feature) Truth() sl.Bool        { return sl.True }
func (f Feature) Hash() (uint32, error) { return sl.String(f.f.Kind + f.f.What()).Hash() }
func (f Feature) AttrNames() []string   { return []string{"at", "kind", "weight", "what"} }
func (f Feature) Attr(name string) (sl.Value, error) {
	switch name {
	case "kind":
		return sl.String(f.f.Kind), nil
	case "what":
		return sl.String(f.f.What()), nil
	case "weight":
		return sl.Float(f.f.Weight), nil
	case "at":
		if f.f.At == guide.Unknown {
			return sl.None, nil
		}
		return Duration(f.f.At), nil
	}
	return nil, nil
}

func featureList(fs []guide.Feature) *sl.List {
	out := make([]sl.Value, len(fs))
	for i, f := range fs {
		out[i] = Feature{f}
	}
	return sl.NewList(out)
}

// Seen is a set of what runs reached: seen() makes an empty one; s.add(r)
// adds what r reached and returns the features that were new to s, in the
// order of their moments; s.runs(f) is how many of the runs added reached
// feature f; s.moments(r, most=16) are the moments of r worth forking at
// (Moment), the rarest first; len(s) counts the features, s.blocks the
// blocks of user code.
type Seen struct{ s *guide.Seen }

var _ sl.HasAttrs = (*Seen)(nil)

func seenFn(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 0); err != nil {
		return nil, err
	}
	return &Seen{guide.NewSeen()}, nil
}

func (s *Seen) String() string {
	return fmt.Sprintf("<seen: %s, %s>", countOf(s.s.Len(), "feature"), countOf(s.s.Blocks(), "block"))
}
func (s *Seen) Type() string          { return "seen" }
func (s *Seen) Freeze()               {}
func (s *Seen) Truth() sl.Bool        { return s.s.Len() > 0 }
func (s *Seen) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: seen") }
func (s *Seen) Len() int              { return s.s.Len() }
func (s *Seen) AttrNames() []string   { return []string{"add", "blocks", "moments", "runs"} }
func (s *Seen) Attr(name string) (sl.Value, error) {
	switch name {
	case "blocks":
		return sl.MakeInt(s.s.Blocks()), nil
	case "add":
		return sl.NewBuiltin("add", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var r *Run
			if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &r); err != nil {
				return nil, err
			}
			return featureList(s.s.Add(r.Result)), nil
		}), nil
	case "runs":
		return sl.NewBuiltin("runs", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var f Feature
			if err := sl.UnpackPositionalArgs(b.Name(), args, kw, 1, &f); err != nil {
				return nil, err
			}
			return sl.MakeInt(s.s.Runs(f.f)), nil
		}), nil
	case "moments":
		return sl.NewBuiltin("moments", func(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
			var r *Run
			most := 16
			if err := sl.UnpackArgs(b.Name(), args, kw, "r", &r, "most?", &most); err != nil {
				return nil, err
			}
			if most < 0 {
				return nil, fmt.Errorf("moments: most is %d; give a count from 0", most)
			}
			var out []sl.Value
			for _, m := range s.s.Moments(r.Result, most) {
				out = append(out, &Moment{m, s.s})
			}
			return sl.NewList(out), nil
		}), nil
	}
	return nil, nil
}

// Moment is a moment of a run at which it reached things (guide.Moment):
// m.at, m.what (the rarest of them), m.node (the node that reached it, ""
// when none did), and m.score, how rare that is now in
// its run and among the runs its set has seen (read anew each time, so it
// falls as more runs reach the same).
type Moment struct {
	m guide.Moment
	s *guide.Seen
}

var _ sl.HasAttrs = (*Moment)(nil)

func (m *Moment) String() string        { return fmt.Sprintf("<moment %v %s>", m.m.At, m.m.What) }
func (m *Moment) Type() string          { return "moment" }
func (m *Moment) Freeze()               {}
func (m *Moment) Truth() sl.Bool        { return sl.True }
func (m *Moment) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable: moment") }

// Moments compare by identity: two are equal when they are one.
func (m *Moment) AttrNames() []string { return []string{"at", "node", "score", "weight", "what"} }
func (m *Moment) Attr(name string) (sl.Value, error) {
	switch name {
	case "at":
		return Duration(m.m.At), nil
	case "what":
		return sl.String(m.m.What), nil
	case "node":
		return sl.String(m.m.Node), nil
	case "weight":
		return sl.Float(m.m.Weight), nil
	case "score":
		return sl.Float(m.s.Score(m.m)), nil
	}
	return nil, nil
}

// features is r.features: everything the run reached, in the order of
// its moments.
func (r *Run) features() sl.Value { return featureList(guide.Features(r.Result)) }

// rareMoments is r.rare_moments(most=8): the moments the run first ran
// the blocks it ran fewest times (guide.RareMoments); empty without
// coverage.
func (r *Run) rareMoments(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	most := 8
	if err := sl.UnpackArgs(b.Name(), args, kw, "most?", &most); err != nil {
		return nil, err
	}
	if most < 0 {
		return nil, fmt.Errorf("rare_moments: most is %d; give a count from 0", most)
	}
	var out []sl.Value
	for _, at := range guide.RareMoments(r.Result, most) {
		out = append(out, Duration(at))
	}
	return sl.NewList(out), nil
}

// coverageValue is r.coverage (coverageDict).
func (r *Run) coverageValue() sl.Value { return coverageDict(r.Result.Coverage) }

// mutate(r, at, op="rekey", key=1, donors=None, kind=None, node=None) is
// a schedule that keeps r's past before at and changes its future
// (guide.Mutate): "rekey" re-keys every stream at at; "add" adds a fault
// from donors (a list of runs whose faults may be taken: every fault type
// they had; with kind or node, only theirs) just after at; "shift" moves
// the first fault after at by up to 50ms; "remove" drops it. Each also
// re-keys at at. run_many runs it in r's world, forking from a checkpoint
// of r at or before at when that saves work.
func (c *exploreCtx) mutate(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	var r *Run
	at := durationArg(0)
	op := guide.Rekey
	key := 1
	donorsV := sl.Value(sl.None)
	var kind, node string
	if err := sl.UnpackArgs(b.Name(), args, kw, "r", &r, "at", &at, "op?", &op, "key?", &key, "donors?", &donorsV, "kind?", &kind, "node?", &node); err != nil {
		return nil, err
	}
	if key < 0 {
		return nil, fmt.Errorf("mutate: key %d is negative; keys are ints from 0", key)
	}
	var donors []faults.Fault
	if donorsV != sl.None {
		it, ok := donorsV.(sl.Iterable)
		if !ok {
			return nil, fmt.Errorf("mutate: donors is a %s; give a list of runs", donorsV.Type())
		}
		iter := it.Iterate()
		defer iter.Done()
		var v sl.Value
		for iter.Next(&v) {
			d, ok := v.(*Run)
			if !ok {
				return nil, fmt.Errorf("mutate: a donor is a %s, not a run", v.Type())
			}
			for _, f := range d.Result.Schedule.Faults {
				if (kind == "" || f.Kind == kind) && (node == "" || f.Node == node) {
					donors = append(donors, f)
				}
			}
		}
	}
	parent := r.Schedule()
	if n := len(parent.Branches); n > 0 && time.Duration(at) < parent.Branches[n-1].At {
		return nil, fmt.Errorf("mutate: at %v is before the run's last branch at %v: branches must not go back in time", time.Duration(at), parent.Branches[n-1].At)
	}
	sch, err := guide.Mutate(parent, op, time.Duration(at), uint64(key), donors)
	if err != nil {
		return nil, err
	}
	sch.Seed = r.Seed
	out := NewSchedule(sch.Changed(), r.World.w)
	out.parent, out.forkAt = r, time.Duration(at)
	return out, nil
}

// status(**counts) shows counts of the strategy's own (corpus=12,
// blocks=340) in explore's progress line.
func (c *exploreCtx) status(_ *sl.Thread, b *sl.Builtin, args sl.Tuple, kw []sl.Tuple) (sl.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("status: takes keyword arguments only, like ctx.status(corpus=12)")
	}
	c.shown = c.shown[:0]
	for _, kv := range kw {
		n, err := sl.AsInt32(kv[1])
		if err != nil {
			return nil, fmt.Errorf("status: %s is a %s, not an int", kv[0], kv[1].Type())
		}
		c.shown = append(c.shown, StatusCount{Name: string(kv[0].(sl.String)), N: n})
	}
	return sl.None, nil
}

// StatusCount is one of the counts a strategy shows (ctx.status).
type StatusCount struct {
	Name string
	N    int
}
