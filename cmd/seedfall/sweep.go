package main

import (
	"context"
	"fmt"
	"iter"

	"github.com/seedfall/seedfall/engine"
)

// sweep runs the seeds, parallel at a time, and hands each finished run to
// each in seed order (engine.Prepared.Sweep). opts, if not nil, says how
// to run a seed.
func (s *session) sweep(ctx context.Context, seeds engine.Seeds, parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	return s.sweepSeq(ctx, seeds.All(), parallel, opts, each)
}

// sweepSeq is sweep over the seeds seeds yields: a shard's, say.
func (s *session) sweepSeq(ctx context.Context, seeds iter.Seq[uint64], parallel int, opts func(seed uint64) (engine.RunOptions, error), each func(res *engine.Result)) (ran int, firstErr error) {
	return s.p.Sweep(ctx, seeds, parallel, opts, func(res *engine.Result) bool { each(res); return true })
}

// seedTally keeps the first few seeds of a kind (the failing ones) and
// counts the rest, for a line such as "(seeds 3 5 8 and 12 more)".
type seedTally struct {
	first []uint64
	n     int
}

// tallyShown is how many seeds a tally names.
const tallyShown = 10

func (t *seedTally) add(seed uint64) {
	if len(t.first) < tallyShown {
		t.first = append(t.first, seed)
	}
	t.n++
}

// String writes " (seeds 3 5 and 12 more)", or "" for none.
func (t *seedTally) String() string {
	if t.n == 0 {
		return ""
	}
	s := " (seeds"
	for _, x := range t.first {
		s += fmt.Sprintf(" %d", x)
	}
	if more := t.n - len(t.first); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + ")"
}

// interruptedLine says how much of a sweep ran before Ctrl-C stopped it.
func interruptedLine(ran, of int) string {
	return fmt.Sprintf("interrupted: %d of %s ran", ran, plural(of, "seed"))
}
