package elle

import (
	"fmt"
	"slices"
	"strings"
)

// How a cycle type may take read-write (anti-dependency) edges.
const (
	rwNone   = iota // none
	rwSingle        // exactly one
	rwNonadj        // two or more, no two adjacent
	rwMulti         // two or more, two of them adjacent
)

// cycleType is a kind of cycle Elle names: G0 (write edges only), G1c
// (write and read edges), G-single-item (one anti-dependency),
// G-nonadjacent-item (anti-dependencies never adjacent), G2-item
// (adjacent anti-dependencies), each also with process or real-time
// edges (G0-process, G-single-item-realtime, ...).
type cycleType struct {
	name    string
	start   uint8 // the relationship a cycle of this type is searched from
	path    uint8 // the relationships it may take after that, rw aside
	rwMode  int
	variant uint8 // relProcess or relRealtime: at least one is needed
}

// cycleTypes are the cycle types, in the order they are searched for:
// Elle's, by depth in the anomaly graphs (worst first), then name. The
// predicate forms (G-single, G-nonadjacent, G2) are left out: without
// predicate reads, every such cycle is an -item one.
var cycleTypes = func() []cycleType {
	var ts []cycleType
	for _, v := range []struct {
		suffix string
		rel    uint8
	}{{"", 0}, {"-process", relProcess}, {"-realtime", relRealtime}} {
		ts = append(ts,
			cycleType{"G0" + v.suffix, relWW, relWW | v.rel, rwNone, v.rel},
			cycleType{"G1c" + v.suffix, relWR, relWW | relWR | v.rel, rwNone, v.rel},
			cycleType{"G-single-item" + v.suffix, relRW, relWW | relWR | v.rel, rwSingle, v.rel},
			cycleType{"G-nonadjacent-item" + v.suffix, relRW, relWW | relWR | v.rel, rwNonadj, v.rel},
			cycleType{"G2-item" + v.suffix, relRW, relWW | relWR | v.rel, rwMulti, v.rel},
		)
	}
	slices.SortFunc(ts, func(a, b cycleType) int { return compareAnomalies(a.name, b.name) })
	return ts
}()

// cycleExistsSpec is one of Elle's cheap checks: if the subgraph of some
// relationships holds a cycle, a model is violated, whatever the cycle.
type cycleExistsSpec struct {
	model     string // canonical
	rels      uint8
	extension bool // rels ∪ (rels ; rw): snapshot isolation's form
	subgraph  string
}

var cycleExistsSpecs = []cycleExistsSpec{
	// Read uncommitted: no write cycles (Adya).
	{"PL-1", relWW, false, "ww"},
	// Read committed: no circular information flow.
	{"PL-2", relWW | relWR, false, "ww wr"},
	// Snapshot isolation: a cycle may take single rw hops.
	{"PL-SI", relWW | relWR, true, "[:extension ww wr; rw]"},
	// Repeatable read and serializable: no data cycles (without
	// predicates the two are one check).
	{"PL-2.99", relData, false, "ww wr rw"},
	{"PL-3", relData, false, "ww wr rw"},
	// The strong-session forms add process order.
	{"strong-session-PL-1", relWW | relProcess, false, "ww process"},
	{"strong-session-PL-2", relWW | relWR | relProcess, false, "ww wr process"},
	{"strong-session-snapshot-isolation", relWW | relWR | relProcess, true, "[:extension ww wr process; rw]"},
	{"strong-session-serializable", relData | relProcess, false, "ww wr rw process"},
	// The strong forms add real-time order.
	{"strong-PL-1", relWW | relRealtime, false, "ww realtime"},
	{"strong-PL-2", relWW | relWR | relRealtime, false, "ww wr realtime"},
	{"strong-snapshot-isolation", relWW | relWR | relRealtime, true, "[:extension ww wr realtime; rw]"},
	{"PL-SS", relData | relRealtime, false, "ww wr rw realtime"},
}

