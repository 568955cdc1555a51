package engine

import (
	"bytes"
	"slices"
	"sync"
	"time"

	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/internal/wasi"
)

// Coverage of the user's code (issue 28). A world with "coverage" on builds
// its programs with Go's coverage counters (engine/cover), and this family
// reads them out of the guests while the run goes: each time virtual time
// is about to move on, at least coverSample (100µs) after the last look, it scans
// the counters of every live guest and notes, for each block that ran for
// the first time in the run, the moment it saw it. It also looks at a
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
	// last is each live incarnation's counters as last read, to skip the
	// scan when nothing changed; it never changes what is noted.
	last map[*wasi.Process][][]byte
}

// coverState is what a checkpoint keeps of the family.
type coverState struct {
	seen  *cover.Set
	first []cover.Event
	next  int64
}

func openCoverage(e *env) (family, error) {
	if !e.w.Coverage {
		return family{}, nil
	}
	c := &coverFamily{e: e, maps: map[string]*cover.Map{}, seen: cover.NewSet(), last: map[*wasi.Process][][]byte{}}
	return family{
		advance: c.advance,
		crash:   func(n *node) { c.look(n, c.e.now()) },
		ended:   func(n *node, wp *wasi.Process) { c.look(n, c.e.now()); delete(c.last, wp) },
		over:    func() { c.sample(c.e.now()) },
		keep: func() any {
			return &coverState{seen: c.seen.Clone(), first: slices.Clone(c.first), next: c.next}
		},
		resume: func(v any) {
			s := v.(*coverState)
			c.seen, c.first, c.next = s.seen.Clone(), slices.Clone(s.first), s.next
			clear(c.last)
		},
		result: func(res *Result) {
			res.Coverage = &cover.Run{Maps: c.maps, Hit: c.seen, First: c.first}
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
	for i, r := range wp.Cover.Regions {
		mem, ok := m.Memory().Read(r.Ptr, r.Words*4)
		if !ok || bytes.Equal(mem, last[i]) {
			continue
		}
		last[i] = append(last[i][:0], mem...)
		cm.Scan(mem, func(unit int) {
			if c.seen.Add(name, unit) {
				c.first = append(c.first, cover.Event{At: time.Duration(now), Program: name, Unit: unit})
			}
		})
	}
	c.last[wp] = last
}

// coverMap is the coverage layout of p's binary, decoded once from what
// its first guest said (nil if it cannot be).
func (p *Program) coverMap(c *wasi.Cover) *cover.Map {
	p.cover.once.Do(func() {
		metas := make([]cover.Meta, len(c.Meta))
		for i, m := range c.Meta {
			metas[i] = cover.Meta{ID: m.ID, Blob: m.Blob}
		}
		p.cover.m, p.cover.err = cover.NewMap(metas)
	})
	return p.cover.m
}

// programCover is a Program's coverage layout, decoded on first use.
type programCover struct {
	once sync.Once
	m    *cover.Map
	err  error
}
