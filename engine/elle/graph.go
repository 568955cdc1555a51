package elle

import (
	"slices"
	"strings"
)

// Relationships between transactions: why one must precede another. An
// edge holds a set of them.
const (
	relWW       uint8 = 1 << iota // write-write: b overwrote a's write
	relWR                         // write-read: b read a's write
	relRW                         // read-write: b overwrote what a read
	relProcess                    // a process ran a before b
	relRealtime                   // a completed before b was invoked

	relData = relWW | relWR | relRW
	relAll  = relData | relProcess | relRealtime
)

func relName(r uint8) string {
	switch r {
	case relWW:
		return "ww"
	case relWR:
		return "wr"
	case relRW:
		return "rw"
	case relProcess:
		return "process"
	case relRealtime:
		return "realtime"
	}
	var names []string
	for b := uint8(1); b != 0 && b <= relRealtime; b <<= 1 {
		if r&b != 0 {
			names = append(names, relName(b))
		}
	}
	return strings.Join(names, " ")
}

// graph is a directed graph in compressed sparse row form: the edges of
// vertex v are to[off[v]:off[v+1]], with their relationships in rel. Each
// pair of vertices has one edge at most, holding every relationship
// between them; there are no self-edges.
type graph struct {
	n   int
	off []int32
	to  []int32
	rel []uint8
	// prim is the relationship that explains each edge, when sub made the
	// graph: see primary.
	prim []uint8
}

// primary is the one relationship of a set that explains an edge, first
// in order: Elle explains an edge by the first of its explainers that can
// (list-append's ww, wr, rw; rw-register's wr, ww, rw; then process or
// real time), and names a cycle by the relationships so explained. A
// cycle search that takes only these finds the cycles Elle would name.
func primary(rels uint8, order []uint8) uint8 {
	for _, r := range order {
		if rels&r != 0 {
			return r
		}
	}
	return 0
}

func (g *graph) edges() int { return len(g.to) }

// builder collects edges, in any order and with repeats, for a graph.
type builder struct {
	from, to []int32
	rel      []uint8
}

func (b *builder) add(from, to int32, rel uint8) {
	if from == to {
		return // a transaction does not depend on itself
	}
	b.from = append(b.from, from)
	b.to = append(b.to, to)
	b.rel = append(b.rel, rel)
}

func (b *builder) len() int { return len(b.from) }

// build makes the graph of n vertices, merging repeated edges.
func (b *builder) build(n int) *graph {
	off := make([]int32, n+1)
	for _, f := range b.from {
		off[f+1]++
	}
	for i := 1; i <= n; i++ {
		off[i] += off[i-1]
	}
	// Each edge packed as target<<8 | rel, so that sorting a vertex's
	// edges groups those to the same target.
	packed := make([]uint64, len(b.from))
	next := slices.Clone(off[:n])
	for i, f := range b.from {
		packed[next[f]] = uint64(b.to[i])<<8 | uint64(b.rel[i])
		next[f]++
	}
	g := &graph{n: n, off: make([]int32, n+1)}
	g.to = make([]int32, 0, len(packed))
	g.rel = make([]uint8, 0, len(packed))
	for v := 0; v < n; v++ {
		es := packed[off[v]:off[v+1]]
		slices.Sort(es)
		for i, e := range es {
			t, r := int32(e>>8), uint8(e)
			if i > 0 && int32(es[i-1]>>8) == t {
				g.rel[len(g.rel)-1] |= r
				continue
			}
			g.to = append(g.to, t)
			g.rel = append(g.rel, r)
		}
		g.off[v+1] = int32(len(g.to))
	}
	return g
}

// relBetween is the relationships of the edge a -> b (0 if none).
func (g *graph) relBetween(a, b int32) uint8 {
	es := g.to[g.off[a]:g.off[a+1]]
	if i, ok := slices.BinarySearch(es, b); ok {
		return g.rel[int(g.off[a])+i]
	}
	return 0
}

// sub is the subgraph induced by vs (sorted), with vertex i of the
// result standing for vs[i]; local maps a vertex of g to its index in vs
// (-1 for others) and is restored before sub returns.
func (g *graph) sub(vs []int32, local []int32, order []uint8) *graph {
	for i, v := range vs {
		local[v] = int32(i)
	}
	s := &graph{n: len(vs), off: make([]int32, len(vs)+1)}
	for i, v := range vs {
		for e := g.off[v]; e < g.off[v+1]; e++ {
			if w := local[g.to[e]]; w >= 0 {
				s.to = append(s.to, w)
				s.rel = append(s.rel, g.rel[e])
				s.prim = append(s.prim, primary(g.rel[e], order))
			}
		}
		s.off[i+1] = int32(len(s.to))
	}
	for _, v := range vs {
		local[v] = -1
	}
	return s
}

// components are the strongly connected components of a graph restricted
// to some relationships.
type components struct {
	// comp is each vertex's component. Tarjan's algorithm numbers them in
	// reverse topological order: if a path leads from u to v, then
	// comp[u] >= comp[v].
	comp []int32
	size []int32
}

// nontrivial says whether c holds a cycle (more than one vertex: there are
// no self-edges).
func (cs *components) nontrivial(c int32) bool { return cs.size[c] > 1 }

// tarjan finds the strongly connected components of g over the edges
// whose relationships intersect mask, iteratively (histories make paths
// far deeper than a goroutine stack should hold).
func tarjan(g *graph, mask uint8) *components {
	n := g.n
	index := make([]int32, n)
	low := make([]int32, n)
	onStack := make([]bool, n)
	cs := &components{comp: make([]int32, n)}
	for i := range index {
		index[i] = -1
	}
	var stack []int32
	type frame struct {
		v int32
		e int32 // next edge to look at
	}
	var call []frame
	next := int32(0)
	for root := int32(0); root < int32(n); root++ {
		if index[root] >= 0 {
			continue
		}
		call = append(call[:0], frame{root, g.off[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			descended := false
			for f.e < g.off[v+1] {
				e := f.e
				f.e++
				if g.rel[e]&mask == 0 {
					continue
				}
				w := g.to[e]
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, g.off[w]})
					descended = true
					break
				}
				if onStack[w] && index[w] < low[v] {
					low[v] = index[w]
				}
			}
			if descended {
				continue
			}
			if low[v] == index[v] {
				c := int32(len(cs.size))
				size := int32(0)
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					cs.comp[w] = c
					size++
					if w == v {
						break
					}
				}
				cs.size = append(cs.size, size)
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if u := call[len(call)-1].v; low[v] < low[u] {
					low[u] = low[v]
				}
			}
		}
	}
	return cs
}

// extension is Elle's sequential extension A ∪ (A;B) of a graph, for the
// snapshot-isolation cycle checks: a walk through it takes B edges (rw)
// only right after an A edge. It is a graph of 2n vertices: 2v+1 is v
// reached by an A edge (B may follow), 2v is v reached otherwise.
func extension(g *graph, a, b uint8) *graph {
	x := &graph{n: 2 * g.n, off: make([]int32, 2*g.n+1)}
	for v := 0; v < g.n; v++ {
		for s := 0; s < 2; s++ {
			for e := g.off[v]; e < g.off[v+1]; e++ {
				w, r := g.to[e], g.rel[e]
				if r&a != 0 {
					x.to = append(x.to, 2*w+1)
					x.rel = append(x.rel, relAll)
				}
				if s == 1 && r&b != 0 {
					x.to = append(x.to, 2*w)
					x.rel = append(x.rel, relAll)
				}
			}
			x.off[2*v+s+1] = int32(len(x.to))
		}
	}
	return x
}
