package engine

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// A guest profile (RunOptions.GuestProfile, seedfall run -guestprofile) says
// where the guests' time goes, by guest function, as a pprof profile. Its
// programs are compiled with wazero's function listeners (a compiled module
// of their own, so that runs without a profile pay nothing): every guest
// function and every host call tells the profile when it is entered and
// left. Each run keeps a call tree per program; at the end of the run it
// is added to the profile.
//
// Per call stack:
//
//   - measured: nanoseconds of host wall time with that stack on top (self
//     time). Only one process of a world runs at a time (the baton), so
//     the run has one clock: the time between two events of the run is
//     charged to the stack the run was in after the first. A node blocked
//     in a host call (poll_oneoff) is charged the host's work until
//     another process runs, and the process that runs then its own time.
//     Time before a program's first guest function is
//     "[seedfall: instantiate]", time after its instance ended is
//     "[seedfall: exit]".
//   - wall: measured less the listeners' own cost, which every stretch of
//     time between two events carries (overhead).
//   - calls: how many times the stack's leaf was entered. For guest
//     functions that is what the call-counting copy counts (preempt.go,
//     cpu.go), loop iterations aside: the calls that virtual CPU time and
//     preemption are measured in (and the first call of each instance,
//     which asks for the first count). For host functions, the host
//     calls; for "[seedfall: instantiate]", the instances.
//
// Call stacks are Go's, not WebAssembly's: Go's wasm port unwinds the wasm
// stack whenever it switches goroutines, and its wasm_pc_f_loop then calls
// each suspended frame again, innermost first. The profile follows each
// goroutine (Go's g register, wasm global 2) and files a frame called
// again under the stack it was suspended in. Code that runs on the
// scheduler's stack (mcall, systemstack) stays under the goroutine that
// called it.
//
// The listeners only read: the trace, the digest and everything a guest
// can see are the same with and without a profile.

// GuestProfile collects a profile of the guests' time over any number of
// runs, from several goroutines at once. Pass it in RunOptions and write
// it with WriteTo.
type GuestProfile struct {
	mu    sync.Mutex
	roots map[string]*gpNode // by program
	runs  int
}

// gpNode is a node of a program's call tree over every run of a profile.
type gpNode struct {
	name  string
	guest bool // a guest function, not a host call or a synthetic frame
	kids  map[string]*gpNode
	// wall, calls and ticks as in gpFrame, summed
	wall, calls, ticks int64
}

func (n *gpNode) kid(fn *gpFunc) *gpNode {
	k := n.kids[fn.name]
	if k == nil {
		k = &gpNode{name: fn.name, guest: fn.guest}
		if n.kids == nil {
			n.kids = map[string]*gpNode{}
		}
		n.kids[fn.name] = k
	}
	return k
}

// add adds the run's call tree under f to n.
func (n *gpNode) add(f *gpFrame) {
	n.wall += f.wall
	n.calls += f.calls
	n.ticks += f.ticks
	for _, k := range f.kids {
		n.kid(k.fn).add(k)
	}
}

// NewGuestProfile returns an empty guest profile.
func NewGuestProfile() *GuestProfile {
	return &GuestProfile{roots: map[string]*gpNode{}}
}

// Runs is how many runs the profile holds.
func (gp *GuestProfile) Runs() int {
	gp.mu.Lock()
	defer gp.mu.Unlock()
	return gp.runs
}

