package elle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// laKey is what a list-append check knows of one key.
type laKey struct {
	key Value
	// appender maps each appended element to the transaction (index in
	// checker.all, of any type) that appended it.
	appender map[Value]int32
	// intermediate maps an element appended and then followed by another
	// append to the key in the same transaction, to that transaction.
	intermediate map[Value]int32
	hasFailed    bool // some failed transaction appended to the key

	// The version order: the longest read of the key (every read should
	// be a prefix of it), and each element's position in it.
	longest []Value
	pos     map[Value]int32
	// distinct says longest holds no element twice.
	distinct bool
	// garbageAt is the first position of longest that no one appended
	// (len(longest) if none).
	garbageAt int
	// readers maps a state of the key, by its last element, to the
	// transactions (vertices) that read it; initReaders read it empty.
	readers     map[Value][]int32
	initReaders []int32

	appends      int   // appends by ok and info transactions
	single       Value // the one such append, when appends == 1
	incompatible bool  // some read is not a prefix of longest
}

// prev is the element appended just before v to the key, in the version
// order; init says v came first. An element no read shows still came
// after everything the longest read shows.
func (k *laKey) prev(v Value) (p Value, init bool) {
	if i, ok := k.pos[v]; ok {
		if i == 0 {
			return Value{}, true
		}
		return k.longest[i-1], false
	}
	if len(k.longest) == 0 {
		return Value{}, true
	}
	return k.longest[len(k.longest)-1], false
}

// observed says whether a read showed v.
func (k *laKey) observed(v Value) bool {
	_, ok := k.pos[v]
	return ok
}

// listAppend analyzes a list-append history: the anomalies seen without
// cycles, and the ww, wr and rw edges of the version orders that the
// reads show.
func (c *checker) listAppend() error {
	keys := map[Value]*laKey{}
	key := func(v Value) *laKey {
		k := keys[v]
		if k == nil {
			k = &laKey{key: v, appender: map[Value]int32{}, readers: map[Value][]int32{}}
			keys[v] = k
		}
		return k
	}
	// Who appended what: every appended value must be unique per key.
	for i := range c.all {
		t := &c.all[i]
		mops := t.op.Value
		for j, m := range mops {
			if m.F != Append {
				continue
			}
			k := key(m.Key)
			if first, dup := k.appender[m.Value]; dup {
				return fmt.Errorf("%s: value[%d]: %v is appended to key %v a second time (first by the transaction at %s): a list-append history needs each appended value unique per key",
					c.where(t.op), j, m.Value, m.Key, c.where(c.all[first].op))
			}
			k.appender[m.Value] = int32(i)
			if t.op.Type == Fail {
				k.hasFailed = true
			} else {
				k.appends++
				k.single = m.Value
			}
			for _, later := range mops[j+1:] {
				if later.F == Append && later.Key == m.Key {
					if k.intermediate == nil {
						k.intermediate = map[Value]int32{}
					}
					k.intermediate[m.Value] = int32(i)
					break
				}
			}
		}
	}
	// The longest read of each key, and who read each state.
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		for _, m := range t.op.Value {
			if m.F != Read {
				continue
			}
			k := key(m.Key)
			if len(m.List) == 0 {
				// An info's nil read is a read not known, not the empty
				// list.
				if !(m.Nil && t.op.Type == Info) {
					k.initReaders = append(k.initReaders, int32(v))
				}
				continue
			}
			if len(m.List) > len(k.longest) || len(m.List) == len(k.longest) && compareLists(m.List, k.longest) > 0 {
				k.longest = m.List
			}
			last := m.List[len(m.List)-1]
			k.readers[last] = append(k.readers[last], int32(v))
		}
	}
	var order []*laKey
	for _, k := range keys {
		order = append(order, k)
	}
	slices.SortFunc(order, func(a, b *laKey) int { return CompareValues(a.key, b.key) })
	for _, k := range order {
		// One append and no read: the order is still known.
		if len(k.longest) == 0 && k.appends == 1 {
			k.longest = []Value{k.single}
		}
		k.pos = make(map[Value]int32, len(k.longest))
		for i, e := range k.longest {
			if _, ok := k.pos[e]; !ok {
				k.pos[e] = int32(i)
			}
		}
		k.distinct = len(k.pos) == len(k.longest)
		k.garbageAt = len(k.longest)
		for i, e := range k.longest {
			if _, ok := k.appender[e]; !ok {
				k.garbageAt = i
				break
			}
		}
	}
	if c.expired() {
		return nil
	}
	c.laReads(keys, order)
	c.laInternal()
	c.laDirtyUpdates(order)
	c.lostUpdates(Append)
	c.laEdges(keys)
	c.explainData = func(a, b int32, rel uint8) Step { return c.laExplain(keys, a, b, rel) }
	return nil
}

