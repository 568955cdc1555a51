package engine

import (
	"bytes"
	"maps"
	"slices"
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
	rises []cover.Event
	next  int64 // no look before then
	// counts are each incarnation's counters as last read, by unit: how
	// many times each block ran in it; sums are every incarnation's
	// added up, by program.
	counts map[incKey]*incCounts
	sums   map[string][]uint32
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
	maps         map[string]*cover.Map
	seen         *cover.Set
	first, rises []cover.Event
	next         int64
	counts       map[incKey]*incCounts
	sums         map[string][]uint32
}

func cloneCounts(m map[incKey]*incCounts) map[incKey]*incCounts {
	out := make(map[incKey]*incCounts, len(m))
	for k, c := range m {
		out[k] = &incCounts{prog: c.prog, n: slices.Clone(c.n)}
	}
	return out
}

func cloneSums(m map[string][]uint32) map[string][]uint32 {
	out := make(map[string][]uint32, len(m))
	for p, s := range m {
		out[p] = slices.Clone(s)
	}
	return out
}

func openCoverage(e *env) (family, error) {
	if !e.w.Coverage {
		return family{}, nil
	}
	c := &coverFamily{e: e, maps: map[string]*cover.Map{}, seen: cover.NewSet(), last: map[*wasi.Process][][]byte{}, counts: map[incKey]*incCounts{}, sums: map[string][]uint32{}}
	return family{
		advance: c.advance,
		crash:   func(n *node) { c.look(n, c.e.now()) },
		ended:   func(n *node, wp *wasi.Process) { c.look(n, c.e.now()); delete(c.last, wp) },
		over:    func() { c.sample(c.e.now()) },
		keep: func() any {
			return &coverState{maps: maps.Clone(c.maps), seen: c.seen.Clone(), first: slices.Clone(c.first), rises: slices.Clone(c.rises),
				next: c.next, counts: cloneCounts(c.counts), sums: cloneSums(c.sums)}
		},
		resume: func(v any) {
			s := v.(*coverState)
			c.maps, c.seen, c.first, c.rises, c.next = maps.Clone(s.maps), s.seen.Clone(), slices.Clone(s.first), slices.Clone(s.rises), s.next
			c.counts, c.sums = cloneCounts(s.counts), cloneSums(s.sums)
			clear(c.last)
		},
		result: func(res *Result) {
			res.Coverage = &cover.Run{Maps: c.maps, Hit: c.seen, First: c.first, Rises: c.rises, Counts: c.sums}
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
	sums := c.sums[name]
	if len(sums) < len(cm.Units) {
		sums = append(sums, make([]uint32, len(cm.Units)-len(sums))...)
		c.sums[name] = sums
	}
	for i, r := range wp.Cover.Regions {
		mem, ok := m.Memory().Read(r.Ptr, r.Words*4)
		if !ok || bytes.Equal(mem, last[i]) {
			continue
		}
		last[i] = append(last[i][:0], mem...)
		cm.Scan(mem, func(unit int, count uint32) {
			old := counts.n[unit]
			if count <= old {
				return
			}
			counts.n[unit] = count
			was := sums[unit]
			sums[unit] += count - old
			if c.seen.Add(name, unit) {
				c.first = append(c.first, cover.Event{At: time.Duration(now), Program: name, Unit: unit, N: 1})
			}
			for _, t := range cover.Thresholds[1:] {
				if was < t && t <= sums[unit] {
					c.rises = append(c.rises, cover.Event{At: time.Duration(now), Program: name, Unit: unit, N: t})
				}
			}
		})
	}
	c.last[wp] = last
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
