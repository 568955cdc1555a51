package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/world"
)

// Mutants weaken one durability guarantee of the simulated disk, for
// seedfall mutate: a workload that still passes with fsync made a no-op
// does not check what fsync is for. A mutant applies to the programs that
// take faults (world.NodeFaults), every weakened call and torn rename is an
// event in the trace, and every random choice a mutant makes comes from the
// mutant stream, keyed by the node and the disk op or crash it is about, so
// a mutant run replays exactly and a branch of "mutant" re-keys it.

// The mutants' kinds, as seedfall mutate -mutants names them.
const (
	MutantFsync     = "fsync"     // a file's fsync succeeds and makes nothing durable
	MutantFdatasync = "fdatasync" // the same for fdatasync
	MutantDirsync   = "dirsync"   // a directory's fsync makes none of its entries durable (strict_dirs)
	MutantOsync     = "osync"     // a write through O_SYNC or O_DSYNC is not made durable
	MutantRename    = "rename"    // a crash keeps a pending rename in half (strict_dirs)
)

// MutantKinds lists every mutant kind, in the order seedfall mutate runs
// them.
var MutantKinds = []string{MutantFsync, MutantFdatasync, MutantDirsync, MutantOsync, MutantRename}

// Mutant is one weakening of durability. The zero Mutant is none.
type Mutant struct {
	Kind string // one of MutantKinds; "" for none
	// OneIn, above 1, makes the mutant partial: each call it could weaken
	// (each pending rename, at a crash) is weakened with probability
	// 1/OneIn, drawn from the mutant stream. 0 or 1 weakens every one.
	OneIn int
}

// MaxOneIn bounds a partial mutant's K in "fsync/K".
const MaxOneIn = 1_000_000

// ParseMutant reads a mutant as seedfall mutate -mutants and -mutant name
// it: a kind, optionally with "/K" for one call in K.
func ParseMutant(s string) (Mutant, error) {
	kind, k, partial := strings.Cut(strings.TrimSpace(s), "/")
	if !isMutantKind(kind) {
		hint := ""
		if sug := world.Suggest(kind, MutantKinds); sug != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", sug)
		}
		return Mutant{}, fmt.Errorf("%q is not a mutant%s; the mutants are %s, each alone or as NAME/K to weaken one call in K", s, hint, strings.Join(MutantKinds, ", "))
	}
	m := Mutant{Kind: kind}
	if partial {
		n, err := strconv.Atoi(k)
		if err != nil || n < 2 || n > MaxOneIn {
			return Mutant{}, fmt.Errorf("%q: after the / give K, a whole number from 2 to %d, to weaken one call in K (or leave it out to weaken every call)", s, MaxOneIn)
		}
		m.OneIn = n
	}
	return m, nil
}

