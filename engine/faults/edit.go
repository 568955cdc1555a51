package faults

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/world"
)

// Edits are the changes `seedfall faults` makes to a schedule. Positions
// count from 1 and refer to the schedule before the edit, as it was listed.
type Edits struct {
	Remove []int
	Shift  []Shift
	Add    []Fault
	// Duration, when above 0, is the schedule's new horizon: longer, for
	// a fault shifted past the old end; shorter, to end a run sooner.
	Duration time.Duration
}

// Shift moves the fault at position Pos: a timed fault by Dur (its until
// too), a fault that fires at an operation by Ops operations. Count says the
// amount was written as a bare count ("+2"), not a duration ("-50ms").
type Shift struct {
	Pos   int
	Dur   time.Duration
	Ops   int64
	Count bool
	Text  string // as given, for messages
}

// ParseShift reads "2=-50ms" (a duration) or "1=+2" (a count).
func ParseShift(s string) (Shift, error) {
	pos, amount, ok := strings.Cut(s, "=")
	n, err := strconv.Atoi(strings.TrimSpace(pos))
	if !ok || err != nil || amount == "" {
		return Shift{}, fmt.Errorf("-shift %q: write it as N=AMOUNT, like 2=-50ms for a timed fault or 1=+2 for one that fires at an operation", s)
	}
	if n < 1 {
		return Shift{}, fmt.Errorf("-shift %q: positions count from 1, as listed", s)
	}
	sh := Shift{Pos: n, Text: s}
	if c, err := strconv.ParseInt(amount, 10, 64); err == nil {
		sh.Ops, sh.Count = c, true
		return sh, nil
	}
	d, err := time.ParseDuration(amount)
	if err != nil {
		return Shift{}, fmt.Errorf("-shift %q: %q is neither a signed duration like -50ms nor a signed count like +2", s, amount)
	}
	sh.Dur = d
	return sh, nil
}

// Edit returns s with e applied: the faults at e.Remove taken out, those at
// e.Shift moved, e.Add appended, and the result sorted stably by at. It
// drops ShrunkFrom and ShrinkRuns, since the result is no longer what
// shrink found. s is not changed. Edit does not check the result: Check does.
func Edit(s *Schedule, e Edits) (*Schedule, error) {
	n := len(s.Faults)
	inRange := func(flag string, pos int, text string) error {
		if pos < 1 || pos > n {
			return fmt.Errorf("%s %s: there is no fault %d; the schedule has %s, numbered from 1 as listed", flag, text, pos, countFaults(n))
		}
		return nil
	}
	removed := map[int]bool{}
	for _, p := range e.Remove {
		if err := inRange("-remove", p, strconv.Itoa(p)); err != nil {
			return nil, err
		}
		if removed[p] {
			return nil, fmt.Errorf("-remove %d is given twice", p)
		}
		removed[p] = true
	}
	out := slices.Clone(s.Faults)
	shifted := map[int]bool{}
	for _, sh := range e.Shift {
		text := sh.Text
		if text == "" {
			text = fmt.Sprintf("%d=...", sh.Pos)
		}
		if err := inRange("-shift", sh.Pos, text); err != nil {
			return nil, err
		}
		if removed[sh.Pos] {
			return nil, fmt.Errorf("-shift %s: fault %d is also removed", text, sh.Pos)
		}
		if shifted[sh.Pos] {
			return nil, fmt.Errorf("-shift %s: fault %d is already shifted; give one shift per fault", text, sh.Pos)
		}
		shifted[sh.Pos] = true
		f := &out[sh.Pos-1]
		k, _ := Lookup(f.Kind)
		switch {
		case k.AtOp && !sh.Count && sh.Dur != 0:
			return nil, fmt.Errorf("-shift %s: fault %d (%s) fires at %s #%d, not at a time: shift it by a signed count, like %d=-1",
				text, sh.Pos, f.Kind, opNoun(f.Kind), f.Op, sh.Pos)
		case k.AtOp:
			op := int64(f.Op) + sh.Ops
			if op < 1 {
				return nil, fmt.Errorf("-shift %s: fault %d (%s) would fire at %s #%d; they count from #1", text, sh.Pos, f.Kind, opNoun(f.Kind), op)
			}
			f.Op = uint64(op)
		case sh.Count && sh.Ops != 0:
			return nil, fmt.Errorf("-shift %s: fault %d (%s) is timed: shift it by a signed duration, like %d=-50ms", text, sh.Pos, f.Kind, sh.Pos)
		default:
			// until moves with at; kinds that never set it keep it at 0.
			if f.Until != 0 || k.Lasts {
				f.Until += sh.Dur
			}
			f.At += sh.Dur
		}
	}
	kept := make([]Fault, 0, n+len(e.Add))
	for i, f := range out {
		if !removed[i+1] {
			kept = append(kept, f)
		}
	}
	kept = append(kept, e.Add...)
	slices.SortStableFunc(kept, func(a, b Fault) int { return cmp.Compare(a.At, b.At) })
	d := s.Duration
	if e.Duration > 0 {
		d = e.Duration
	}
	return &Schedule{Seed: s.Seed, Config: s.Config, Duration: d, Faults: kept, Branches: slices.Clone(s.Branches)}, nil
}

