package elle

import (
	"fmt"
	"slices"
	"strings"
)

// Where a version order edge of a register comes from (Elle's sources),
// in the order they are tried.
const (
	srcInitial = iota
	srcWFR
	srcSequential
	srcLinearizable
)

var sourceNames = []string{"initial-state", "wfr-keys", "sequential-keys", "linearizable-keys"}

// extMop is a transaction's external read or write of a key: its first
// read (if it read before writing) or its last write.
type extMop struct {
	key   Value
	value Value
	isNil bool
	mop   int // index in the transaction
}

// extReads are the keys a transaction read before writing them, with what
// it read first; extWrites the keys it wrote, with what it wrote last.
func extReads(op *Op) []extMop {
	var rs []extMop
	var seen []Value
	for j, m := range op.Value {
		if slices.Contains(seen, m.Key) {
			continue
		}
		seen = append(seen, m.Key)
		if m.F == Read {
			rs = append(rs, extMop{m.Key, m.Value, m.Nil, j})
		}
	}
	return rs
}

func extWrites(op *Op) []extMop {
	var ws []extMop
	for j, m := range op.Value {
		if m.F != Write {
			continue
		}
		if i := slices.IndexFunc(ws, func(w extMop) bool { return w.key == m.Key }); i >= 0 {
			ws[i] = extMop{m.Key, m.Value, false, j}
		} else {
			ws = append(ws, extMop{m.Key, m.Value, false, j})
		}
	}
	return ws
}

func findExt(es []extMop, k Value) (extMop, bool) {
	for _, e := range es {
		if e.key == k {
			return e, true
		}
	}
	return extMop{}, false
}

// rwKey is what an rw-register check knows of one key.
type rwKey struct {
	key Value
	// Versions are numbered per key: 0 is nil, the initial state.
	ids  map[Value]int32
	vals []Value
	// writer maps a value to the transaction (index in checker.all) that
	// wrote it; intermediate, to one that wrote it and then wrote the key
	// again.
	writer       map[Value]int32
	intermediate map[Value]int32
	// extWriter maps a version to the committed transaction (vertex)
	// that wrote it last; readers to those that read it first.
	extWriter map[int32]int32
	readers   map[int32][]int32
	// The version order: edges v1 -> v2, each with its source.
	order map[[2]int32]int
	edges [][2]int32
}

func (k *rwKey) id(v Value, isNil bool) int32 {
	if isNil {
		return 0
	}
	if id, ok := k.ids[v]; ok {
		return id
	}
	id := int32(len(k.vals))
	k.ids[v] = id
	k.vals = append(k.vals, v)
	return id
}

// versionString names a version of the key.
func (k *rwKey) versionString(id int32) string {
	if id == 0 {
		return "nil"
	}
	return k.vals[id].String()
}

func (k *rwKey) versionJSON(id int32) []byte {
	if id == 0 {
		return []byte("null")
	}
	b, _ := k.vals[id].MarshalJSON()
	return b
}

// rwRegister analyzes an rw-register history: the anomalies seen without
// cycles, wr edges from reads of unique writes, and ww and rw edges from
// the version orders that the initial state (and the options' assumptions)
// give.
func (c *checker) rwRegister() error {
	keys := map[Value]*rwKey{}
	var order []*rwKey
	key := func(v Value) *rwKey {
		k := keys[v]
		if k == nil {
			k = &rwKey{key: v, ids: map[Value]int32{}, vals: []Value{{}}, writer: map[Value]int32{},
				extWriter: map[int32]int32{}, readers: map[int32][]int32{}, order: map[[2]int32]int{}}
			keys[v] = k
			order = append(order, k)
		}
		return k
	}
	for i := range c.all {
		t := &c.all[i]
		mops := t.op.Value
		for j, m := range mops {
			k := key(m.Key)
			if m.F != Write {
				continue
			}
			if first, dup := k.writer[m.Value]; dup {
				return fmt.Errorf("%s: value[%d]: %v is written to key %v a second time (first by the transaction at %s): an rw-register history needs each written value unique per key",
					c.where(t.op), j, m.Value, m.Key, c.where(c.all[first].op))
			}
			k.writer[m.Value] = int32(i)
			if slices.ContainsFunc(mops[j+1:], func(l Mop) bool { return l.F == Write && l.Key == m.Key }) {
				if k.intermediate == nil {
					k.intermediate = map[Value]int32{}
				}
				k.intermediate[m.Value] = int32(i)
			}
		}
	}
	slices.SortFunc(order, func(a, b *rwKey) int { return CompareValues(a.key, b.key) })
	for _, k := range order {
		// Number the written values in the order of the key's values, so
		// that nothing depends on map order.
		var vs []Value
		for v := range k.writer {
			vs = append(vs, v)
		}
		slices.SortFunc(vs, CompareValues)
		for _, v := range vs {
			k.id(v, false)
		}
	}
	// The external reads and writes of each transaction.
	ext := make([][2][]extMop, len(c.vtx))
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type == OK {
			ext[v][0] = extReads(t.op)
		}
		ext[v][1] = extWrites(t.op)
		if t.op.Type != OK {
			continue
		}
		for _, r := range ext[v][0] {
			k := keys[r.key]
			id := k.id(r.value, r.isNil)
			k.readers[id] = append(k.readers[id], int32(v))
		}
		for _, w := range ext[v][1] {
			k := keys[w.key]
			k.extWriter[k.id(w.value, false)] = int32(v)
		}
	}
	c.rwSingles(keys)
	c.lostUpdates(Write)
	if c.expired() {
		return nil
	}
	// wr: a committed read of a value a committed transaction wrote last.
	for v := range c.vtx {
		for _, r := range ext[v][0] {
			if r.isNil {
				continue
			}
			k := keys[r.key]
			if w, ok := k.extWriter[k.id(r.value, false)]; ok {
				c.b.add(w, int32(v), relWR)
			}
		}
	}
	c.versionOrders(keys, order, ext)
	// ww and rw, from each edge v1 -> v2 of a version order.
	for _, k := range order {
		for _, e := range k.edges {
			w2, ok := k.extWriter[e[1]]
			if !ok {
				continue
			}
			if w1, ok := k.extWriter[e[0]]; ok {
				c.b.add(w1, w2, relWW)
			}
			for _, r := range k.readers[e[0]] {
				c.b.add(r, w2, relRW)
			}
		}
	}
	c.explainData = func(a, b int32, rel uint8) Step { return c.rwExplain(keys, ext, a, b, rel) }
	return nil
}