func isCycleExists(t string) bool { return strings.HasSuffix(t, "-cycle-exists") }

func cycleExistsModel(t string) string { return strings.TrimSuffix(t, "-cycle-exists") }

// cycles searches each strongly connected component of the graph for
// cycles, as Elle does: first the cheap existence checks, then each cycle
// type in turn, skipping those implied by what was found.
func (c *checker) cycles() {
	cs := tarjan(c.g, relAll)
	// Components in order of their first transaction.
	members := map[int32][]int32{}
	var order []int32
	for v := int32(0); v < int32(c.g.n); v++ {
		k := cs.comp[v]
		if !cs.nontrivial(k) {
			continue
		}
		if _, ok := members[k]; !ok {
			order = append(order, k)
		}
		members[k] = append(members[k], v)
	}
	local := make([]int32, c.g.n)
	for i := range local {
		local[i] = -1
	}
	for _, k := range order {
		if c.expired() {
			return
		}
		vs := members[k]
		s := &sccSearch{c: c, vs: vs, g: c.g.sub(vs, local, c.priority)}
		s.run()
	}
}

// sccSearch is the search of one strongly connected component.
type sccSearch struct {
	c  *checker
	vs []int32 // the component's vertices; vertex i of g is vs[i]
	g  *graph

	budget  int
	stopped bool
	// scratch for the breadth-first search
	seen    []uint32 // states in which each vertex was reached
	touched []int32
	queue   []bfsEntry
}

func (s *sccSearch) run() {
	c := s.c
	s.budget = c.opts.CycleSearchBudget
	if s.budget == 0 {
		s.budget = DefaultCycleSearchBudget
	}
	// Elle's cycle-exists pass: which subgraphs hold a cycle at all. What
	// the models still possible forbid cannot be here.
	var cases []Anomaly
	impossible := map[string]bool{}
	for _, spec := range cycleExistsSpecs {
		if impossible[spec.model] {
			continue
		}
		scc := s.smallestCycleComponent(spec)
		if scc == nil {
			continue
		}
		var idx []int64
		for _, v := range scc {
			idx = append(idx, c.txnOf(s.vs[v]).op.Index)
		}
		slices.Sort(idx)
		spec := spec
		cases = append(cases, Anomaly{Type: spec.model + "-cycle-exists", Not: friendlyModel(spec.model),
			Subgraph: spec.subgraph, SCCSize: len(idx), SCC: rawJSON(idx),
			fill: func(a *Anomaly) {
				a.Explanation = fmt.Sprintf("a cycle exists among these %d transactions over %s edges, which %s forbids, though the search named no cycle: %v",
					len(idx), spec.subgraph, friendlyModel(spec.model), idx)
			}})
		for m := range reach(modelGraph.in, []string{spec.model}) {
			impossible[m] = true
		}
	}
	var possible []string
	for _, spec := range cycleExistsSpecs {
		if !impossible[spec.model] {
			possible = append(possible, spec.model)
		}
	}
	skip := map[string]bool{}
	for a := range anomaliesProhibitedBy(possible) {
		skip[a] = true
	}
	var searched []string
	var found []Anomaly
	for _, t := range cycleTypes {
		if skip[t.name] {
			continue
		}
		if c.expired() {
			break
		}
		a, ok := s.find(t)
		if s.stopped && c.incomplete {
			break // the deadline: the result says it is incomplete
		}
		if s.stopped {
			// Elle's cycle-search-timeout: say what was searched, and keep
			// the existence cases, which still rule models out.
			var not []string
			for _, x := range searched {
				if !slices.ContainsFunc(found, func(f Anomaly) bool { return f.Type == x }) {
					not = append(not, x)
				}
			}
			c.add(Anomaly{Type: "cycle-search-timeout", SpecType: t.name, DoesNotContain: not, SCCSize: len(s.vs),
				Explanation: fmt.Sprintf("the search for a %s cycle among %d transactions took more than %d steps and stopped; there may be cycles it did not name",
					t.name, len(s.vs), s.budgetGiven())})
			break
		}
		searched = append(searched, t.name)
		if !ok {
			continue
		}
		found = append(found, a)
		for x := range reach(impliedAnomalies.out, []string{t.name}) {
			skip[x] = true
		}
	}
	for _, a := range cases {
		c.add(a)
	}
	for _, a := range found {
		c.add(a)
	}
}