// WriteTo writes the profile as a gzipped pprof profile (profile.proto),
// which go tool pprof reads. Its sample types are calls (count), measured
// (nanoseconds of wall time, the listeners' own cost included) and wall
// (nanoseconds: measured less the listeners' estimated cost, the
// default). Each sample has a label "program" naming the world's program.
// Samples come in the order of program and stack, so runs that give the
// same stacks and values give the same bytes.
func (gp *GuestProfile) WriteTo(w io.Writer) (int64, error) {
	gp.mu.Lock()
	programs := make([]string, 0, len(gp.roots))
	for name := range gp.roots {
		programs = append(programs, name)
	}
	slices.Sort(programs)
	cost := gp.overhead()
	p := &pprofProfile{types: [][2]string{{"calls", "count"}, {"measured", "nanoseconds"}, {"wall", "nanoseconds"}}, deflt: "wall",
		comments: []string{fmt.Sprintf("seedfall guest profile of %d runs; wall is measured less %d ns per event for the listeners' own cost", gp.runs, cost)}}
	var stack []string
	var walk func(program string, n *gpNode)
	walk = func(program string, n *gpNode) {
		if n.name != "" {
			stack = append(stack, n.name)
		}
		if n.name != "" && (n.wall != 0 || n.calls != 0) {
			wall := n.wall
			if n.guest {
				wall = max(0, wall-cost*n.ticks)
			}
			leafFirst := slices.Clone(stack)
			slices.Reverse(leafFirst) // pprof wants the leaf first
			p.samples = append(p.samples, pprofSample{stack: leafFirst, values: []int64{n.calls, n.wall, wall},
				labels: [][2]string{{"program", program}}})
		}
		names := make([]string, 0, len(n.kids))
		for name := range n.kids {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			walk(program, n.kids[name])
		}
		if n.name != "" {
			stack = stack[:len(stack)-1]
		}
	}
	for _, program := range programs {
		walk(program, gp.roots[program])
	}
	gp.mu.Unlock()
	cw := &countWriter{w: w}
	err := writePprof(cw, p)
	return cw.n, err
}