func countFaults(n int) string {
	if n == 1 {
		return "1 fault"
	}
	return fmt.Sprintf("%d faults", n)
}

// CheckConfig is what Check needs of the world a schedule runs in.
type CheckConfig struct {
	Programs   []string      // every program's name
	Duration   time.Duration // the config's duration, used when the schedule has none
	PreemptPCT bool          // preempt.strategy is pct
}

// Check checks every fault of s against the world, as the spec's table for
// editing a schedule says, and returns one error per broken rule, each
// naming the fault by its position in s and its kind.
func Check(s *Schedule, c CheckConfig) error {
	end := s.Duration
	if end <= 0 {
		end = c.Duration
	}
	var errs []error
	for i, f := range s.Faults {
		for _, err := range f.rules(c.Programs, checkRun{end: end, preemptPCT: c.PreemptPCT, full: true}) {
			errs = append(errs, fmt.Errorf("fault %d (%s): %v", i+1, f.Kind, err))
		}
	}
	return errors.Join(errs...)
}

// checkRun is what a check knows of the run: the end of the run (0:
// unknown, no fault is too late) and, when full, the preempt strategy.
// Load leaves full false: it does not refuse a preempt fault in a world
// that no longer asks for pct, which a replay applies as before.
type checkRun struct {
	end        time.Duration
	preemptPCT bool
	full       bool
}

// rules returns every rule f breaks.
func (f Fault) rules(programs []string, run checkRun) []error {
	k, ok := kinds[f.Kind]
	if !ok {
		return []error{unknownKind(f.Kind)}
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	names := append([]string{f.Node, f.From, f.To}, f.Side...)
	for _, g := range f.Groups {
		names = append(names, g...)
	}
	var unknown []string
	for _, n := range names {
		if n != "" && !slices.Contains(programs, n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	for _, n := range unknown {
		bad("node %q is not in the world (it has %s)", n, strings.Join(programs, ", "))
	}
	if f.At < 0 {
		bad("at %v is negative", f.At)
	}
	if run.end > 0 && !k.AtOp && f.At > run.end {
		bad("at %v is after the end of the run at %v", f.At, run.end)
	}
	if k.Lasts && f.Until < f.At {
		bad("until %v is before at %v", f.Until, f.At)
	}
	switch f.Kind {
	case "partition":
		switch {
		case len(f.Side) > 0 && len(f.Groups) > 0:
			bad("a partition takes side or groups, not both")
		case len(f.Side) == 0 && len(f.Groups) == 0:
			bad("a partition needs side (the nodes cut off from the rest) or groups")
		}
	case "clog":
		if !slices.Contains([]string{"stop", "slow", "jam"}, f.Mode) {
			bad("mode %q is not stop, slow or jam", f.Mode)
		}
		switch {
		case f.Node != "":
			if !slices.Contains([]string{"in", "out", "both"}, f.Dir) {
				bad("dir %q is not in, out or both, which a clog of node %s needs", f.Dir, f.Node)
			}
			if f.From != "" || f.To != "" {
				bad("a clog names a node with dir, or a link with from and to, not both")
			}
		case f.Dir != "":
			bad("dir %q needs a node; a clog of a link names from and to instead", f.Dir)
		case f.From == "" || f.To == "":
			bad("a clog needs a node and dir, or two nodes in from and to")
		case f.From == f.To:
			bad("from and to are both %q; a clogged link joins two different nodes", f.From)
		}
	}
	if f.Node == "" && !k.NoNode {
		bad("a %s fault needs a node", f.Kind)
	}
	if k.Factor && f.Factor < 1 {
		bad("factor %v is below 1: a %s fault stretches time, it cannot shrink it", f.Factor, f.Kind)
	}
	if k.AtOp {
		if f.Op < 1 {
			bad("op must be at least 1: a %s fault fires at the %s with that number", f.Kind, opNoun(f.Kind))
		}
		if f.Kind == "buggify" && f.Site == "" {
			bad("a buggify fault names its site")
		}
		if run.full && f.Kind == "preempt" && !run.preemptPCT {
			bad("a preempt fault needs \"preempt\": {\"strategy\": \"pct\"} in the config")
		}
	}
	return errs
}

// opNoun names what an operation fault's op counts.
func opNoun(kind string) string {
	switch kind {
	case "read_eio", "read_corrupt":
		return "disk read"
	case "buggify":
		return "buggify hit"
	case "preempt":
		return "counted call"
	case "udp_drop", "udp_dup":
		return "udp datagram"
	case "mmap_early_writeback":
		return "node crash"
	}
	return "disk op"
}

// unknownKind says a fault kind does not exist, and which one was meant
// when the name is a slip of one ("partiton"), else which kinds exist.
func unknownKind(kind string) error {
	if s := world.Suggest(kind, Known()); s != "" {
		return fmt.Errorf("unknown fault kind %q (did you mean %q?)", kind, s)
	}
	return fmt.Errorf("unknown fault kind %q (this build knows: %s)", kind, strings.Join(Known(), ", "))
}