func (s *sccSearch) budgetGiven() int {
	if s.c.opts.CycleSearchBudget != 0 {
		return s.c.opts.CycleSearchBudget
	}
	return DefaultCycleSearchBudget
}

// smallestCycleComponent is the smallest component of the spec's subgraph
// that holds a cycle (its vertices, sorted), or nil.
func (s *sccSearch) smallestCycleComponent(spec cycleExistsSpec) []int32 {
	g, n := s.g, s.g.n
	var cs *components
	if spec.extension {
		cs = tarjan(extension(g, spec.rels, relRW), relAll)
	} else {
		cs = tarjan(g, spec.rels)
	}
	best := int32(-1)
	for k := range cs.size {
		if cs.nontrivial(int32(k)) && (best < 0 || cs.size[k] < cs.size[best]) {
			best = int32(k)
		}
	}
	if best < 0 {
		return nil
	}
	var vs []int32
	if spec.extension {
		// A vertex of the extension is a transaction in one of two
		// states: list each transaction once.
		seen := map[int32]bool{}
		for x := range cs.comp {
			if cs.comp[x] == best && !seen[int32(x/2)] {
				seen[int32(x/2)] = true
				vs = append(vs, int32(x/2))
			}
		}
		slices.Sort(vs)
		return vs
	}
	for v := 0; v < n; v++ {
		if cs.comp[v] == best {
			vs = append(vs, int32(v))
		}
	}
	return vs
}

// A search state, packed in 5 bits: how many rw edges taken (0, 1, 2 or
// more), whether the last edge was rw, whether a process or real-time
// edge was taken, whether two rw edges were adjacent.
const (
	stRWMask   = 3
	stLastRW   = 1 << 2
	stVariant  = 1 << 3
	stAdjacent = 1 << 4
)

// step is the state after taking an edge of relationship rel in state st,
// and whether t may take it.
func (t *cycleType) step(st uint8, rel uint8) (uint8, bool) {
	if rel == relRW {
		n := st & stRWMask
		switch t.rwMode {
		case rwNone:
			return 0, false
		case rwSingle:
			if n >= 1 {
				return 0, false
			}
		case rwNonadj:
			if st&stLastRW != 0 {
				return 0, false
			}
		case rwMulti:
			if st&stLastRW != 0 {
				st |= stAdjacent
			}
		}
		return st&^stRWMask | min(n+1, 2) | stLastRW, true
	}
	if rel&t.path == 0 {
		return 0, false
	}
	st &^= stLastRW
	if rel == t.variant {
		st |= stVariant
	}
	return st, true
}

// accepts says whether a cycle that closes in state st is of type t. The
// first edge of an rw cycle is rw, so a last rw edge is adjacent to it.
func (t *cycleType) accepts(st uint8) bool {
	if t.variant != 0 && st&stVariant == 0 {
		return false
	}
	n := st & stRWMask
	switch t.rwMode {
	case rwNone:
		return n == 0
	case rwSingle:
		return n == 1
	case rwNonadj:
		return n >= 2 && st&stLastRW == 0
	}
	return n >= 2 && (st&stAdjacent != 0 || st&stLastRW != 0)
}

// hop is one edge of a cycle: to vertex v by relationship rel.
type hop struct {
	v   int32
	rel uint8
}

type bfsEntry struct {
	v      int32
	st     uint8
	rel    uint8 // the relationship taken to get here
	parent int32 // index of the entry this one came from (-1: the start)
}