// overhead estimates what the listeners add to each stretch of time
// between two events, in nanoseconds: every event leaves the guest's
// machine code for Go and comes back, at a cost that dwarfs a small
// function's own work. It is the least time per stretch of any guest
// function seen in at least minTicks stretches over the profile: the
// cheapest functions (an atomic load, a few instructions) do next to no
// work of their own, so what they measure is the listeners' cost. Noise
// only adds time, so over many stretches the least mean is a fair floor.
func (gp *GuestProfile) overhead() int64 {
	const minTicks = 1000
	type sum struct{ wall, ticks int64 }
	byName := map[string]*sum{}
	var walk func(n *gpNode)
	walk = func(n *gpNode) {
		if n.guest {
			s := byName[n.name]
			if s == nil {
				s = &sum{}
				byName[n.name] = s
			}
			s.wall += n.wall
			s.ticks += n.ticks
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	for _, root := range gp.roots {
		walk(root)
	}
	least := int64(-1)
	for _, s := range byName {
		if s.ticks >= minTicks {
			if per := s.wall / s.ticks; least < 0 || per < least {
				least = per
			}
		}
	}
	return max(least, 0)
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// gpFunc is one function of a profiled module, guest or host.
type gpFunc struct {
	name  string
	guest bool // a function of the guest, not a host call
	// goABI: Go's wasm calling convention, (PC_B i32) -> (unwind i32). A
	// call with PC_B 0 enters the function; another PC_B resumes it, and a
	// result of 1 means the wasm stack is unwinding to switch goroutines.
	goABI bool
	loop  bool // wasm_pc_f_loop(_export): calls the frames of the goroutine that runs
	// morestack: runtime.morestack(_noctxt). A goroutine that grew its
	// stack (or was preempted) resumes the function that called it from
	// its entry, with PC_B 0.
	morestack bool
}

// Synthetic frames for the time a program spends outside its guest code.
var (
	gpInstantiate = &gpFunc{name: "[seedfall: instantiate]"}
	gpExit        = &gpFunc{name: "[seedfall: exit]"}
)

// gpFactory makes the listeners of a profiled module: one per function,
// which knows its gpFunc. names gives Go's names of the functions whose
// name in the name section the linker changed (guest.GoFuncNames).
type gpFactory struct{ names map[string]string }

func (fa gpFactory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	name := def.Name()
	if def.GoFunction() != nil && len(def.ExportNames()) > 0 {
		name = def.ExportNames()[0] // a host call: its import name
	} else if goName, ok := fa.names[name]; ok {
		name = goName
	}
	if name == "" {
		name = fmt.Sprintf("wasm-function[%d]", def.Index())
	}
	f := &gpFunc{name: name, guest: def.GoFunction() == nil}
	p, r := def.ParamTypes(), def.ResultTypes()
	f.goABI = def.GoFunction() == nil && len(p) == 1 && len(r) == 1 && p[0] == api.ValueTypeI32 && r[0] == api.ValueTypeI32
	f.loop = name == "wasm_pc_f_loop" || name == "wasm_pc_f_loop_export"
	f.morestack = name == "runtime.morestack" || name == "runtime.morestack_noctxt"
	return &gpListener{fn: f}
}

// gpListener hears one function's calls, in every instance of its module;
// the instance's state comes with the context of the call.
type gpListener struct{ fn *gpFunc }

type gpKey struct{}

func (l *gpListener) Before(ctx context.Context, mod api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	if in, ok := ctx.Value(gpKey{}).(*gpInstance); ok {
		in.before(l.fn, mod, params)
	}
}

func (l *gpListener) After(ctx context.Context, _ api.Module, _ api.FunctionDefinition, results []uint64) {
	if in, ok := ctx.Value(gpKey{}).(*gpInstance); ok {
		in.after(l.fn, results)
	}
}

func (l *gpListener) Abort(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ error) {
	if in, ok := ctx.Value(gpKey{}).(*gpInstance); ok {
		in.after(l.fn, nil)
	}
}

// gpFrame is a node of a program's call tree in one run.
type gpFrame struct {
	fn     *gpFunc // nil at the root
	parent *gpFrame
	kids   []*gpFrame
	byFn   map[*gpFunc]*gpFrame // with many kids
	// wall is the nanoseconds charged to the frame, in ticks stretches
	// between two events; calls is how many times it was entered.
	wall, calls, ticks int64
}

func (f *gpFrame) child(fn *gpFunc) *gpFrame {
	if f.byFn != nil {
		if k := f.byFn[fn]; k != nil {
			return k
		}
	} else {
		for _, k := range f.kids {
			if k.fn == fn {
				return k
			}
		}
	}
	k := &gpFrame{fn: fn, parent: f}
	f.kids = append(f.kids, k)
	if f.byFn != nil {
		f.byFn[fn] = k
	} else if len(f.kids) > 8 {
		f.byFn = map[*gpFunc]*gpFrame{}
		for _, k := range f.kids {
			f.byFn[k.fn] = k
		}
	}
	return k
}

// gpRun is one run's part of a profile. Only the process holding the
// baton touches it, so it needs no lock.
type gpRun struct {
	p     *GuestProfile
	start time.Time
	last  int64    // ns since start of the last event
	cur   *gpFrame // where the run is since then
	roots map[string]*gpFrame
	names []string // programs, in the order they first ran
}

func (gp *GuestProfile) newRun() *gpRun {
	return &gpRun{p: gp, start: time.Now(), roots: map[string]*gpFrame{}}
}

// tick charges the time since the last event to where the run was.
func (r *gpRun) tick() {
	now := int64(time.Since(r.start))
	if r.cur != nil {
		r.cur.wall += now - r.last
		r.cur.ticks++
	}
	r.last = now
}

// gpInstance is the state of one instance of a program.
type gpInstance struct {
	r     *gpRun
	root  *gpFrame
	stack []*gpFrame // the wasm stack: frames entered and not yet left
	g     api.Global // Go's g register, read when a goroutine (re)starts
	gRead bool
	// saved is, per goroutine, the innermost frame it was suspended in;
	// seg is the goroutine that wasm_pc_f_loop last called a frame of,
	// segSaved whether the unwinding of its wasm stack has been seen.
	saved    map[uint64]*gpFrame
	seg      uint64
	segSaved bool
}

// instance starts an instance of program in the run: ctx, passed to the
// instantiation, carries it to the listeners. A nil run does nothing.
func (r *gpRun) instance(ctx context.Context, program string) (context.Context, *gpInstance) {
	if r == nil {
		return ctx, nil
	}
	root := r.roots[program]
	if root == nil {
		root = &gpFrame{}
		r.roots[program] = root
		r.names = append(r.names, program)
	}
	in := &gpInstance{r: r, root: root, saved: map[uint64]*gpFrame{}}
	r.tick()
	r.cur = root.child(gpInstantiate)
	r.cur.calls++
	return context.WithValue(ctx, gpKey{}, in), in
}

// end ends the instance: what follows until the run's next event is the
// host's work after it.
func (in *gpInstance) end() {
	if in == nil {
		return
	}
	in.r.tick()
	in.r.cur = in.root.child(gpExit)
	in.stack = nil
}

// goroutine reads Go's g register.
func (in *gpInstance) goroutine(mod api.Module) uint64 {
	if !in.gRead {
		in.gRead = true
		if im, ok := mod.(experimental.InternalModule); ok && im.NumGlobal() > globalG {
			in.g = im.Global(globalG)
		}
	}
	if in.g == nil {
		return 0
	}
	return in.g.Get()
}

func (in *gpInstance) before(fn *gpFunc, mod api.Module, params []uint64) {
	in.r.tick()
	parent := in.root
	if n := len(in.stack); n > 0 {
		parent = in.stack[n-1]
	}
	var f *gpFrame
	if parent.fn != nil && parent.fn.loop && fn.goABI && len(params) == 1 {
		// A goroutine starts or goes on: find the frame in the stack it
		// was suspended in. A frame resumed with PC_B 0 is one that
		// called morestack; any other PC_B 0 starts a goroutine.
		g := in.goroutine(mod)
		in.seg, in.segSaved = g, false
		var prev *gpFrame
		for x := in.saved[g]; x != nil && x != in.root; prev, x = x, x.parent {
			if x.fn == fn && (params[0] != 0 || prev != nil && prev.fn.morestack) {
				f = x
				break
			}
		}
		if f != nil {
			in.saved[g] = f.parent // its caller is resumed next, once it returns
		} else {
			delete(in.saved, g)
			f = in.root.child(fn)
		}
	} else {
		f = parent.child(fn)
	}
	f.calls++
	in.stack = append(in.stack, f)
	in.r.cur = f
}

func (in *gpInstance) after(fn *gpFunc, results []uint64) {
	in.r.tick()
	n := len(in.stack)
	if n == 0 {
		return
	}
	f := in.stack[n-1]
	in.stack = in.stack[:n-1]
	if fn.goABI && len(results) == 1 && results[0]&1 == 1 && !in.segSaved {
		// The wasm stack unwinds to switch goroutines: the goroutine that
		// ran stays suspended in this frame and those above it.
		in.saved[in.seg] = f
		in.segSaved = true
	}
	if n > 1 {
		in.r.cur = in.stack[n-2]
	} else {
		in.r.cur = in.root.child(gpExit)
	}
}

// finish adds the run to its profile. A nil run does nothing.
func (r *gpRun) finish() {
	if r == nil {
		return
	}
	r.tick()
	r.cur = nil
	gp := r.p
	gp.mu.Lock()
	defer gp.mu.Unlock()
	gp.runs++
	for _, program := range r.names {
		root := gp.roots[program]
		if root == nil {
			root = &gpNode{}
			gp.roots[program] = root
		}
		root.add(r.roots[program])
	}
}

// profiledModules compiles the programs' profiled variants, before a run
// with a guest profile starts: compiling is not the guests' time.
func (p *Prepared) profiledModules(ctx context.Context) error {
	for _, prog := range p.Programs {
		for _, q := range []*Program{prog, prog.Upgrade} {
			if q == nil {
				continue
			}
			if _, _, err := p.e.moduleAs(ctx, q, true); err != nil {
				return err
			}
		}
	}
	return nil
}