// laReads finds the anomalies of single reads: incompatible orders,
// duplicates, aborted (G1a), intermediate (G1b) and garbage reads.
func (c *checker) laReads(keys map[Value]*laKey, order []*laKey) {
	incompatible := map[*laKey][][]Value{}
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		for j := range t.op.Value {
			m := &t.op.Value[j]
			if m.F != Read || len(m.List) == 0 {
				continue
			}
			k := keys[m.Key]
			prefix := isPrefix(m.List, k.longest)
			if !prefix {
				k.incompatible = true
				incompatible[k] = append(incompatible[k], m.List)
			}
			if !prefix || !k.distinct {
				c.laDuplicates(t, m)
			}
			if t.op.Type != OK {
				continue
			}
			if k.hasFailed {
				for _, e := range m.List {
					if w, ok := k.appender[e]; ok && c.all[w].op.Type == Fail && c.keep("G1a") {
						e := e
						c.put(Anomaly{Type: "G1a", Op: t.op, Mop: m, Writer: c.all[w].op, Elem: &e,
							Explanation: fmt.Sprintf("%s read key %v = %s, which holds %v, appended by a transaction that failed (an aborted read): %s",
								opName(t.op), m.Key, listString(m.List), e, c.all[w].op)})
					}
				}
			}
			last := m.List[len(m.List)-1]
			if w, ok := k.intermediate[last]; ok && c.all[w].op != t.op && c.keep("G1b") {
				c.put(Anomaly{Type: "G1b", Op: t.op, Mop: m, Writer: c.all[w].op, Elem: &last,
					Explanation: fmt.Sprintf("%s read key %v = %s, whose last element %v was not the final append to key %v of the transaction that appended it (an intermediate read): %s",
						opName(t.op), m.Key, listString(m.List), last, m.Key, c.all[w].op)})
			}
			if !prefix || len(m.List) > k.garbageAt {
				for _, e := range m.List {
					if _, ok := k.appender[e]; !ok {
						if !c.keep("garbage-read") {
							break
						}
						e := e
						c.put(Anomaly{Type: "garbage-read", Op: t.op, Mop: m, Elem: &e,
							Explanation: fmt.Sprintf("%s read key %v = %s, but no transaction appended %v to key %v (a garbage read)",
								opName(t.op), m.Key, listString(m.List), e, m.Key)})
						break
					}
				}
			}
		}
	}
	for _, k := range order {
		reads := incompatible[k]
		if reads == nil {
			continue
		}
		// Elle's check: sort the distinct reads by length, and each must be
		// a prefix of the next.
		reads = append(reads, k.longest)
		slices.SortFunc(reads, compareLists)
		reads = slices.CompactFunc(reads, func(a, b []Value) bool { return compareLists(a, b) == 0 })
		for i := 1; i < len(reads); i++ {
			a, b := reads[i-1], reads[i]
			if !isPrefix(a, b) {
				c.add(Anomaly{Type: "incompatible-order", Key: &k.key, Values: rawJSON([]json.RawMessage{listJSON(a), listJSON(b)}),
					Explanation: fmt.Sprintf("key %v was read as %s and as %s: no one order of appends gives both",
						k.key, listString(a), listString(b))})
				break
			}
		}
	}
}

// laDuplicates reports a read that holds an element more than once.
func (c *checker) laDuplicates(t *txn, m *Mop) {
	count := map[Value]int{}
	for _, e := range m.List {
		count[e]++
	}
	var dups []Duplicate
	for e, n := range count {
		if n > 1 {
			dups = append(dups, Duplicate{e, n})
		}
	}
	if dups == nil || !c.keep("duplicate-elements") {
		return
	}
	slices.SortFunc(dups, func(a, b Duplicate) int { return CompareValues(a.Element, b.Element) })
	var said []string
	for _, d := range dups {
		said = append(said, fmt.Sprintf("%v %d times", d.Element, d.Count))
	}
	c.put(Anomaly{Type: "duplicate-elements", Op: t.op, Mop: m, Duplicates: dups,
		Explanation: fmt.Sprintf("%s read key %v = %s, which holds %s, though each value is appended once",
			opName(t.op), m.Key, listString(m.List), strings.Join(said, " and "))})
}