// rwSingles finds the anomalies of single transactions and reads:
// internal inconsistencies, aborted reads (G1a), intermediate reads (G1b).
func (c *checker) rwSingles(keys map[Value]*rwKey) {
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type != OK {
			continue
		}
		if a, ok := rwInternalCase(t.op); ok {
			c.add(a)
		}
		for j := range t.op.Value {
			m := &t.op.Value[j]
			if m.F != Read || m.Nil {
				continue
			}
			k := keys[m.Key]
			w, ok := k.writer[m.Value]
			if ok && c.all[w].op.Type == Fail && c.keep("G1a") {
				c.put(Anomaly{Type: "G1a", Op: t.op, Mop: m, Writer: c.all[w].op,
					Explanation: fmt.Sprintf("%s read key %v = %v, written by a transaction that failed (an aborted read): %s",
						opName(t.op), m.Key, m.Value, c.all[w].op)})
			}
			if w, ok := k.intermediate[m.Value]; ok && c.all[w].op != t.op && c.keep("G1b") {
				c.put(Anomaly{Type: "G1b", Op: t.op, Mop: m, Writer: c.all[w].op,
					Explanation: fmt.Sprintf("%s read key %v = %v, which the transaction that wrote it overwrote before it committed (an intermediate read): %s",
						opName(t.op), m.Key, m.Value, c.all[w].op)})
			}
		}
	}
}

// rwInternalCase is a read that disagrees with the transaction's own
// earlier read or write of the key.
func rwInternalCase(op *Op) (Anomaly, bool) {
	type state struct {
		key   Value
		value Value
		isNil bool
	}
	var states []state
	for j := range op.Value {
		m := &op.Value[j]
		i := slices.IndexFunc(states, func(s state) bool { return s.key == m.Key })
		if m.F == Write {
			if i < 0 {
				states = append(states, state{m.Key, m.Value, false})
			} else {
				states[i] = state{m.Key, m.Value, false}
			}
			continue
		}
		if i < 0 {
			states = append(states, state{m.Key, m.Value, m.Nil})
			continue
		}
		s := states[i]
		if s.isNil == m.Nil && (s.isNil || s.value == m.Value) {
			continue
		}
		return Anomaly{Type: "internal", Op: op, Mop: m, Expected: valueJSON(s.value, s.isNil),
			fill: func(a *Anomaly) {
				a.Explanation = fmt.Sprintf("%s read key %v = %s, but its own earlier read or write says %s",
					opName(op), m.Key, valueString(m.Value, m.Nil), valueString(s.value, s.isNil))
			}}, true
	}
	return Anomaly{}, false
}