// find searches the component for a cycle of type t: from each edge of
// t's start relationship a -> b, a shortest walk back from b to a through
// the relationships t allows, each edge taken by its primary relationship.
// Walks that repeat a transaction are not
// cycles: find keeps a simple cycle of type t inside one, if there is one,
// and otherwise goes on.
func (s *sccSearch) find(t cycleType) (Anomaly, bool) {
	g := s.g
	all := t.start | t.path
	if t.rwMode != rwNone {
		all |= relRW
	}
	// A cycle lies within one component of the subgraph of t's
	// relationships; a walk back from b to a over t's path relationships
	// lies, when those exclude rw, between a's and b's components of that
	// subgraph in topological order.
	cs := tarjan(g, all)
	var pathCS *components
	if t.rwMode == rwNone || t.rwMode == rwSingle {
		pathCS = tarjan(g, t.path)
	}
	if s.seen == nil {
		s.seen = make([]uint32, g.n)
	}
	for a := int32(0); a < int32(g.n); a++ {
		if !cs.nontrivial(cs.comp[a]) {
			continue
		}
		for e := g.off[a]; e < g.off[a+1]; e++ {
			b := g.to[e]
			if g.prim[e] != t.start || cs.comp[b] != cs.comp[a] {
				continue
			}
			if pathCS != nil && pathCS.comp[b] < pathCS.comp[a] {
				continue // b cannot reach a over t's path relationships
			}
			walk := s.walk(t, a, b, cs, pathCS)
			if s.stopped {
				return Anomaly{}, false
			}
			if walk == nil {
				continue
			}
			if cyc := simpleCycle(&t, walk); cyc != nil {
				return s.explainCycle(t.name, cyc), true
			}
		}
	}
	return Anomaly{}, false
}

// walk is a shortest closed walk a -> b -> ... -> a of type t starting
// with the edge a -> b (by t.start), as hops from a, or nil.
func (s *sccSearch) walk(t cycleType, a, b int32, cs, pathCS *components) []hop {
	g := s.g
	st0, _ := t.step(0, t.start)
	for _, v := range s.touched {
		s.seen[v] = 0
	}
	s.touched = s.touched[:0]
	s.queue = append(s.queue[:0], bfsEntry{v: b, st: st0, rel: t.start, parent: -1})
	s.seen[b] |= 1 << st0
	s.touched = append(s.touched, b)
	lowest := int32(-1)
	if pathCS != nil {
		lowest = pathCS.comp[a]
	}
	for i := 0; i < len(s.queue); i++ {
		q := s.queue[i]
		if q.v == a {
			continue // a closes the cycle; walks do not go through it
		}
		for e := g.off[q.v]; e < g.off[q.v+1]; e++ {
			s.budget--
			if s.budget < 0 {
				s.stopped = true
				return nil
			}
			if s.budget&0xffff == 0 && s.c.expired() {
				s.stopped = true
				return nil
			}
			w := g.to[e]
			if cs.comp[w] != cs.comp[a] || w == b {
				continue
			}
			if lowest >= 0 && pathCS.comp[w] < lowest {
				continue
			}
			r := g.prim[e]
			st, ok := t.step(q.st, r)
			if !ok || s.seen[w]&(1<<st) != 0 {
				continue
			}
			if s.seen[w] == 0 {
				s.touched = append(s.touched, w)
			}
			s.seen[w] |= 1 << st
			s.queue = append(s.queue, bfsEntry{v: w, st: st, rel: r, parent: int32(i)})
			if w == a && t.accepts(st) {
				return s.path(len(s.queue)-1, a)
			}
		}
	}
	return nil
}

// path unwinds the queue from entry i back to the start: the hops from a.
func (s *sccSearch) path(i int, a int32) []hop {
	var rev []hop
	for ; i >= 0; i = int(s.queue[i].parent) {
		rev = append(rev, hop{s.queue[i].v, s.queue[i].rel})
	}
	slices.Reverse(rev)
	// rev runs b ... a; the cycle begins at a with the edge to b.
	return rev
}