// laInternal finds transactions inconsistent with themselves: a read that
// disagrees with the transaction's own earlier reads and appends
// (internal), or that shows an element the transaction appends only later
// (future-read). Each transaction is reported once for each, as Elle does.
func (c *checker) laInternal() {
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type != OK {
			continue
		}
		if a, ok := laInternalCase(t.op); ok {
			c.add(a)
		}
		if a, ok := laFutureRead(t.op); ok {
			c.add(a)
		}
	}
}

func laInternalCase(op *Op) (Anomaly, bool) {
	type state struct {
		key Value
		// vals is what the key holds; when suffix, only its end is known
		// (the transaction appended without reading first).
		vals   []Value
		suffix bool
	}
	var states []state
	find := func(k Value) *state {
		for i := range states {
			if states[i].key == k {
				return &states[i]
			}
		}
		return nil
	}
	for j := range op.Value {
		m := &op.Value[j]
		s := find(m.Key)
		switch {
		case m.F == Append && s == nil:
			states = append(states, state{key: m.Key, vals: []Value{m.Value}, suffix: true})
		case m.F == Append:
			s.vals = append(slices.Clip(s.vals), m.Value)
		case s == nil:
			states = append(states, state{key: m.Key, vals: m.List})
		default:
			var bad bool
			if s.suffix {
				bad = len(m.List) < len(s.vals) || !slices.Equal(m.List[len(m.List)-len(s.vals):], s.vals)
			} else {
				bad = !slices.Equal(m.List, s.vals)
			}
			if !bad {
				s.vals, s.suffix = m.List, false
				continue
			}
			exp, vals, suffix := listJSON(s.vals), s.vals, s.suffix
			if suffix {
				exp = append([]byte(`["...",`), exp[1:]...)
			}
			said := func() string {
				if suffix {
					return "a list ending in " + strings.Trim(listString(vals), "[]")
				}
				return listString(vals)
			}
			return Anomaly{Type: "internal", Op: op, Mop: m, Expected: exp,
				fill: func(a *Anomaly) {
					a.Explanation = fmt.Sprintf("%s read key %v = %s, but its own earlier reads and appends say it holds %s",
						opName(op), m.Key, listString(m.List), said())
				}}, true
		}
	}
	return Anomaly{}, false
}

func laFutureRead(op *Op) (Anomaly, bool) {
	mops := op.Value
	for j := range mops {
		m := &mops[j]
		if m.F != Append {
			continue
		}
		for i := 0; i < j; i++ {
			r := &mops[i]
			if r.F == Read && r.Key == m.Key && slices.Contains(r.List, m.Value) {
				e := m.Value
				return Anomaly{Type: "future-read", Op: op, Mop: r, Elem: &e,
					fill: func(a *Anomaly) {
						a.Explanation = fmt.Sprintf("%s read key %v = %s, which holds %v, an element it appends only later (a future read)",
							opName(op), r.Key, listString(r.List), e)
					}}, true
			}
		}
	}
	return Anomaly{}, false
}

// laDirtyUpdates finds committed appends that follow aborted ones in a
// key's version order: a failed transaction's state promoted into
// committed state.
func (c *checker) laDirtyUpdates(order []*laKey) {
	for _, k := range order {
		// Elle's walk: t1 is the writer of the last known state, vs the
		// versions since the last committed one.
		t1 := OK
		var t1op *Op
		var vs []Value
		for _, e := range k.longest {
			w, ok := k.appender[e]
			t2 := Info // no one appended it: not known to have happened
			var t2op *Op
			if ok {
				t2op = c.all[w].op
				t2 = t2op.Type
			}
			switch {
			case t2 == OK && t1 == Fail:
				vals := append(slices.Clone(vs), e)
				c.add(Anomaly{Type: "dirty-update", Key: &k.key, Values: listJSON(vals), Txns: []*Op{t1op, t2op},
					Explanation: fmt.Sprintf("key %v's version order holds %s: %v was appended by a transaction that failed, and %v, after it, by one that committed: %s then %s",
						k.key, listString(vals), vals[0], e, t1op, t2op)})
				t1, t1op, vs = t2, t2op, []Value{e}
			case t2 == Fail && t1 == Fail:
				vs = append(vs, e) // cover the whole aborted range
			case t2 == OK || t2 == Fail:
				t1, t1op, vs = t2, t2op, []Value{e}
			default: // an info: it may not have happened; keep the range
				vs = append(vs, e)
			}
		}
	}
}

