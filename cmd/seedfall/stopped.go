package main

import (
	"fmt"
	"io"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/session"
)

// stoppedEarly reports whether res is a run that RunOptions.StopAt ended:
// the engine ends it passed, with no check of the run so far.
func stoppedEarly(res *engine.Result, at time.Duration) bool {
	return at > 0 && res.Stopped
}

// printStopVerdict prints the outcome of a run asked to stop at at: that
// it was stopped there, which says nothing of whether it passes, or the
// verdict of a run that ended before.
//
//	STOPPED seed 3 at t=300ms (the run was stopped here to inspect it; 12 scheduler steps, 4.1ms real)
func printStopVerdict(s *session.Session, w io.Writer, res *engine.Result, at time.Duration) {
	switch {
	case stoppedEarly(res, at):
		fmt.Fprintf(w, "STOPPED seed %d at t=%s (the run was stopped here to inspect it; %d scheduler steps, %s real)\n",
			res.Seed, simTime(res.SimNs), res.Steps, wallTime(res.WallNs))
	case at > 0:
		fmt.Fprintf(w, "the run ended before %v: ", at)
		s.WriteVerdict(w, res, "")
	default:
		s.WriteVerdict(w, res, "")
	}
}
