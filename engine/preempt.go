package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// KindPreempt is a pct change point: node op(counted call number).
const KindPreempt = "preempt"

// randomMaxCalls is the most counted calls strategy random lets a
// goroutine run before it is preempted.
const randomMaxCalls = 4096

// arrivalMaxCalls is the most counted calls strategy random lets a node
// run on once it learns that a request reached it while it computed: the
// next preemption comes within that many calls, and the goroutine the
// request readied runs then (the runtime polls the network at every
// preemption: pauseoverlay). On Linux another core would take the request
// up at once, while the first handler goes on.
const arrivalMaxCalls = 256

func init() {
	register(familyDef{name: "preempt", open: openPreempt})
	faults.Register(faults.KindInfo{Name: KindPreempt, AtOp: true})
	for _, f := range []string{"strategy", "interleave", "calls", "depth", "steps", "loops"} {
		Implemented["preempt."+f] = true
	}
}

// The Go runtime's layout on wasip1, from the go_asm.h that Go 1.26
// generates for package runtime (GOOS=wasip1 GOARCH=wasm). A guest built
// with another release is refused (checkGoVersion), since a wrong offset
// would corrupt the guest silently.
const (
	preemptGo     = "go1.26" // the release the offsets come from
	globalG       = 2        // wasm globals: SP, CTXT, g, RET0-3, PAUSE (cmd/link/internal/wasm/asm.go)
	gStackguard0  = 16       // g.stackguard0
	gM            = 48       // g.m
	gAtomicstatus = 144      // g.atomicstatus
	gPreempt      = 177      // g.preempt
	gThrowsplit   = 183      // g.throwsplit
	mCurg         = 136      // m.curg
	mLocks        = 216      // m.locks
	gRunning      = 2        // _Grunning
	// stackPreempt makes the next stack check of the goroutine fail, so
	// its next function prologue enters newstack, which sees g.preempt
	// and reschedules it (runtime/stack.go).
	stackPreempt = 0xFFFFFFFFFFFFFADE
)

// preemptGoroutine asks the goroutine running in m to give up its thread
// at its next function prologue, exactly as the runtime's own preemption
// requests do. It does nothing, and says so, unless a user goroutine is
// running and may be preempted: never g0 (the scheduler's own stack), a
// goroutine in a system call or while its M holds locks.
func preemptGoroutine(m api.Module) bool {
	im, ok := m.(experimental.InternalModule)
	if !ok || im.NumGlobal() <= globalG {
		return false
	}
	g := uint32(im.Global(globalG).Get())
	if g == 0 {
		return false
	}
	mem := m.Memory()
	mp, ok1 := mem.ReadUint64Le(g + gM)
	status, ok2 := mem.ReadUint32Le(g + gAtomicstatus)
	splitb, ok3 := mem.Read(g+gThrowsplit, 1) // not ReadByte: tapes record Read (wasi/tape.go)
	if !ok1 || !ok2 || !ok3 || mp == 0 || mp >= 1<<32 || status != gRunning || splitb[0] != 0 {
		return false
	}
	curg, ok1 := mem.ReadUint64Le(uint32(mp) + mCurg)
	locks, ok2 := mem.ReadUint32Le(uint32(mp) + mLocks)
	if !ok1 || !ok2 || curg != uint64(g) || locks != 0 {
		return false
	}
	return mem.Write(g+gPreempt, []byte{1}) && mem.WriteUint64Le(g+gStackguard0, stackPreempt)
}

// preemptFamily is the preemption state of one run.
type preemptFamily struct {
	*env
	strategy world.Strategy
	nodes    map[string]*preemptNode // by program name
	changes  map[string][]uint64     // a replay's change points, by node
	// calib is each node's counted calls in the calibration run, when pct
	// sizes its change points from them (preempt.steps "auto", below).
	calib map[string]uint64
}

