package elle

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// lostUpdates finds Elle's lost updates: committed transactions that read
// the same value of a key and then each wrote (or appended to) it. Each
// wrote on the basis of a state the other overwrote, so one update is lost
// whatever the order; the version orders need not show it.
func (c *checker) lostUpdates(write MopKind) {
	type readOf struct {
		key   Value
		isNil bool
		n     int
		last  Value // a read's last element, or its value
	}
	type group struct {
		mop  *Mop // the first read, standing for the value
		txns []*Op
	}
	groups := map[readOf][]*group{}
	var order []*group
	for v := range c.vtx {
		t := c.txnOf(int32(v))
		if t.op.Type != OK {
			continue
		}
		var reads []*Mop  // the first read of each key
		var wrote []Value // keys written after a read
		for j := range t.op.Value {
			m := &t.op.Value[j]
			first := slices.IndexFunc(reads, func(r *Mop) bool { return r.Key == m.Key })
			if m.F == Read {
				if first < 0 {
					reads = append(reads, m)
				}
				continue
			}
			if m.F != write || first < 0 || slices.Contains(wrote, m.Key) {
				continue
			}
			wrote = append(wrote, m.Key)
			r := reads[first]
			id := readOf{key: r.Key}
			if write == Append {
				// nil and [] are both the empty list
				if id.n = len(r.List); id.n > 0 {
					id.last = r.List[id.n-1]
				}
			} else {
				id.isNil, id.last = r.Nil, r.Value
			}
			var g *group
			for _, x := range groups[id] {
				if slices.Equal(x.mop.List, r.List) {
					g = x
					break
				}
			}
			if g == nil {
				g = &group{mop: r}
				groups[id] = append(groups[id], g)
				order = append(order, g)
			}
			g.txns = append(g.txns, t.op)
		}
	}
	verb := map[MopKind]string{Append: "appended to", Write: "wrote"}[write]
	for _, g := range order {
		if len(g.txns) < 2 {
			continue
		}
		var value json.RawMessage
		var said string
		switch {
		case write == Append:
			value, said = listJSON(g.mop.List), listString(g.mop.List)
		default:
			value, said = valueJSON(g.mop.Value, g.mop.Nil), valueString(g.mop.Value, g.mop.Nil)
		}
		var idx []string
		for _, op := range g.txns {
			idx = append(idx, fmt.Sprint(op.Index))
		}
		k := g.mop.Key
		who := "the transactions at indices " + strings.Join(idx[:len(idx)-1], ", ") + " and " + idx[len(idx)-1]
		all, lost := "both", "one update is lost"
		if len(idx) > 2 {
			all, lost = "all", "all updates but one are lost"
		}
		c.add(Anomaly{Type: "lost-update", Key: &k, Value: value, Txns: g.txns,
			Explanation: fmt.Sprintf("%s %s read key %v = %s and then %s it: none saw another's update, so %s",
				who, all, k, said, verb, lost)})
	}
}

// valueString is a register's value as explanations show it.
func valueString(v Value, isNil bool) string {
	if isNil {
		return "nil"
	}
	return v.String()
}

// unexplained is a step the explainers could not account for: it does not
// happen, since the graph holds only edges they explain, but a check must
// not crash on a bug of its own.
func unexplained(rel uint8) Step {
	return Step{Type: relName(rel), render: func(a, b string) string {
		return fmt.Sprintf("%s precedes %s by a %s dependency (seedfall could not say which operations)", a, b, relName(rel))
	}}
}