// versionOrders infers each key's version order from the sources in turn
// (Elle's): the initial state, and as the options allow, writes that follow
// reads, process order and real-time order. A source whose edges would
// make some key's order cyclic is left out, and the cycles reported as
// cyclic-versions.
func (c *checker) versionOrders(keys map[Value]*rwKey, order []*rwKey, ext [][2][]extMop) {
	var used []string
	for src, on := range []bool{true, c.opts.WFRKeys, c.opts.SequentialKeys, c.opts.LinearizableKeys} {
		if !on {
			continue
		}
		add := map[*rwKey][][2]int32{}
		edge := func(k *rwKey, a, b int32) {
			if a != b {
				add[k] = append(add[k], [2]int32{a, b})
			}
		}
		switch src {
		case srcInitial:
			// nil precedes every value: those written (by committed or
			// crashed transactions) and those committed ones read.
			for v := range c.vtx {
				if c.txnOf(int32(v)).op.Type == OK {
					for _, r := range ext[v][0] {
						k := keys[r.key]
						edge(k, 0, k.id(r.value, r.isNil))
					}
				}
				for _, w := range ext[v][1] {
					k := keys[w.key]
					edge(k, 0, k.id(w.value, false))
				}
			}
		case srcWFR:
			for v := range c.vtx {
				if c.txnOf(int32(v)).op.Type != OK {
					continue
				}
				for _, r := range ext[v][0] {
					if w, ok := findExt(ext[v][1], r.key); ok && !r.isNil {
						k := keys[r.key]
						edge(k, k.id(r.value, false), k.id(w.value, false))
					}
				}
			}
		case srcSequential:
			c.sequentialVersions(keys, ext, edge)
		case srcLinearizable:
			c.linearizableVersions(keys, ext, edge)
		}
		name := sourceNames[src]
		// Would these edges make an order cyclic?
		var cyclic []Anomaly
		for _, k := range order {
			if len(add[k]) == 0 {
				continue
			}
			for _, scc := range versionCycles(len(k.vals), k.edges, add[k]) {
				var vals [][]byte
				var said []string
				for _, id := range scc {
					vals = append(vals, k.versionJSON(id))
					said = append(said, k.versionString(id))
				}
				key := k.key
				sources := append(slices.Clone(used), name)
				cyclic = append(cyclic, Anomaly{Type: "cyclic-versions", Key: &key, SCC: []byte("[" + string(joinBytes(vals)) + "]"), Sources: sources,
					Explanation: fmt.Sprintf("the version order of key %v that %s give is cyclic: %s each come before one another; the order from %s is left out",
						key, strings.Join(sources, ", "), strings.Join(said, ", "), name)})
			}
		}
		if cyclic != nil {
			for _, a := range cyclic {
				c.add(a)
			}
			continue
		}
		used = append(used, name)
		for _, k := range order {
			for _, e := range add[k] {
				if _, ok := k.order[e]; !ok {
					k.order[e] = src
					k.edges = append(k.edges, e)
				}
			}
		}
	}
}

func joinBytes(bs [][]byte) []byte {
	var out []byte
	for i, b := range bs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, b...)
	}
	return out
}

// versionCycles are the cycles (components of more than one version, each
// sorted, nil first) of a key's version order with more edges added.
func versionCycles(n int, edges, more [][2]int32) [][]int32 {
	var b builder
	for _, e := range edges {
		b.add(e[0], e[1], relWW)
	}
	for _, e := range more {
		b.add(e[0], e[1], relWW)
	}
	g := b.build(n)
	cs := tarjan(g, relAll)
	byComp := map[int32][]int32{}
	var comps []int32
	for v := int32(0); v < int32(n); v++ {
		k := cs.comp[v]
		if !cs.nontrivial(k) {
			continue
		}
		if _, ok := byComp[k]; !ok {
			comps = append(comps, k)
		}
		byComp[k] = append(byComp[k], v)
	}
	var out [][]int32
	for _, k := range comps {
		out = append(out, byComp[k])
	}
	return out
}

// lastVersion is the version of a key a committed transaction left: what
// it wrote last, else what it read.
func lastVersion(k *rwKey, e [2][]extMop) (int32, bool) {
	if w, ok := findExt(e[1], k.key); ok {
		return k.id(w.value, false), true
	}
	if r, ok := findExt(e[0], k.key); ok {
		return k.id(r.value, r.isNil), true
	}
	return 0, false
}

// firstVersion is the version of a key a transaction first saw: what it
// read (unless nil), else what it wrote, else nil (a read of nil); a
// crashed transaction only by what it wrote.
func firstVersion(k *rwKey, e [2][]extMop, ok bool) (int32, bool) {
	r, read := findExt(e[0], k.key)
	if ok && read && !r.isNil {
		return k.id(r.value, false), true
	}
	if w, wrote := findExt(e[1], k.key); wrote {
		return k.id(w.value, false), true
	}
	if ok && read {
		return 0, true
	}
	return 0, false
}

// touched lists the keys a transaction read or wrote externally.
func touched(e [2][]extMop) []Value {
	var ks []Value
	for _, x := range e[0] {
		ks = append(ks, x.key)
	}
	for _, x := range e[1] {
		if !slices.Contains(ks, x.key) {
			ks = append(ks, x.key)
		}
	}
	return ks
}

