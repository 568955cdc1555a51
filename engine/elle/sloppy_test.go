package elle

import (
	"math/rand/v2"
	"testing"
)

// sloppy: concurrency c; each txn reads from a snapshot taken at invoke and
// applies its appends at completion (snapshot isolation without
// first-committer-wins: lost updates and G2-items).
func sloppyListAppend(rng *rand.Rand, n, c, keys int) *History {
	lists := map[int64][]Value{}
	type open struct {
		p    int64
		inv  []Mop
		done []Mop
	}
	var running []*open
	h := &History{Name: "sloppy"}
	next := int64(1)
	for i := 0; i < n || len(running) > 0; {
		if i < n && len(running) < c && (len(running) == 0 || rng.IntN(2) == 0) {
			o := &open{p: int64(i)}
			m := 1 + rng.IntN(4)
			for j := 0; j < m; j++ {
				k := int64(rng.IntN(keys))
				if rng.IntN(2) == 0 {
					l := lists[k]
					o.inv = append(o.inv, Mop{F: Read, Key: Int(k), Nil: true})
					o.done = append(o.done, Mop{F: Read, Key: Int(k), List: l[:len(l):len(l)], IsList: true})
				} else {
					mm := Mop{F: Append, Key: Int(k), Value: Int(next)}
					next++
					o.inv = append(o.inv, mm)
					o.done = append(o.done, mm)
				}
			}
			h.Ops = append(h.Ops, Op{Index: int64(len(h.Ops)), Process: o.p, Type: Invoke, Value: o.inv})
			running = append(running, o)
			i++
			continue
		}
		j := rng.IntN(len(running))
		o := running[j]
		running = append(running[:j], running[j+1:]...)
		for _, m := range o.done {
			if m.F == Append {
				lists[m.Key.Int64()] = append(lists[m.Key.Int64()], m.Value)
			}
		}
		h.Ops = append(h.Ops, Op{Index: int64(len(h.Ops)), Process: o.p, Type: OK, Value: o.done})
	}
	return h
}

// A database that gives each transaction a snapshot and applies its appends
// when it commits, without checking for conflicts, is not serializable:
// the check says so, with the anomalies such a database makes.
func TestSloppyDatabase(t *testing.T) {
	h := sloppyListAppend(rand.New(rand.NewPCG(1, 1)), 3000, 10, 3)
	r := mustLA(t, h, Options{})
	if r.Valid != Invalid {
		t.Fatalf("valid %v", r.Valid)
	}
	for _, a := range strs("G-single-item G2-item lost-update G2-item-realtime") {
		if r.Counts[a] == 0 {
			t.Errorf("no %s among %v", a, r.AnomalyTypes)
		}
	}
}

// BenchmarkCheckListAppendSloppy100k checks a history full of anomalies:
// 100,000 transactions, 10 at a time, from the database above, over 50
// keys, with the real-time order strict serializability needs.
func BenchmarkCheckListAppendSloppy100k(b *testing.B) {
	h := sloppyListAppend(rand.New(rand.NewPCG(1, 1)), 100_000, 10, 50)
	for b.Loop() {
		r, err := CheckListAppend(h, Options{})
		if err != nil || r.Valid != Invalid {
			b.Fatal(err, r.Valid)
		}
	}
}
