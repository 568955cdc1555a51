package elle

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// genConfig shapes a generated history, as Elle's generator (wr-txns)
// does: a pool of active keys, each retired for a fresh one after some
// writes, so that reads stay short.
type genConfig struct {
	txns, keys, maxWrites, processes int
}

// serialListAppend is a valid list-append history: transactions run one at
// a time (each invoked, then ok), each reads and appends to the lists as
// they are.
func serialListAppend(rng *rand.Rand, cfg genConfig) *History {
	active := make([]int64, cfg.keys)
	writes := make([]int, cfg.keys)
	for i := range active {
		active[i] = int64(i)
	}
	next := int64(cfg.keys)
	lists := map[int64][]Value{}
	h := &History{Name: "generated", Ops: make([]Op, 0, 2*cfg.txns)}
	for i := 0; i < cfg.txns; i++ {
		n := 1 + rng.IntN(4)
		var inv, done []Mop
		for j := 0; j < n; j++ {
			ki := rng.IntN(cfg.keys)
			k := active[ki]
			if rng.IntN(2) == 0 {
				l := lists[k]
				// A read shares the list's array up to its length: later
				// appends never change those elements.
				inv = append(inv, Mop{F: Read, Key: Int(k), Nil: true})
				done = append(done, Mop{F: Read, Key: Int(k), List: l[:len(l):len(l)], IsList: true})
				continue
			}
			v := Int(int64(len(lists[k]) + 1))
			lists[k] = append(lists[k], v)
			m := Mop{F: Append, Key: Int(k), Value: v}
			inv, done = append(inv, m), append(done, m)
			if writes[ki]++; writes[ki] >= cfg.maxWrites {
				active[ki], writes[ki] = next, 0
				next++
			}
		}
		p := int64(rng.IntN(cfg.processes))
		at := int64(len(h.Ops))
		h.Ops = append(h.Ops,
			Op{Index: at, Process: p, Type: Invoke, F: "txn", Value: inv, Time: at * 1000, HasTime: true},
			Op{Index: at + 1, Process: p, Type: OK, F: "txn", Value: done, Time: at*1000 + 500, HasTime: true})
	}
	return h
}

// serialRWRegister is a valid rw-register history, run one at a time.
func serialRWRegister(rng *rand.Rand, cfg genConfig) *History {
	active := make([]int64, cfg.keys)
	writes := make([]int, cfg.keys)
	for i := range active {
		active[i] = int64(i)
	}
	next := int64(cfg.keys)
	regs := map[int64]Value{}
	counter := map[int64]int64{}
	h := &History{Name: "generated", Ops: make([]Op, 0, 2*cfg.txns)}
	for i := 0; i < cfg.txns; i++ {
		n := 1 + rng.IntN(4)
		var inv, done []Mop
		for j := 0; j < n; j++ {
			ki := rng.IntN(cfg.keys)
			k := active[ki]
			if rng.IntN(2) == 0 {
				v, ok := regs[k]
				inv = append(inv, Mop{F: Read, Key: Int(k), Nil: true})
				done = append(done, Mop{F: Read, Key: Int(k), Value: v, Nil: !ok})
				continue
			}
			counter[k]++
			v := Int(counter[k])
			regs[k] = v
			m := Mop{F: Write, Key: Int(k), Value: v}
			inv, done = append(inv, m), append(done, m)
			if writes[ki]++; writes[ki] >= cfg.maxWrites {
				active[ki], writes[ki] = next, 0
				next++
			}
		}
		p := int64(rng.IntN(cfg.processes))
		at := int64(len(h.Ops))
		h.Ops = append(h.Ops,
			Op{Index: at, Process: p, Type: Invoke, F: "txn", Value: inv},
			Op{Index: at + 1, Process: p, Type: OK, F: "txn", Value: done})
	}
	return h
}

// Random serial histories are valid, whatever the model; with one
// acknowledged append lost from every later read, they are not.
func TestSerialHistories(t *testing.T) {
	lost := 0
	for seed := uint64(1); seed <= 60; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := genConfig{txns: 20 + rng.IntN(200), keys: 1 + rng.IntN(5), maxWrites: 2 + rng.IntN(30), processes: 1 + rng.IntN(5)}
		h := serialListAppend(rng, cfg)
		for _, ms := range [][]string{nil, models("serializable"), models("strong-session-serializable"), models("read-committed")} {
			r := mustLA(t, h, Options{ConsistencyModels: ms})
			if r.Valid != Valid && !(r.Valid == Unknown && slices.Equal(r.AnomalyTypes, strs("empty-transaction-graph"))) {
				t.Fatalf("seed %d, %v: a serial history is %v: %v", seed, ms, r.Valid, r.AnomalyTypes)
			}
		}
		rw := serialRWRegister(rng, cfg)
		for _, o := range []Options{{}, {WFRKeys: true, SequentialKeys: true, LinearizableKeys: true}} {
			r := mustRW(t, rw, o)
			if r.Valid != Valid && !(r.Valid == Unknown && slices.Equal(r.AnomalyTypes, strs("empty-transaction-graph"))) {
				t.Fatalf("seed %d: a serial rw-register history is %v: %v", seed, r.Valid, r.AnomalyTypes)
			}
		}
		if loseAppend(rng, h) {
			lost++
			r := mustLA(t, h, Options{})
			if r.Valid != Invalid {
				t.Fatalf("seed %d: a lost append goes unnoticed: %v %v", seed, r.Valid, r.AnomalyTypes)
			}
		}
	}
	if lost < 50 {
		t.Errorf("only %d of 60 histories had an append to lose", lost)
	}
}