// laEdges adds the dependencies the version orders show.
func (c *checker) laEdges(keys map[Value]*laKey) {
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		for _, m := range t.op.Value {
			k := keys[m.Key]
			switch m.F {
			case Append:
				p, init := k.prev(m.Value)
				readers := k.initReaders
				if !init {
					readers = k.readers[p]
					if w, ok := k.appender[p]; ok && c.vof[w] >= 0 {
						c.b.add(c.vof[w], int32(v), relWW)
					}
				}
				for _, r := range readers {
					c.b.add(r, int32(v), relRW)
				}
			case Read:
				if len(m.List) == 0 {
					continue
				}
				if w, ok := k.appender[m.List[len(m.List)-1]]; ok && c.vof[w] >= 0 {
					c.b.add(c.vof[w], int32(v), relWR)
				}
			}
		}
	}
}

// laExplain says why vertex a precedes b by a data relationship.
func (c *checker) laExplain(keys map[Value]*laKey, a, b int32, rel uint8) Step {
	ta, tb := c.txnOf(a), c.txnOf(b)
	appendIndex := func(op *Op, key, v Value) int {
		return slices.IndexFunc(op.Value, func(m Mop) bool { return m.F == Append && m.Key == key && m.Value == v })
	}
	for j, m := range tb.op.Value {
		k := keys[m.Key]
		switch {
		case rel == relWW && m.F == Append:
			p, init := k.prev(m.Value)
			if init {
				continue
			}
			if w, ok := k.appender[p]; !ok || c.vof[w] != a {
				continue
			}
			st := Step{Type: "ww", Key: m.Key, Value: p, Value2: m.Value, HasValue2: true, AMop: appendIndex(ta.op, m.Key, p), BMop: j}
			why := fmt.Sprintf("the longest read of key %v shows %v then %v", m.Key, p, m.Value)
			if !k.observed(m.Value) {
				why = fmt.Sprintf("no read shows %v, so it came after %v, the last element of the longest read of key %v", m.Value, p, m.Key)
			}
			st.render = func(an, bn string) string {
				return fmt.Sprintf("%s appended %v to key %v after %s appended %v (ww: %s)", bn, m.Value, m.Key, an, p, why)
			}
			return st
		case rel == relWR && m.F == Read && len(m.List) > 0:
			last := m.List[len(m.List)-1]
			if w, ok := k.appender[last]; !ok || c.vof[w] != a {
				continue
			}
			st := Step{Type: "wr", Key: m.Key, Value: last, AMop: appendIndex(ta.op, m.Key, last), BMop: j}
			st.render = func(an, bn string) string {
				return fmt.Sprintf("%s read key %v = %s, which ends with %s's append of %v (wr)", bn, m.Key, listString(m.List), an, last)
			}
			return st
		case rel == relRW && m.F == Append:
			p, init := k.prev(m.Value)
			readers := k.initReaders
			if !init {
				readers = k.readers[p]
			}
			if !slices.Contains(readers, a) {
				continue
			}
			ai := slices.IndexFunc(ta.op.Value, func(r Mop) bool {
				if r.F != Read || r.Key != m.Key {
					return false
				}
				if init {
					return len(r.List) == 0
				}
				return len(r.List) > 0 && r.List[len(r.List)-1] == p
			})
			st := Step{Type: "rw", Key: m.Key, Value: p, ValueNil: init, Value2: m.Value, HasValue2: true, AMop: ai, BMop: j}
			read := "[]"
			if ai >= 0 {
				read = listString(ta.op.Value[ai].List)
			}
			var why string
			switch {
			case !k.observed(m.Value) && init:
				why = fmt.Sprintf("no read shows %v, so it came after the initial state", m.Value)
			case !k.observed(m.Value):
				why = fmt.Sprintf("no read shows %v, so it came after %v, the last element of the longest read of key %v", m.Value, p, m.Key)
			case init:
				why = fmt.Sprintf("%v is the first element of the longest read of key %v", m.Value, m.Key)
			default:
				why = fmt.Sprintf("the longest read of key %v shows %v then %v", m.Key, p, m.Value)
			}
			st.render = func(an, bn string) string {
				return fmt.Sprintf("%s read key %v = %s and did not see %s's append of %v, which came next (rw: %s)", an, m.Key, read, bn, m.Value, why)
			}
			return st
		}
	}
	return unexplained(rel)
}

// opName names a transaction in a single-transaction explanation.
func opName(op *Op) string {
	return fmt.Sprintf("the transaction at index %d (process %d)", op.Index, op.Process)
}