// simpleCycle returns a simple cycle of type t within a closed walk (the
// walk itself when it repeats no vertex), or nil. A walk w[0..n-1] goes
// from the vertex before w[0] (its last vertex, w[n-1].v) to w[0].v, and
// on; a repeated vertex splits it into two shorter closed walks.
func simpleCycle(t *cycleType, w []hop) []hop {
	pos := map[int32]int{}
	for i, h := range w {
		if j, ok := pos[h.v]; ok {
			inner := slices.Clone(w[j+1 : i+1])
			outer := append(slices.Clone(w[:j+1]), w[i+1:]...)
			if c := simpleCycle(t, inner); c != nil {
				return c
			}
			return simpleCycle(t, outer)
		}
		pos[h.v] = i
	}
	if classify(w) == t.name {
		return w
	}
	return nil
}

// classify names a cycle by the relationships it takes, as Elle's cycle
// explainer does: its data type, with -realtime or -process when it takes
// those edges.
func classify(w []hop) string {
	var ww, wr, rw, process, realtime int
	adjacent := false
	for i, h := range w {
		switch h.rel {
		case relWW:
			ww++
		case relWR:
			wr++
		case relRW:
			rw++
			if prev := w[(i+len(w)-1)%len(w)]; prev.rel == relRW && len(w) > 1 {
				adjacent = true
			}
		case relProcess:
			process++
		case relRealtime:
			realtime++
		}
	}
	var name string
	switch {
	case rw == 1:
		name = "G-single-item"
	case rw > 1 && adjacent:
		name = "G2-item"
	case rw > 1:
		name = "G-nonadjacent-item"
	case wr > 0:
		name = "G1c"
	case ww > 0:
		name = "G0"
	default:
		return ""
	}
	switch {
	case realtime > 0:
		name += "-realtime"
	case process > 0:
		name += "-process"
	}
	return name
}

// explainCycle makes the anomaly of a cycle: its transactions and why each
// precedes the next, naming them T1, T2, ... in cycle order. The steps and
// the text are made only for the cycles a result keeps.
func (s *sccSearch) explainCycle(typ string, w []hop) Anomaly {
	c := s.c
	// The walk's hops end at w[i].v coming from the previous hop's vertex;
	// the cycle starts at the last vertex (a).
	n := len(w)
	verts := make([]int32, n)
	verts[0] = s.vs[w[n-1].v]
	for i := 0; i < n-1; i++ {
		verts[i+1] = s.vs[w[i].v]
	}
	a := Anomaly{Type: typ}
	for _, v := range verts {
		a.Cycle = append(a.Cycle, c.txnOf(v).op)
	}
	a.Cycle = append(a.Cycle, a.Cycle[0])
	rels := make([]uint8, n)
	for i := range w {
		rels[i] = w[i].rel
	}
	a.fill = func(a *Anomaly) {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("T%d", i+1)
		}
		var text strings.Builder
		text.WriteString("Let:\n")
		for i, v := range verts {
			fmt.Fprintf(&text, "  %s = %s\n", names[i], c.txnOf(v).op)
		}
		text.WriteString("\nThen:\n")
		for i := 0; i < n; i++ {
			st := c.explain(verts[i], verts[(i+1)%n], rels[i])
			st.Explanation = st.render(names[i], names[(i+1)%n])
			a.Steps = append(a.Steps, st)
			if i < n-1 {
				fmt.Fprintf(&text, "  - %s < %s, because %s.\n", names[i], names[(i+1)%n], st.Explanation)
			} else {
				fmt.Fprintf(&text, "  - However, %s < %s, because %s: a contradiction!", names[i], names[(i+1)%n], st.Explanation)
			}
		}
		a.Explanation = text.String()
	}
	return a
}