// loseAppend removes one acknowledged append from the reads of other
// transactions that saw it, as a database that lost it would show them,
// and says whether there was one to lose.
func loseAppend(rng *rand.Rand, h *History) bool {
	type seen struct {
		op  int
		key Value
		v   Value
	}
	var candidates []seen
	for i, op := range h.Ops {
		if op.Type != OK {
			continue
		}
		for _, m := range op.Value {
			if m.F == Append {
				candidates = append(candidates, seen{i, m.Key, m.Value})
			}
		}
	}
	rng.Shuffle(len(candidates), func(i, j int) { candidates[i], candidates[j] = candidates[j], candidates[i] })
	for _, c := range candidates {
		lost := false
		for i := range h.Ops {
			op := &h.Ops[i]
			if i == c.op || op.Type != OK {
				continue
			}
			for j, m := range op.Value {
				if m.F == Read && m.Key == c.key && slices.Contains(m.List, c.v) {
					op.Value[j].List = slices.DeleteFunc(slices.Clone(m.List), func(e Value) bool { return e == c.v })
					lost = true
				}
			}
		}
		if lost {
			return true
		}
	}
	return false
}

// A check stopped by its deadline is incomplete, never valid.
func TestDeadline(t *testing.T) {
	h := serialListAppend(rand.New(rand.NewPCG(1, 2)), genConfig{txns: 2000, keys: 5, maxWrites: 50, processes: 5})
	r := mustLA(t, h, Options{Deadline: time.Now().Add(-time.Second)})
	if !r.Incomplete || r.Valid == Valid {
		t.Fatalf("past the deadline: incomplete %v, valid %v", r.Incomplete, r.Valid)
	}
	r = mustLA(t, h, Options{Deadline: time.Now().Add(time.Minute)})
	if r.Incomplete || r.Valid != Valid {
		t.Fatalf("within the deadline: incomplete %v, valid %v", r.Incomplete, r.Valid)
	}
	// What was found before the deadline still counts: a G1a is found
	// before the cycles are searched.
	r = mustRW(t, hist(with(rwOp("wx1"), 0, Fail), rwOp("rx1")), Options{Deadline: time.Now().Add(-time.Second)})
	if !r.Incomplete || r.Valid != Invalid || !slices.Equal(r.AnomalyTypes, strs("G1a")) {
		t.Fatalf("rw past the deadline: incomplete %v, valid %v, %v", r.Incomplete, r.Valid, r.AnomalyTypes)
	}
}

// A deadline that passes during the cycle search keeps the cycles found
// before it: the result is incomplete, and not valid.
func TestDeadlineDuringSearch(t *testing.T) {
	h := sloppyListAppend(rand.New(rand.NewPCG(1, 1)), 3000, 10, 3)
	full := mustLA(t, h, Options{})
	defer func() { timeNow = time.Now }()
	calls := 0
	timeNow = func() time.Time {
		// Time passes once the search has looked at a few components.
		if calls++; calls > 8 {
			return time.Now().Add(time.Hour)
		}
		return time.Now()
	}
	r := mustLA(t, h, Options{Deadline: time.Now().Add(time.Minute)})
	if !r.Incomplete || r.Valid != Invalid || slices.Contains(r.AnomalyTypes, "cycle-search-timeout") {
		t.Fatalf("incomplete %v, valid %v, %v", r.Incomplete, r.Valid, r.AnomalyTypes)
	}
	cycles := func(r *Result) (n int) {
		for t, c := range r.Counts {
			if strings.HasPrefix(t, "G") && !strings.HasPrefix(t, "G1a") && !strings.HasPrefix(t, "G1b") {
				n += c
			}
		}
		return n
	}
	if got, all := cycles(r), cycles(full); got == 0 || got >= all {
		t.Errorf("%d cycles found before the deadline, of %d", got, all)
	}
}

func benchCheck(b *testing.B, n int, list bool) {
	rng := rand.New(rand.NewPCG(42, 42))
	cfg := genConfig{txns: n, keys: 10, maxWrites: 64, processes: 10}
	var h *History
	if list {
		h = serialListAppend(rng, cfg)
	} else {
		h = serialRWRegister(rng, cfg)
	}
	b.ResetTimer()
	for b.Loop() {
		var r *Result
		var err error
		if list {
			r, err = CheckListAppend(h, Options{})
		} else {
			r, err = CheckRWRegister(h, Options{})
		}
		if err != nil || r.Valid != Valid {
			b.Fatalf("%v %v %v", err, r.Valid, r.AnomalyTypes)
		}
	}
}

// The benchmarks check valid serial histories for strict serializability
// (Elle's default): 10 keys at a time, retired after 64 writes, 1 to 4
// micro-operations a transaction, half of them reads.
func BenchmarkCheckListAppend10k(b *testing.B)  { benchCheck(b, 10_000, true) }
func BenchmarkCheckListAppend100k(b *testing.B) { benchCheck(b, 100_000, true) }
func BenchmarkCheckRWRegister10k(b *testing.B)  { benchCheck(b, 10_000, false) }
func BenchmarkCheckRWRegister100k(b *testing.B) { benchCheck(b, 100_000, false) }