// preemptNode counts one node's calls across its incarnations, so that a
// change point names the same call in a replay.
type preemptNode struct {
	total  uint64   // counted calls in completed counts, and of past incarnations
	loaded uint64   // the count loaded now
	nextAt uint64   // the total at which the next preemption is due; 0: none
	points []uint64 // pct: change points still ahead, ascending
	due    bool     // a preemption is due, waiting for a goroutine it may preempt
	stream rng.Stream
	capped uint64 // the largest count to load: CPU time is charged at least that often

	// counter is the incarnation's count (guest.CallsGlobal), nil until its
	// first counted call: loaded minus its value is how much of the count
	// it used.
	counter api.MutableGlobal
}

func openPreempt(e *env) (family, error) {
	pr := &preemptFamily{env: e, strategy: e.w.Preempt.Strategy, nodes: map[string]*preemptNode{}}
	if pr.strategy == "" {
		pr.strategy = world.StrategyNone
	}
	if e.given != nil {
		pr.changes = map[string][]uint64{}
		for _, f := range e.given.Faults {
			if f.Kind == KindPreempt {
				pr.changes[f.Node] = append(pr.changes[f.Node], f.Op)
			}
		}
	}
	fam := family{process: pr.process, end: pr.end, ended: pr.ended, copied: pr.copied}
	if pr.strategy == world.StrategyPCT && e.w.Preempt.Steps == world.StepsAuto && e.w.Preempt.Depth > 1 {
		// Needed by a replay too, whose change points are given: the
		// trace's pct line says what they are drawn over.
		calib, err := e.calibrate()
		if err != nil {
			return fam, err
		}
		pr.calib = calib
	}
	return fam, nil
}

// node returns the state of the node named name, made at its first start:
// under pct, its change points come from the replayed schedule or are
// drawn from a stream of its own.
func (pr *preemptFamily) node(name string) *preemptNode {
	if pn := pr.nodes[name]; pn != nil {
		return pn
	}
	pn := &preemptNode{}
	if pr.strategy == world.StrategyPCT {
		if pr.changes != nil {
			pn.points = slices.Clone(pr.changes[name])
		} else {
			span, _ := pr.span(name)
			pn.points = pctPoints(rng.ForName(pr.seed, KindPreempt, name), pr.w.Preempt.Depth-1, span)
		}
		slices.Sort(pn.points)
		pn.points = slices.Compact(pn.points)
	}
	pr.nodes[name] = pn
	return pn
}

