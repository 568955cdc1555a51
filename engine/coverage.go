package engine

import (
	"bytes"
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Coverage of the user's code (issue 28). A world with "coverage" on builds
// its programs with Go's coverage counters (engine/cover), and this family
// reads them out of the guests while the run goes: each time virtual time
// is about to move on, at least coverSample (100µs) after the last look,
// it scans the counters of every live guest and notes, for each block that
// ran for the first time in the run, the moment it saw it, and for each
// incarnation how many times each block ran (the programs are built with
// -covermode=count). It also looks at a
// guest just before it crashes or after it ends. The moments are exact to
// the sample: a block noted at t ran at or before t, after the sample
// before.
//
// Samples happen at the same steps in a run from scratch and in a fork of
// it: the host replays the same run. A fork's played guests have no
// counters to read before its checkpoint, so a checkpoint keeps what the
// family had seen by then, and the fork takes it over at that moment
// (keep and resume): what a fork reports is what the run from scratch
// reports (TestCoverageForkIsARunFromScratch).

// coverSample is the least virtual time between two looks: the precision
// of the moments, which guided search forks at.
const coverSample = 100 * time.Microsecond

func init() {
	register(familyDef{name: "coverage", open: openCoverage})
	Implemented["coverage"] = true
	Implemented["coverage_packages"] = true
}

type coverFamily struct {
	e     *env
	maps  map[string]*cover.Map
	seen  *cover.Set
	first []cover.Event
	next  int64 // no look before then
	// counts are each incarnation's counters as last read, by unit: how
	// many times each block ran in it.
	counts map[incKey]*incCounts
	// last is each live incarnation's counters as last read, to skip the
	// scan when nothing changed; it never changes what is noted.
	last map[*wasi.Process][][]byte
}

// incCounts is one incarnation's counters, by unit of its program.
type incCounts struct {
	prog string
	n    []uint32
}

// coverState is what a checkpoint keeps of the family.
type coverState struct {
	maps   map[string]*cover.Map
	seen   *cover.Set
	first  []cover.Event
	next   int64
	counts map[incKey]*incCounts
}

func cloneCounts(m map[incKey]*incCounts) map[incKey]*incCounts {
	out := make(map[incKey]*incCounts, len(m))
	for k, c := range m {
		out[k] = &incCounts{prog: c.prog, n: slices.Clone(c.n)}
	}
	return out
}

func openCoverage(e *env) (family, error) {
	if !e.w.Coverage {
		return family{}, nil
	}
	c := &coverFamily{e: e, maps: map[string]*cover.Map{}, seen: cover.NewSet(), last: map[*wasi.Process][][]byte{}, counts: map[incKey]*incCounts{}}
	return family{
		advance: c.advance,
		crash:   func(n *node) { c.look(n, c.e.now()) },
		ended:   func(n *node, wp *wasi.Process) { c.look(n, c.e.now()); delete(c.last, wp) },
		over:    func() { c.sample(c.e.now()) },
		keep: func() any {
			return &coverState{maps: maps.Clone(c.maps), seen: c.seen.Clone(), first: slices.Clone(c.first), next: c.next, counts: cloneCounts(c.counts)}
		},
		resume: func(v any) {
			s := v.(*coverState)
			c.maps, c.seen, c.first, c.next, c.counts = maps.Clone(s.maps), s.seen.Clone(), slices.Clone(s.first), s.next, cloneCounts(s.counts)
			clear(c.last)
		},
		result: func(res *Result) {
			res.Coverage = &cover.Run{Maps: c.maps, Hit: c.seen, First: c.first, Counts: c.total()}
		},
	}, nil
}

func (c *coverFamily) advance(now int64) {
	if now < c.next {
		return
	}
	c.next = now + int64(coverSample)
	c.sample(now)
}

func (c *coverFamily) sample(now int64) {
	for _, n := range c.e.nodeList() {
		if n.up {
			c.look(n, now)
		}
	}
}

// look notes the blocks of n's guest that ran for the first time.
func (c *coverFamily) look(n *node, now int64) {
	wp := n.wp
	// A fork's played guest has no counters before its checkpoint (resume).
	if wp == nil || wp.Cover == nil || wp.Play != nil {
		return
	}
	m := wp.Instance()
	if m == nil || m.Memory() == nil {
		return
	}
	prog := n.running()
	name := prog.Name
	if prog != n.prog {
		name += " (upgrade)"
	}
	cm := prog.coverMap(wp.Cover)
	if cm == nil {
		return
	}
	c.maps[name] = cm
	last := c.last[wp]
	if len(last) != len(wp.Cover.Regions) {
		last = make([][]byte, len(wp.Cover.Regions))
	}
	key := incKey{n.prog.Name, n.inc}
	counts := c.counts[key]
	if counts == nil {
		counts = &incCounts{prog: name, n: make([]uint32, len(cm.Units))}
		c.counts[key] = counts
	}
	for i, r := range wp.Cover.Regions {
		mem, ok := m.Memory().Read(r.Ptr, r.Words*4)
		if !ok || bytes.Equal(mem, last[i]) {
			continue
		}
		last[i] = append(last[i][:0], mem...)
		cm.Scan(mem, func(unit int, count uint32) {
			counts.n[unit] = count
			if c.seen.Add(name, unit) {
				c.first = append(c.first, cover.Event{At: time.Duration(now), Program: name, Unit: unit})
			}
		})
	}
	c.last[wp] = last
}

// total is how many times each block ran in the run: every incarnation's
// counters, as last read, added up by program.
func (c *coverFamily) total() map[string][]uint32 {
	out := map[string][]uint32{}
	keys := slices.SortedFunc(maps.Keys(c.counts), func(a, b incKey) int {
		return cmp.Or(strings.Compare(a.node, b.node), cmp.Compare(a.inc, b.inc))
	})
	for _, k := range keys {
		ic := c.counts[k]
		t := out[ic.prog]
		if len(t) < len(ic.n) {
			t = append(t, make([]uint32, len(ic.n)-len(t))...)
		}
		for u, v := range ic.n {
			t[u] += v
		}
		out[ic.prog] = t
	}
	return out
}

// coverMaps are the coverage layouts of the binaries seen, by hash,
// decoded once from what a binary's first guest said (nil if it could not
// be): every run of a binary shares its layout. A process that runs many
// worlds keeps the latest maxCoverMaps.
var coverMaps = struct {
	sync.Mutex
	m     map[string]*cover.Map
	order []string
}{m: map[string]*cover.Map{}}

const maxCoverMaps = 64

// coverMap is the coverage layout of p's binary.
func (p *Program) coverMap(c *wasi.Cover) *cover.Map {
	coverMaps.Lock()
	defer coverMaps.Unlock()
	if m, ok := coverMaps.m[p.Hash]; ok {
		return m
	}
	metas := make([]cover.Meta, len(c.Meta))
	for i, m := range c.Meta {
		metas[i] = cover.Meta{ID: m.ID, Blob: m.Blob}
	}
	m, _ := cover.NewMap(metas)
	coverMaps.m[p.Hash] = m
	if coverMaps.order = append(coverMaps.order, p.Hash); len(coverMaps.order) > maxCoverMaps {
		delete(coverMaps.m, coverMaps.order[0])
		coverMaps.order = coverMaps.order[1:]
	}
	return m
}
