package engine

import (
	"fmt"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/rng"
)

// Branches re-key the seed's random streams partway through a run (a
// schedule's "branches"): from the first scheduler step at or after a
// branch's time, the streams it names draw from a seed derived from the
// run's seed and the branch's key, so a run can be forked at any moment
// into another plausible future while everything before stays the same.
//
// Branches only come with a schedule, so the streams that decide faults
// (io, udp, and the plans drawn at the start) never matter: the schedule
// fixes the faults. What a branch changes is sched (which runnable process
// goes next), net (message latencies), disk (crash states and bit-rot
// sites), disklatency (fsync times), random (what programs read from
// crypto/rand and math/rand's seed) and, for a branch of every stream, the
// supervisor's restart delays. mutant changes which calls a partial
// mutant weakens and how torn renames tear (mutant.go), under seedfall
// mutate.

// seedFor is the seed a stream draws from now: the run's seed, re-keyed by
// every branch applied so far that names the stream or all streams.
func (r *runner) seedFor(stream string) uint64 {
	s := r.seed
	for _, b := range r.rekeyed {
		if b.Stream == "" || b.Stream == stream {
			s = rng.Rekey(s, b.Key)
		}
	}
	return s
}

// branch applies one branch: long-lived streams restart from their new
// keys; streams made per draw pick theirs up through seedFor.
func (r *runner) branch(b faults.Branch) {
	if r.res != nil {
		return
	}
	r.rekeyed = append(r.rekeyed, b)
	what := "every stream"
	if b.Stream != "" {
		what = "the " + b.Stream + " stream"
	}
	r.worldEvent(fmt.Sprintf("branch: %s re-keyed with %d", what, b.Key))
	on := func(stream string) bool { return b.Stream == "" || b.Stream == stream }
	if on("sched") {
		r.s.Rekey(rng.New(r.seedFor("sched"), "sched", -1))
	}
	if on("net") {
		r.netR = rng.New(r.seedFor("net"), "net", -1)
	}
	for _, f := range r.fams {
		if f.rekey != nil {
			f.rekey(on) // disklatency
		}
	}
	for _, n := range r.nodes {
		name := n.prog.Name
		if on("random") && n.up && n.wp != nil {
			n.wp.Random = rng.ForName(r.seedFor("random"), "random", name, uint64(n.inc))
		}
		if on("cpu") && n.up && n.wp != nil && n.wp.CPU != nil {
			n.wp.CPU.Stream = rng.ForName(r.seedFor("cpu"), "cpu", name, uint64(n.inc))
		}
		if b.Stream == "" {
			n.rst = rng.ForName(r.seedFor("restart"), "restart", name)
		}
	}
}