// pctPoints draws k distinct change points among counted calls 1..steps.
func pctPoints(s rng.Stream, k int, steps uint64) []uint64 {
	if uint64(k) > steps {
		k = int(steps)
	}
	seen := map[uint64]bool{}
	var out []uint64
	for len(out) < k {
		p := 1 + s.Uint64()%steps
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// process hooks the node's call count, for preemption and for CPU
// time. Streams of strategy random are per incarnation, so a restart does
// not shift the next one's draws.
func (pr *preemptFamily) process(n *node, p *wasi.Process) {
	prog := n.running()
	if !prog.counted {
		return
	}
	pn := pr.node(n.prog.Name)
	pn.loaded, pn.counter, pn.due, pn.nextAt = 0, nil, false, 0
	pn.stream = rng.ForName(pr.seedFor(KindPreempt), KindPreempt, n.prog.Name, uint64(n.inc))
	pn.capped = cpuCap(pr.w.CPU)
	preempts := prog.preempts
	p.Preempt = func(m api.Module, calls api.MutableGlobal) { pr.point(n, pn, preempts, m, calls) }
	if preempts && pr.strategy == world.StrategyRandom {
		p.Arrived = func(m api.Module) { pr.arrived(pn, m) }
	}
}

// arrived brings the node's next preemption forward to within
// arrivalMaxCalls counted calls (drawn from its stream), when something
// reached its sockets while it computed, unless one is due sooner.
func (pr *preemptFamily) arrived(pn *preemptNode, m api.Module) {
	if pn.loaded == 0 || pr.over() {
		return // no count loaded yet: the guest has not started counting
	}
	calls, ok := m.ExportedGlobal(guest.CallsGlobal).(api.MutableGlobal)
	if !ok {
		return
	}
	left := calls.Get() & 0xFFFFFFFF // an i32
	if left > pn.loaded {
		return
	}
	used := pn.loaded - left
	at := pn.total + used + 1 + uint64(pn.stream.Intn(arrivalMaxCalls))
	if pn.nextAt != 0 && pn.nextAt <= at {
		return
	}
	pn.total += used
	pn.nextAt = at
	pn.loaded = min(pn.capped, at-pn.total)
	calls.Set(pn.loaded)
}

// ended adds what an incarnation used of its last count to its
// node's total, once it has ended: the count is read then, and only then
// (a fork plays it back from the tape: wasi.Process.Final; a fork's guest
// killed past its moment before it ran again dies as its copy).
func (pr *preemptFamily) ended(n *node, wp *wasi.Process) {
	pn := pr.nodes[n.prog.Name]
	if pn == nil || pn.counter == nil {
		return
	}
	pn.total = pn.totalWith(wp.Final(pn.counter))
	pn.loaded, pn.counter = 0, nil
}

// point runs when the node's count of calls is used up: it preempts
// the running goroutine if a preemption is due and loads the next count.
// A preemption that comes due while no goroutine may be preempted (the
// scheduler runs, a lock is held) waits for the next counted call. A count
// may end before a preemption is due, only so that the host charges the
// node's CPU time often enough (pn.capped).
func (pr *preemptFamily) point(n *node, pn *preemptNode, preempts bool, m api.Module, calls api.MutableGlobal) {
	first := pn.loaded == 0 // the guest's first call asks for its first count
	pn.total += pn.loaded
	pn.counter = calls
	if first {
		if preempts {
			pn.nextAt = pr.nextPreemption(pn)
		}
	} else if !pr.over() && pn.nextAt != 0 && pn.total >= pn.nextAt {
		if pr.strategy == world.StrategyPCT {
			op := pn.points[0]
			pn.points = pn.points[1:]
			pr.record(faults.Fault{At: time.Duration(pr.now()), Kind: KindPreempt, Node: n.prog.Name, Op: op})
			pr.event(n, fmt.Sprintf("fault preempt: change point at counted call #%d", op))
		}
		pn.due = true
		pn.nextAt = pr.nextPreemption(pn)
	}
	if pn.due {
		if !preemptGoroutine(m) {
			pn.loaded = 1
			calls.Set(1)
			return
		}
		pn.due = false
	}
	next := pn.capped
	if pn.nextAt != 0 {
		next = min(next, max(1, pn.nextAt-min(pn.total, pn.nextAt)))
	}
	pn.loaded = next
	calls.Set(next)
}

// copied points the count of the node's played guest at the guest's copy,
// once a fork has switched it (checkpoint.go): what the engine keeps of the
// guest now reads the copy.
func (pr *preemptFamily) copied(n *node, m api.Module) {
	if pn := pr.nodes[n.prog.Name]; pn != nil && pn.counter != nil {
		pn.counter, _ = m.ExportedGlobal(guest.CallsGlobal).(api.MutableGlobal)
	}
}

// calls is how many counted calls the node made so far, over all its
// incarnations: every completed count, and what the current incarnation
// (or the last, once it is gone: its count stays readable) used of its
// count. The guest counts down, so its counter never exceeds the count
// loaded, except before its first call asks for one.
func (pn *preemptNode) calls() uint64 {
	if pn.counter == nil {
		return pn.total
	}
	return pn.totalWith(pn.counter.Get())
}

// totalWith is the node's counted calls with left of the last count.
func (pn *preemptNode) totalWith(left uint64) uint64 {
	left &= 0xFFFFFFFF // an i32
	if left > pn.loaded {
		return pn.total
	}
	return pn.total + pn.loaded - left
}

// nextPreemption is the node's total count of calls at which its next
// preemption is due, or 0 for none: under none at the end of each time
// slice of world.MaxPreemptCalls calls.
func (pr *preemptFamily) nextPreemption(pn *preemptNode) uint64 {
	switch pr.strategy {
	case world.StrategyRandom:
		return pn.total + 1 + uint64(pn.stream.Intn(randomMaxCalls))
	case world.StrategyCalls:
		return pn.total + uint64(pr.w.Preempt.Calls)
	case world.StrategyPCT:
		if len(pn.points) > 0 {
			return max(pn.points[0], pn.total+1)
		}
		return 0
	}
	return pn.total + world.MaxPreemptCalls
}

// pct sizes its change points from the calls each node really makes
// (preempt.steps "auto", the default). The spec draws them over each
// node's first 1,048,576 counted calls (world.SpecSteps), but most nodes
// make far fewer, so most change points fell after the node's last call
// and never fired. Under "auto" each node's span is the count of calls it
// made in a calibration run: seed pctCalibrationSeed of the same prepared
// world with no schedule under strategy none, everything else the same.
// That count is a pure function of the world and its binaries, so every
// seed's change points stay a pure function of (world, binaries, seed).
// The calibration runs once per Prepared, whichever seed needs it first,
// while seeds that run in parallel wait for it.

// pctCalibrationSeed is the seed of the calibration run.
const pctCalibrationSeed = 1

// span is the number of counted calls the node's change points are drawn
// over: preempt.steps, or under "auto" the node's calls in the
// calibration run. A node that made none there (it never started: a
// finally check after a failed seed 1, say) gets the most calls any node
// made, or world.SpecSteps if none made any; note then says which.
func (pr *preemptFamily) span(name string) (span uint64, note string) {
	if pr.w.Preempt.Steps != world.StepsAuto {
		return uint64(pr.w.Preempt.Steps), ""
	}
	if n := pr.calib[name]; n > 0 {
		return n, ""
	}
	for _, n := range pr.calib {
		span = max(span, n)
	}
	if span == 0 {
		return world.SpecSteps, "no node made a call there: the spec's default"
	}
	return span, "it made no call there: the most of any node"
}

// end writes the trace's last line under pct: each node's counted
// calls, so that a user can size preempt.steps, and what the change points
// were drawn over. In the calibration run it hands the counts over.
func (pr *preemptFamily) end() {
	if pr.calls != nil {
		for name, pn := range pr.nodes {
			pr.calls[name] = pn.calls()
		}
		return
	}
	if pr.strategy != world.StrategyPCT {
		return
	}
	var b strings.Builder
	b.WriteString("pct:")
	sep := " "
	for _, n := range pr.nodeList() { // world order
		if pn := pr.nodes[n.prog.Name]; pn != nil {
			fmt.Fprintf(&b, "%s%s %d calls", sep, n.prog.Name, pn.calls())
			sep = ", "
		}
	}
	if sep == " " {
		b.WriteString(" no node made a counted call")
	}
	p := pr.w.Preempt
	switch {
	case p.Depth <= 1:
		b.WriteString("; depth 1: no change points")
	case p.Steps != world.StepsAuto:
		fmt.Fprintf(&b, "; change points are drawn over each node's first %d calls (preempt.steps)", p.Steps)
	default:
		fmt.Fprintf(&b, "; change points are drawn over each node's calls in the calibration run (seed %d, strategy none):", pctCalibrationSeed)
		sep = " "
		for _, n := range pr.nodeList() {
			span, note := pr.span(n.prog.Name)
			fmt.Fprintf(&b, "%s%s %d", sep, n.prog.Name, span)
			if note != "" {
				fmt.Fprintf(&b, " (%s)", note)
			}
			sep = ", "
		}
	}
	pr.worldEvent(b.String())
}