// sequentialVersions: a process's committed transactions see each key's
// versions in order, so what one left precedes what the next to touch the
// key saw first.
func (c *checker) sequentialVersions(keys map[Value]*rwKey, ext [][2][]extMop, edge func(*rwKey, int32, int32)) {
	type pk struct {
		process int64
		key     Value
	}
	last := map[pk]int32{}
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type != OK {
			continue
		}
		for _, kv := range touched(ext[v]) {
			k := keys[kv]
			id := pk{t.op.Process, kv}
			if prev, ok := last[id]; ok {
				if first, ok := firstVersion(k, ext[v], true); ok {
					edge(k, prev, first)
				}
			}
			if lv, ok := lastVersion(k, ext[v]); ok {
				last[id] = lv
			}
		}
	}
}

// linearizableVersions: transactions ordered in real time see each key's
// versions in that order. As with the realtime graph, each committed
// transaction that touched a key is linked to the transactions touching it
// invoked after it completed, until one of those completes.
func (c *checker) linearizableVersions(keys map[Value]*rwKey, ext [][2][]extMop, edge func(*rwKey, int32, int32)) {
	events := c.realtimeEvents()
	type vk struct {
		v   int32
		key Value
	}
	buffer := map[Value][]int32{} // per key: completed transactions not implied by a later one
	preds := map[vk][]int32{}
	for _, e := range events {
		t := c.txnOf(e.v)
		ok := t.op.Type == OK
		for _, kv := range touched(ext[e.v]) {
			k := keys[kv]
			if e.invoke {
				first, has := firstVersion(k, ext[e.v], ok)
				if !has {
					continue
				}
				for _, u := range buffer[kv] {
					if lv, has := lastVersion(k, ext[u]); has {
						edge(k, lv, first)
					}
				}
				if len(buffer[kv]) > 0 {
					preds[vk{e.v, kv}] = slices.Clone(buffer[kv])
				}
				continue
			}
			p := preds[vk{e.v, kv}]
			delete(preds, vk{e.v, kv})
			buffer[kv] = append(slices.DeleteFunc(buffer[kv], func(u int32) bool { return slices.Contains(p, u) }), e.v)
		}
	}
}

// rwExplain says why vertex a precedes b by a data relationship.
func (c *checker) rwExplain(keys map[Value]*rwKey, ext [][2][]extMop, a, b int32, rel uint8) Step {
	why := func(k *rwKey, v1, v2 int32) string {
		switch k.order[[2]int32{v1, v2}] {
		case srcInitial:
			return "every value comes after the initial nil"
		case srcWFR:
			return fmt.Sprintf("a transaction read %s and then wrote %s (writes follow reads)", k.versionString(v1), k.versionString(v2))
		case srcSequential:
			return fmt.Sprintf("a process saw %s and later %s (sequential keys)", k.versionString(v1), k.versionString(v2))
		}
		return fmt.Sprintf("a transaction that saw %s completed before one that saw %s began (linearizable keys)", k.versionString(v1), k.versionString(v2))
	}
	switch rel {
	case relWR:
		for _, w := range ext[a][1] {
			if r, ok := findExt(ext[b][0], w.key); ok && !r.isNil && r.value == w.value {
				v := w.value
				return Step{Type: "wr", Key: w.key, Value: v, AMop: w.mop, BMop: r.mop, render: func(an, bn string) string {
					return fmt.Sprintf("%s read key %v = %v, which %s wrote (wr)", bn, w.key, v, an)
				}}
			}
		}
	case relWW, relRW:
		from := ext[a][1]
		if rel == relRW {
			from = ext[a][0]
		}
		for _, x := range from {
			k := keys[x.key]
			w, ok := findExt(ext[b][1], x.key)
			if !ok {
				continue
			}
			v1, v2 := k.id(x.value, x.isNil), k.id(w.value, false)
			if _, ok := k.order[[2]int32{v1, v2}]; !ok {
				continue
			}
			because := why(k, v1, v2)
			st := Step{Type: relName(rel), Key: x.key, Value: x.value, ValueNil: x.isNil, Value2: w.value, HasValue2: true, AMop: x.mop, BMop: w.mop}
			s1, s2 := k.versionString(v1), k.versionString(v2)
			if rel == relWW {
				st.render = func(an, bn string) string {
					return fmt.Sprintf("%s wrote key %v = %s and %s wrote it = %s, which came later in the version order (ww: %s)", an, x.key, s1, bn, s2, because)
				}
			} else {
				st.render = func(an, bn string) string {
					return fmt.Sprintf("%s read key %v = %s and %s wrote it = %s, which came later in the version order (rw: %s)", an, x.key, s1, bn, s2, because)
				}
			}
			return st
		}
	}
	return unexplained(rel)
}
