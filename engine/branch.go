package engine

import (
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/rng"
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

// rekeyedSeed is the seed a stream draws from after the branches
// rekeyed: the run's seed, re-keyed by every branch that names the stream
// or all streams.
func rekeyedSeed(seed uint64, rekeyed []faults.Branch, stream string) uint64 {
	for _, b := range rekeyed {
		if b.Stream == "" || b.Stream == stream {
			seed = rng.Rekey(seed, b.Key)
		}
	}
	return seed
}