func isMutantKind(kind string) bool {
	for _, k := range MutantKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// String names the mutant as ParseMutant reads it: "fsync", "fsync/4".
func (m Mutant) String() string {
	if m.OneIn > 1 {
		return fmt.Sprintf("%s/%d", m.Kind, m.OneIn)
	}
	return m.Kind
}

// Describe says what the mutant does, for people: "every fsync of a file
// succeeds and makes nothing durable".
func (m Mutant) Describe() string {
	which := func(noun string) string {
		if m.OneIn > 1 {
			return fmt.Sprintf("one %s in %d, drawn per call,", noun, m.OneIn)
		}
		return "every " + noun
	}
	switch m.Kind {
	case MutantFsync:
		return which("fsync of a file") + " succeeds and makes nothing durable"
	case MutantFdatasync:
		return which("fdatasync") + " succeeds and makes nothing durable"
	case MutantDirsync:
		return which("fsync of a directory") + " succeeds and makes none of its entries durable"
	case MutantOsync:
		return which("write through O_SYNC or O_DSYNC") + " returns before it is durable"
	case MutantRename:
		if m.OneIn > 1 {
			return fmt.Sprintf("one rename in %d still pending at a crash, drawn per rename, is kept in half: both names, or neither", m.OneIn)
		}
		return "every rename still pending at a crash is kept in half: both names, or neither"
	}
	return "no mutant"
}

// verb says what the mutant did to one call, for the trace.
func (m Mutant) verb() string {
	if m.Kind == MutantOsync {
		return "not made durable"
	}
	return "made a no-op"
}

// Reached returns how many calls or crashes of a run with reach r the
// mutant could have weakened: 0 means the run is the same with it.
func (m Mutant) Reached(r disk.Reach) uint64 {
	switch m.Kind {
	case MutantFsync:
		return r.Fsync
	case MutantFdatasync:
		return r.Fdatasync
	case MutantDirsync:
		return r.DirSync
	case MutantOsync:
		return r.OSync
	case MutantRename:
		return r.Renames
	}
	return 0
}

func init() {
	register(familyDef{name: "mutant", open: openMutant})
}

// mutantFamily is the mutant family of one run; run is the mutant's
// state, nil without one.
type mutantFamily struct {
	*env
	run *mutantRun
}

// mutantRun is the mutant's state for one run.
type mutantRun struct {
	m       Mutant
	crashes map[string]uint64 // by program name: the rename draws are keyed by it
	count   uint64            // calls weakened and renames torn so far
}

func openMutant(e *env) (family, error) {
	mf := &mutantFamily{env: e}
	fam := family{disk: mf.disk, crash: mf.crash, result: mf.result}
	if e.mutant.Kind == "" {
		return fam, nil
	}
	if !isMutantKind(e.mutant.Kind) || e.mutant.OneIn < 0 || e.mutant.OneIn > MaxOneIn {
		return fam, fmt.Errorf("mutant %q: not one of %s", e.mutant, strings.Join(MutantKinds, ", "))
	}
	mf.run = &mutantRun{m: e.mutant, crashes: map[string]uint64{}}
	e.worldEvent(fmt.Sprintf("mutant %s: %s", e.mutant, e.mutant.Describe()))
	return fam, nil
}

// disk gives the disk of a program that takes faults the hook of the
// run's mutant.
func (mf *mutantFamily) disk(n *node, o *disk.Options) {
	mr := mf.run
	if mr == nil || !mf.w.NodeFaults(n.prog.Program) {
		return
	}
	name := n.prog.Name
	if mr.m.Kind == MutantRename {
		o.Tear = func(op disk.DirOp) disk.Tear {
			s := rng.ForName(mf.seedFor("mutant"), "mutant", name, mr.crashes[name], op.Seq)
			if mr.m.OneIn > 1 && s.Intn(mr.m.OneIn) != 0 {
				return disk.TearNone
			}
			t := disk.TearBoth
			if s.Intn(2) == 1 {
				t = disk.TearNeither
			}
			mr.count++
			mf.event(n, fmt.Sprintf("mutant %s: the crash keeps the rename of %s to %s in half: %s", mr.m, op.Path, op.NewPath, t))
			return t
		}
		return
	}
	o.Weaken = func(c disk.SyncCall) bool {
		if !mr.weakens(c) {
			return false
		}
		if mr.m.OneIn > 1 {
			s := rng.ForName(mf.seedFor("mutant"), "mutant", name, c.N)
			if s.Intn(mr.m.OneIn) != 0 {
				return false
			}
		}
		mr.count++
		what := c.Kind.String() + " of " + c.Path
		if c.Dir {
			what = "fsync of directory " + c.Path
		}
		mf.event(n, fmt.Sprintf("mutant %s: %s at disk op #%d %s", mr.m, what, c.N, mr.m.verb()))
		return true
	}
}

// weakens reports whether the run's mutant is about this kind of sync.
func (mr *mutantRun) weakens(c disk.SyncCall) bool {
	switch mr.m.Kind {
	case MutantDirsync:
		return c.Dir
	case MutantFsync:
		return !c.Dir && c.Kind == disk.SyncFsync
	case MutantFdatasync:
		return !c.Dir && c.Kind == disk.SyncData
	case MutantOsync:
		return !c.Dir && c.Kind == disk.SyncWrite
	}
	return false
}

// crash numbers a program's crashes, before its disk crashes.
func (mf *mutantFamily) crash(n *node) {
	if mf.run != nil {
		mf.run.crashes[n.prog.Name]++
	}
}

// result counts what the mutant weakened, and what any mutant could have,
// over the programs that take faults.
func (mf *mutantFamily) result(res *Result) {
	for _, n := range mf.nodeList() {
		if mf.w.NodeFaults(n.prog.Program) {
			res.Reach = res.Reach.Add(n.disk.Reach())
		}
	}
	if mf.run != nil {
		res.Mutant, res.Weakened = mf.run.m, mf.run.count
	}
}
