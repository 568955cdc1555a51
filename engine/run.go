package engine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/guest/netoverlay"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/sched"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/trace"
	"github.com/seedfall/seedfall/engine/world"
)

type runner struct {
	p    *Prepared
	w    *world.World
	seed uint64
	ctx  context.Context

	s      *sched.Sched
	tr     *trace.Trace
	net    *netsim.Network
	netR   rng.Stream
	nodes  []*node
	states []*State // RunOptions.StatesAt's
	healed []int64  // Result.Heals

	faultsOn bool // false before setup completes (faults_after_setup) and once faults stop for good
	// quietUntil is the end of the latest sim.QuietFor: no fault starts
	// before it.
	quietUntil int64
	// recovering: liveness's recovery phase has begun, or the finally check.
	recovering bool
	// healGen counts heals, so the planned end of a fault that a heal
	// already ended does nothing.
	healGen int
	given   *faults.Schedule // a replay's schedule; nil when faults are drawn
	rekeyed []faults.Branch  // the schedule's branches applied so far (branch.go)
	applied []faults.Fault
	res     *Result

	// The run's families, in the order of their names (port.go), and the
	// hooks the runner takes from them.
	fams      []family
	links     links
	crashDisk func(n *node)                                   // default: n.disk.Crash()
	datagram  func(from, to int, seq uint64) (drop, dup bool) // UDP loss and duplication
	clocks    nodeClocks                                      // slowdowns and wall clocks (nodefaults.go)

	coldBoot bool           // RunOptions.ColdBoot
	noPause  bool           // RunOptions.NoPause
	probe    runProbe       // the tests' (export_test.go)
	pauses   uint64         // times a guest paused to wait
	fork     *checkpointRun // checkpoints and forks (checkpoint.go)

	held  bool           // faults_after_setup: faults wait for sim.SetupComplete
	skews []faults.Fault // clock skews held by faults_after_setup, applied when faults start

	gprof *gpRun // with RunOptions.GuestProfile (guestprof.go)
}

// runProbe is what the tests ask of a run besides its options, and what
// they read of it once it ends: product code runs with the zero probe.
type runProbe struct {
	// relocate moves every paused guest into a new instance of its module
	// (a copy of its memory and globals) before it resumes; relocated
	// counts the moves.
	relocate  bool
	relocated uint64
	// switched counts the guests a fork copied from its checkpoint.
	switched uint64
}

// The runner is the families' port (port.go).
var _ port = (*runner)(nil)

func (r *runner) now() int64           { return r.s.Now() }
func (r *runner) at(t int64, f func()) { r.s.At(t, f) }
func (r *runner) nodeList() []*node    { return r.nodes }
func (r *runner) over() bool           { return r.res != nil }
func (r *runner) heals() int           { return r.healGen }
func (r *runner) kill(p *sched.Proc)   { r.s.Kill(p) }
func (r *runner) note(who, text string) {
	r.tr.Add(trace.Line{At: r.s.Now(), Node: who, Kind: trace.Event, Text: text})
}

// faultsActive reports whether a fault may start now: after setup (with
// faults_after_setup), outside a quiet period and before faults stop.
func (r *runner) faultsActive() bool { return r.faultsOn && r.s.Now() >= r.quietUntil }

// record adds a fault that happened to the run's schedule.
func (r *runner) record(f faults.Fault) { r.applied = append(r.applied, f) }

// Run runs one seed of the prepared world to its verdict.
func (p *Prepared) Run(ctx context.Context, opt RunOptions) (*Result, error) {
	if opt.GuestProfile != nil {
		// Compiled before the run, whose wall time it is not.
		if err := p.profiledModules(ctx); err != nil {
			return nil, err
		}
	}
	return p.run(ctx, opt, runWith{})
}

// runWith is what a run may be given from inside the engine besides its
// options.
type runWith struct {
	// w, if set, is the world to run instead of the prepared one: pct's
	// calibration run runs it under strategy none (pctCalls).
	w *world.World
	// calls, if set, makes the run pct's calibration run, which fills it
	// with each node's counted calls.
	calls map[string]uint64
	// probe, if set, is the tests' (export_test.go).
	probe *runProbe
}

// run runs one seed.
func (p *Prepared) run(ctx context.Context, opt RunOptions, with runWith) (*Result, error) {
	start := time.Now()
	w := p.World
	if with.w != nil {
		w = with.w
	}
	calls, probe := with.calls, with.probe
	r := &runner{
		p: p, w: w, seed: opt.Seed, ctx: ctx, coldBoot: opt.ColdBoot || p.e.opts.ColdBoot, noPause: opt.NoPause || p.e.opts.NoPause,
		s:        sched.New(rng.New(opt.Seed, "sched", -1)),
		tr:       trace.New(),
		netR:     rng.New(opt.Seed, "net", -1),
		faultsOn: !w.FaultsAfterSetup,
		held:     w.FaultsAfterSetup,
	}
	if probe != nil {
		r.probe.relocate = probe.relocate
		defer func() { probe.relocated, probe.switched = r.probe.relocated, r.probe.switched }()
	}
	r.given = opt.Schedule
	r.crashDisk = func(n *node) { n.disk.Crash() }
	if w.Faults.Swarm {
		var desc string
		w, desc = swarm(w, opt.Seed)
		r.w = w
		r.worldEvent(desc)
	}
	if w.NetOverlay {
		var buf []byte
		r.net = netsim.New(netsim.Config{Now: r.s.Now, Latency: r.latency, Trace: func(e netsim.Event) {
			buf = appendNetEvent(buf[:0], e)
			r.tr.Fold(buf)
		}, Datagram: func(from, to int, seq uint64) (bool, bool) {
			if r.datagram == nil {
				return false, false
			}
			return r.datagram(from, to, seq)
		}})
	}
	if err := r.openFamilies(opt, calls); err != nil {
		return nil, err
	}
	for i, prog := range p.Programs {
		n := &node{prog: prog, host: i, rst: rng.ForName(opt.Seed, "restart", prog.Name)}
		o := disk.Options{StrictDirs: w.Faults.StrictDirs, Now: r.wallNow}
		for _, f := range r.fams {
			if f.disk != nil {
				f.disk(n, &o)
			}
		}
		n.disk = disk.New(o)
		// A fresh machine has /tmp, where os.TempDir points.
		if err := n.disk.MkdirAll("tmp"); err != nil {
			return nil, err
		}
		if r.net != nil {
			r.net.AddHost(prog.Name)
		}
		r.nodes = append(r.nodes, n)
	}
	if r.net != nil {
		etc, err := netoverlay.EtcFiles(r.net.Hosts())
		if err != nil {
			return nil, err
		}
		// One /etc serves every node: the WASI layer keeps it read-only.
		shared := disk.New(disk.Options{Now: r.wallNow})
		for _, name := range []string{"hosts", "nsswitch.conf"} {
			if err := shared.WriteFile(name, etc[name]); err != nil {
				return nil, err
			}
		}
		for _, n := range r.nodes {
			n.etc = shared
		}
	}

	sch := opt.Schedule
	horizon := w.Duration
	if sch != nil && sch.Duration > 0 {
		horizon = sch.Duration // a replay runs as long as the schedule says
	}
	faultEnd := horizon // with liveness: the end of the fault period
	fork, err := openCheckpoints(p, opt, r, func(prog *Program) *compiled { return p.e.compiledAs(ctx, prog, false) }, func(n *node, m api.Module) {
		for _, f := range r.fams {
			if f.copied != nil {
				f.copied(n, m)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	r.fork = fork
	if fork != nil {
		fork.keep, fork.resume = r.keepFamilies, r.resumeFamilies
	}
	if within := w.Liveness.Within; within > 0 {
		r.s.At(int64(faultEnd), func() { r.recoveryPhase(faultEnd) })
		horizon += within
	}
	if sch != nil {
		// Before any fault: a branch applies at the first step at or after
		// its time, ahead of everything else due then.
		for _, b := range sch.Branches {
			r.s.At(int64(b.At), func() { r.branch(b) })
		}
	}
	var planned []faults.Fault
	if sch != nil {
		planned = sch.Faults
	} else {
		for _, f := range r.fams {
			if f.plan != nil {
				planned = append(planned, f.plan()...)
			}
		}
		slices.SortStableFunc(planned, func(a, b faults.Fault) int { return cmp.Compare(a.At, b.At) })
	}
	for _, f := range planned {
		if k, _ := faults.Lookup(f.Kind); k.AtOp {
			continue // fires at its operation, not at a time
		}
		f := f
		r.s.At(int64(f.At), func() { r.apply(f) })
	}

	// Before StopAt's, so that a moment asked of both shows the same.
	for _, at := range slices.Sorted(slices.Values(opt.StatesAt)) {
		r.s.At(int64(at), func() { r.states = append(r.states, r.state()) })
	}
	if opt.StopAt > 0 {
		// Stopped to look, not finished: no check of the run so far.
		r.s.At(int64(opt.StopAt), func() {
			if r.res == nil {
				r.finish(fmt.Sprintf("stopped at %v to inspect", opt.StopAt))
				r.res.Stopped = true
			}
		})
	}
	if opt.GuestProfile != nil {
		r.gprof = opt.GuestProfile.newRun()
	}
	for _, n := range r.nodes {
		if n.prog.Role != world.RoleFinally {
			r.start(n)
		}
	}
	// A cancelled context (Ctrl-C) ends the run without a verdict. The
	// programs see it too (their instances are closed) and may stop
	// before the scheduler does: whatever the run came to then is no
	// verdict either.
	stopAbort := context.AfterFunc(ctx, r.s.Abort)
	var advance []func(int64)
	for _, f := range r.fams {
		if f.advance != nil {
			advance = append(advance, f.advance)
		}
	}
	out := r.s.Run(sched.Options{Until: int64(horizon), Watchdog: w.Watchdog, Advance: func(now int64) {
		for _, f := range advance {
			f(now)
		}
	}})
	stopAbort()
	if out == sched.Aborted || ctx.Err() != nil {
		r.s.Shutdown()
		return nil, fmt.Errorf("run of seed %d stopped at %v: %w", opt.Seed, time.Duration(r.s.Now()), context.Cause(ctx))
	}
	switch {
	case out == sched.Watchdog:
		n := r.byProc(r.s.Overdue())
		r.res = nil
		r.fail(ClassWatchdog, n, fmt.Sprintf("%s ran for more than %v of real time without yielding (a busy loop? raise \"watchdog\" if it is just slow)", n.label(), w.Watchdog))
	case r.res != nil:
	case out == sched.Horizon && w.Liveness.Within > 0:
		r.fail(ClassLiveness, r.unfinished()[0], r.livenessReason(faultEnd))
	case out == sched.Horizon && opt.Check && r.unfinished()[0] != nil:
		n := r.unfinished()[0]
		r.fail(ClassInconclusive, n, fmt.Sprintf("the run reached its horizon at %v before %s exited: it never reached the workload's check, so it neither passes nor fails", time.Duration(r.s.Now()), n.label()))
	case out == sched.Horizon:
		r.pass(ReasonHorizon)
	default:
		var waiting []string
		for _, n := range r.nodes {
			if n.up {
				waiting = append(waiting, n.label())
			}
		}
		r.fail(ClassDeadlock, nil, fmt.Sprintf("every process is blocked and nothing can wake them: %s", strings.Join(waiting, ", ")))
	}
	if !r.res.Passed {
		// The program that failed may only have waited for one that never
		// came up: name that one too.
		if note := r.neverServed(); note != "" {
			r.res.Reason += "; " + note
		}
	}
	for _, f := range r.fams {
		if f.over != nil {
			f.over()
		}
	}
	var state *State
	if opt.State {
		state = r.state()
	}
	r.s.Shutdown()
	r.gprof.finish()
	for _, f := range r.fams {
		if f.end != nil {
			f.end()
		}
	}

	res := r.res
	res.State, res.States = state, r.states
	res.Seed = opt.Seed
	res.SimNs = r.s.Now()
	res.Steps = r.s.Steps()
	res.Pauses = r.pauses
	if r.fork != nil {
		r.probe.switched = r.fork.copies
	}
	res.Checkpoints = r.fork.checkpoints(time.Duration(res.SimNs))
	res.Lines, res.Heals = r.tr.Lines(), r.healed
	summary := fmt.Sprintf("verdict passed=%v class=%s reason=%s at=%d steps=%d\n", res.Passed, res.Class, res.Reason, res.SimNs, res.Steps)
	for _, n := range r.nodes {
		summary += fmt.Sprintf("%s disk ops=%d reads=%d\n", n.prog.Name, n.disk.Ops(), n.disk.Reads())
	}
	res.Digest = r.tr.Digest(summary)
	res.Schedule = &faults.Schedule{Seed: opt.Seed, Duration: faultEnd, Faults: r.applied}
	if sch != nil {
		res.Schedule.Branches = sch.Branches
	}
	if opt.KeepDisks {
		res.Disks = r.keepDisks()
	}
	for _, f := range r.fams {
		if f.result != nil {
			f.result(res)
		}
	}
	res.WallNs = int64(time.Since(start))
	return res, nil
}

// pct's calibration run (preempt.go) is a run of its own, made once per
// Prepared for the preempt family, which sizes its change points from it.

// calibrationWorld is w under strategy none, as the calibration runs it.
func calibrationWorld(w *world.World) *world.World {
	c := *w
	c.Preempt.Strategy, c.Preempt.Interleave = world.StrategyNone, false
	return &c
}

// pctCalls returns each node's counted calls in the calibration run,
// running it first if no run of p did yet. A calibration that fails (the
// context is cancelled) is not kept: the next run tries again.
func (p *Prepared) pctCalls(ctx context.Context) (map[string]uint64, error) {
	c := &p.pct
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.calls, nil
	}
	start := time.Now()
	calls := map[string]uint64{}
	if _, err := p.run(ctx, RunOptions{Seed: pctCalibrationSeed}, runWith{w: calibrationWorld(p.World), calls: calls}); err != nil {
		return nil, fmt.Errorf("pct's calibration run (seed %d under strategy none, which sizes preempt.steps \"auto\"): %w; set preempt.steps to a count to run without it", pctCalibrationSeed, err)
	}
	c.calls, c.wall, c.done = calls, time.Since(start), true
	return calls, nil
}

// openFamilies opens every family for this run, in the order of their
// names, takes the hooks they offer the runner, and links them.
func (r *runner) openFamilies(opt RunOptions, calls map[string]uint64) error {
	e := &env{port: r, w: r.w, seed: r.seed, given: r.given, net: r.net, hosts: len(r.p.Programs), links: &r.links,
		mutant: opt.Mutant, calls: calls,
		calibrate: func() (map[string]uint64, error) { return r.p.pctCalls(r.ctx) },
		declared:  r.p.declared,
	}
	r.links.crashed = func(n *node) {
		for _, f := range r.fams {
			if f.crash != nil {
				f.crash(n)
			}
		}
		r.crashDisk(n)
	}
	for _, def := range families {
		f, err := def.open(e)
		if err != nil {
			return err
		}
		r.fams = append(r.fams, f)
		if f.crashInCall != nil {
			r.links.crashInCall = f.crashInCall
		}
		if f.crashDisk != nil {
			r.crashDisk = f.crashDisk
		}
		if f.datagram != nil {
			r.datagram = f.datagram
		}
		if f.clocks != nil {
			r.clocks = f.clocks
		}
	}
	return nil
}

// keepFamilies is what a checkpoint keeps of the families' state, and
// resumeFamilies gives it back in a fork (family.keep and resume).
func (r *runner) keepFamilies() []any {
	kept := make([]any, len(r.fams))
	for i, f := range r.fams {
		if f.keep != nil {
			kept[i] = f.keep()
		}
	}
	return kept
}

func (r *runner) resumeFamilies(kept []any) {
	for i, f := range r.fams {
		if f.resume != nil && i < len(kept) && kept[i] != nil {
			f.resume(kept[i])
		}
	}
}

func (r *runner) keepDisks() []NodeDisk {
	out := make([]NodeDisk, len(r.nodes))
	for i, n := range r.nodes {
		out[i] = NodeDisk{Node: n.prog.Name, Disk: n.disk}
	}
	return out
}

// wallNow is the virtual wall clock, for file times.
func (r *runner) wallNow() int64 { return wasi.Epoch + r.s.Now() }

// latency draws one chunk's delay on the link from -> to.
func (r *runner) latency(from, to int) int64 {
	lat := r.w.Latency
	fname, tname := r.nodes[from].prog.Name, r.nodes[to].prog.Name
	for _, l := range r.w.Links {
		if (l.From == "" || l.From == fname) && (l.To == "" || l.To == tname) {
			lat = l.Latency
			break
		}
	}
	d := int64(r.netR.Between(lat.Min, lat.Max))
	if r.clocks != nil { // a slow sender or receiver stretches the message
		d = r.clocks.stretch(from, r.clocks.stretch(to, d))
	}
	return d
}

func (r *runner) byName(name string) *node {
	for _, n := range r.nodes {
		if n.prog.Name == name {
			return n
		}
	}
	return nil
}

func (r *runner) byProc(p *sched.Proc) *node {
	for _, n := range r.nodes {
		if n.proc == p {
			return n
		}
	}
	return r.nodes[0]
}

func (r *runner) event(n *node, text string) {
	r.tr.Add(trace.Line{At: r.s.Now(), Node: n.prog.Name, Inc: n.inc, Kind: trace.Event, Text: text})
}

// start launches a new incarnation of n over its disk.
func (r *runner) start(n *node) {
	n.inc++
	n.up, n.crash, n.restartAt, n.ended = true, false, 0, ""
	inc := n.inc
	env := append([]string{"SEEDFALL=1", "SEEDFALL_NODE=" + n.prog.Name}, n.prog.Env...)
	wp := &wasi.Process{
		Name:   n.prog.Name,
		Args:   append([]string{n.prog.Name}, n.prog.Args...),
		Env:    env,
		Now:    r.s.Now,
		Random: rng.ForName(r.seedFor("random"), "random", n.prog.Name, uint64(inc)),
		Order:  rng.ForName(r.seedFor("poll"), "poll", n.prog.Name, uint64(inc)),
		Disk:   n.disk,
		Etc:    n.etc,
		Net:    r.net,
		Host:   n.host,
		Output: func(stream int, line []byte) {
			kind := trace.Stdout
			if stream == 2 {
				kind = trace.Stderr
			}
			r.tr.Add(trace.Line{At: r.s.Now(), Node: n.prog.Name, Inc: inc, Kind: kind, Text: string(line)})
		},
		QuietFor: func(ns int64) { r.quiet(n, ns) },
		// A guest profile follows the WebAssembly stack through the
		// listeners; a pause's unwinding and re-entries would show as
		// calls the guest did not make. The run is the same either way.
		NoPause: r.noPause || r.gprof != nil,
		SetupComplete: func() {
			r.event(n, "setup complete")
			if r.held {
				// faults_after_setup: faults start now; timed faults planned
				// before this moment never fire.
				r.held, r.faultsOn = false, true
				r.event(n, "faults start")
				// A clock skew is how the machine's clock runs from the
				// start: held until now, it takes effect now.
				for _, f := range r.skews {
					f.At = time.Duration(r.s.Now())
					r.apply(f)
				}
				r.skews = nil
			}
		},
	}
	for _, f := range r.fams {
		if f.process != nil {
			f.process(n, wp)
		}
	}
	r.fork.process(n, wp)
	n.wp = wp
	prog := n.running()
	if prog != n.prog {
		r.event(n, "start, upgraded to "+rel(r.w.Dir, prog.UpgradeTo))
	} else {
		r.event(n, "start")
	}
	ictx, cancel := context.WithCancel(r.ctx)
	n.proc = r.s.Go(n.label(), func(p *sched.Proc) { r.body(n, ictx, cancel, wp) })
	wp.Proc = n.proc
	// Set before the process first runs: the watchdog reads it from its
	// own goroutine.
	budget := prog.budget
	n.proc.Interrupt = func() {
		wp.Interrupt()
		if !budget {
			cancel()
		}
	}
}

// body runs on the process's goroutine while it holds the baton.
func (r *runner) body(n *node, ictx context.Context, cancel context.CancelFunc, wp *wasi.Process) {
	defer cancel()
	defer func() {
		// A fork stopped while a tape stood for its guest: stopping asks
		// the tape what the recorded run never did. The run ends without a
		// verdict, so the played guest just goes.
		if v := recover(); v != nil {
			if _, ok := v.(*wasi.Diverged); !ok || r.ctx.Err() == nil {
				panic(v)
			}
		}
	}()
	prog := n.running()
	g := &memGuard{limit: uint64(r.w.MemoryLimitOf(n.prog.Program))}
	g.onRefuse = func() {
		wp.Refused(g.had, g.asked)
		r.event(n, refusedText(g))
	}
	n.mem = g
	c := r.p.e.compiledAs(r.ctx, prog, r.gprof != nil)
	if c.err != nil {
		r.exited(n, 0, c.err)
		return
	}
	ctx, gin := r.gprof.instance(wasi.WithProcess(ictx, wp), n.prog.Name)
	// Anonymous: every instance is named the same, so nothing in a trap
	// message depends on how many instances the process made before.
	cfg := wazero.NewModuleConfig().WithName("")
	var mod api.Module
	var img *bootImage
	var err error
	switch {
	case r.fork.playing(wp):
		// A fork before its moment: the tape stands for the guest.
		if c.pa != nil {
			img = c.pa.playStart(c.rt, wp, g, !r.coldBoot)
		}
		wp.Play.Refused = func(had, asked uint64) {
			if !g.refused {
				g.refused, g.had, g.asked = true, had, asked
				r.event(n, refusedText(g))
			}
		}
		wp.Play.Switch = r.fork.switcher(n, c, func(ctx context.Context, copy *pagedGuest) (api.Module, error) {
			if m, ok, err := img.restoreInto(ctx, c.pa, g, copy); ok {
				return m, err
			}
			// The memory_limit counts what the guest grew, as in the run
			// the copy is of, not the size of the instance it was in.
			adopt := func(api.Module) { g.mem.adopt(g, copy.grown, uint64(copy.size)) }
			return c.pa.prog.RestoreFrom(experimental.WithMemoryAllocator(ctx, g.allocator(prog.mem)), c.rt, cfg, uint32(copy.size), copy.fill, copy.globals, adopt)
		})
		err = wp.PlayStart(ctx)
	case c.pa != nil:
		var cold string
		mod, img, cold, err = c.pa.instantiate(ctx, c.rt, wp, cfg, prog.mem, g, !r.coldBoot)
		if cold != "" {
			r.p.e.coldOnce(prog, cold)
		}
	default:
		mod, err = c.rt.InstantiateModule(experimental.WithMemoryAllocator(ctx, g.allocator(prog.mem)), c.m, cfg.WithStartFunctions("_start"))
	}
	n.img = img
	if r.probe.relocate && c.pa != nil {
		wp.Relocate = func(ctx context.Context, m api.Module) (api.Module, error) {
			snap, err := c.pa.prog.Take(m)
			if err != nil {
				return nil, err
			}
			wp.Reuse = false // its memory is not the pool's
			r.probe.relocated++
			return c.pa.prog.Restore(ctx, c.rt, snap, cfg)
		}
	}
	if mod != nil || wp.Play != nil {
		// A guest that paused to wait returned: wait for it, resume it,
		// until it ends (wasi/pause.go).
		mod, err = wp.Run(ctx, mod, err)
		r.pauses += uint64(wp.Pauses)
		wp.Ended(err)
		for _, f := range r.fams {
			if f.ended != nil {
				f.ended(n, wp)
			}
		}
	}
	gin.end()
	stopped := wp.Overdue() || ictx.Err() != nil
	if mod != nil {
		img.release(ctx, mod, wp, g)
	}
	if n.crash || wp.Killed() {
		return // killed by a crash or at the end of the run: nothing to decide
	}
	wp.FlushOutput()
	wp.Close()
	if stopped {
		// The scheduler reports the watchdog; the run ends here.
		n.up = false
		r.event(n, "stopped by the watchdog")
		return
	}
	var ee *sys.ExitError
	switch {
	case err == nil:
		r.exited(n, 0, nil)
	case errors.As(err, &ee):
		r.exited(n, ee.ExitCode(), nil)
	default:
		r.exited(n, 0, err)
	}
}

// exited decides what a program's end means for the run.
func (r *runner) exited(n *node, code uint32, trap error) {
	n.up = false
	if r.net != nil {
		r.net.HostDown(n.host)
	}
	if trap != nil {
		msg := trapText(trap)
		n.ended = "trapped: " + msg
		r.event(n, "trap: "+msg)
		if r.outOfMemory(n) {
			return
		}
		r.fail(ClassTrap, n, fmt.Sprintf("%s trapped: %s", n.label(), msg))
		return
	}
	r.event(n, fmt.Sprintf("exit %d", code))
	n.ended = fmt.Sprintf("exited %d", code)
	if code == 2 {
		if r.outOfMemory(n) {
			return
		}
		r.fail(ClassPanic, n, fmt.Sprintf("%s panicked (exit status 2)", n.label()))
		return
	}
	switch n.prog.Role {
	case world.RoleWorkload:
		if code != 0 {
			r.fail(ClassWorkload, n, fmt.Sprintf("%s exited with status %d", n.label(), code))
			return
		}
		n.done = true
		for _, m := range r.nodes {
			if m.prog.Role == world.RoleWorkload && !m.done {
				return
			}
		}
		r.workloadsDone()
	case world.RoleFinally:
		if code != 0 {
			r.fail(ClassFinally, n, fmt.Sprintf("finally check %s exited with status %d", n.label(), code))
			return
		}
		r.pass("workloads and finally check exited 0")
	default:
		if code == 0 {
			n.done = true
			return
		}
		if !r.w.Supervise {
			r.fail(ClassExit, n, fmt.Sprintf("%s exited with status %d (set \"supervise\": true to restart nodes that exit with an error)", n.label(), code))
			return
		}
		if r.failedStart(n, code) {
			return
		}
		at := r.s.Now() + int64(n.rst.Between(r.w.Faults.RestartAfter.Min, r.w.Faults.RestartAfter.Max))
		r.event(n, fmt.Sprintf("supervisor restarts it at %v", time.Duration(at)))
		n.restartAt = at
		inc := n.inc
		r.s.At(at, func() {
			if r.res == nil && !n.up && n.inc == inc {
				r.start(n)
			}
		})
	}
}

// A supervised node that never served and fails to start the same way
// giveUpStarts times in a row, over at least giveUpAfter of virtual time,
// with every other program up and no partition or clog in force, will not
// come up: nothing in the world is faulted that could change how its next
// start goes, so the run stops there instead of restarting it until the
// horizon (a badger server that failed at Open 281 times in 45 simulated
// seconds, 4 real minutes, before the client that waited for it gave up).
const (
	giveUpStarts = 8
	giveUpAfter  = int64(time.Second)
)

// failedStart notes that n's incarnation exited with status code: a node
// whose every start so far ended the same way never served. It reports
// whether the run ended here (giveUp).
func (r *runner) failedStart(n *node, code uint32) bool {
	if n.served {
		return false
	}
	words := fmt.Sprintf("status %d", code)
	lines := r.tr.Lines()
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if l.Node == n.prog.Name && l.Inc == n.inc && (l.Kind == trace.Stderr || l.Kind == trace.Stdout) {
			words = fmt.Sprintf("status %d after %q", code, l.Text)
			break
		}
	}
	if n.failedStarts > 0 && trace.Shape(words, 0) != trace.Shape(n.lastWords, 0) {
		n.served = true // it did something else once
		return false
	}
	n.failedStarts++
	n.lastWords = words
	if !r.quietFailure(n) {
		n.quietStarts = 0
		return false
	}
	if n.quietStarts == 0 {
		n.quietSince = r.s.Now()
	}
	n.quietStarts++
	if n.quietStarts < giveUpStarts || r.s.Now()-n.quietSince < giveUpAfter {
		return false
	}
	n.gaveUp = true
	r.fail(ClassExit, n, fmt.Sprintf("%s never served: each of its %d starts exited with %s, the last %d with every other program up and no partition or clog in force, so the run stopped there (nothing faulted could change how its next start goes)",
		n.prog.Name, n.failedStarts, n.lastWords, n.quietStarts))
	return true
}

// quietFailure says whether nothing in the world was faulted when n's
// start failed: no partition or clog in force, every other program up or
// done, and (under include_workload) none of them paused.
func (r *runner) quietFailure(n *node) bool {
	if r.net != nil {
		if groups, clogs := r.net.Faults(); len(groups) > 0 || len(clogs) > 0 {
			return false
		}
	}
	for _, m := range r.nodes {
		if m == n || m.done || m.prog.Role == world.RoleFinally {
			continue
		}
		if !m.up || m.proc.HeldUntil() > 0 {
			return false
		}
	}
	return true
}

// neverServed is what a failing run's verdict adds about the nodes that
// never served: every start exited with an error, the same way.
func (r *runner) neverServed() string {
	var out []string
	for _, n := range r.nodes {
		if !n.served && !n.gaveUp && n.failedStarts >= 2 {
			out = append(out, fmt.Sprintf("%s never served: each of its %d starts exited with %s", n.prog.Name, n.failedStarts, n.lastWords))
		}
	}
	return strings.Join(out, "; ")
}

// workloadsDone starts the finally check, with faults stopped and crashed
// nodes back up, or passes the run.
func (r *runner) workloadsDone() {
	f := r.finally()
	if f == nil {
		r.pass("every workload exited 0")
		return
	}
	r.stopFaults("faults stop for the finally check", "for the finally check")
	// The check gets a duration of its own, or in liveness mode its
	// "within".
	limit := r.w.Duration
	if r.w.Liveness.Within > 0 {
		limit = r.w.Liveness.Within
	}
	r.s.ExtendHorizon(r.s.Now() + int64(limit))
	r.start(f)
}

// stopFaults ends the fault period for good: the recovery phase of
// liveness, or the finally check. announce is the trace line that says so;
// why ends each line about a fault it heals.
func (r *runner) stopFaults(announce, why string) {
	if r.recovering {
		return
	}
	r.recovering = true
	r.faultsOn, r.held = false, false
	r.worldEvent(announce)
	r.healed = append(r.healed, r.s.Now())
	r.healAll(why)
}

// recoveryPhase begins liveness's recovery at the end of the fault period:
// from here the workloads must finish within liveness.within.
func (r *runner) recoveryPhase(at time.Duration) {
	if r.res != nil || r.recovering {
		return
	}
	r.stopFaults(fmt.Sprintf("faults stop at %v: the recovery phase begins, the workloads have %v to finish", at, r.w.Liveness.Within),
		"for the recovery phase")
}

// quiet is sim.QuietFor from n: every fault heals and none starts for d.
func (r *runner) quiet(n *node, d int64) {
	until := r.s.Now() + d
	r.event(n, fmt.Sprintf("quiet for %v, until %v", time.Duration(d), time.Duration(until)))
	r.healed = append(r.healed, r.s.Now())
	if r.recovering || r.res != nil {
		return // faults have stopped for good
	}
	r.quietUntil = max(r.quietUntil, until)
	r.healAll("for a quiet period")
	r.s.At(until, func() {
		if r.res == nil && !r.recovering && r.quietUntil == until {
			r.worldEvent("quiet period ends")
		}
	})
}

// healAll ends every fault in force and restarts every crashed program at
// once.
func (r *runner) healAll(why string) {
	r.healGen++
	for _, f := range r.fams {
		if f.heal != nil {
			f.heal(why)
		}
	}
	for _, n := range r.nodes {
		if n.prog.Role != world.RoleFinally && n.inc > 0 && !n.up && !n.done {
			r.event(n, "restart "+why)
			r.start(n)
		}
	}
}

// unfinished lists the programs the run still waits for: workloads that
// have not exited 0, then the finally check if it runs.
func (r *runner) unfinished() []*node {
	var out []*node
	for _, n := range r.nodes {
		if n.prog.Role == world.RoleWorkload && !n.done {
			out = append(out, n)
		}
	}
	if f := r.finally(); f != nil && f.inc > 0 {
		out = append(out, f)
	}
	if len(out) == 0 {
		out = append(out, nil)
	}
	return out
}

// livenessReason says who did not finish in the recovery phase.
func (r *runner) livenessReason(faultEnd time.Duration) string {
	var names []string
	for _, n := range r.unfinished() {
		if n != nil {
			names = append(names, n.label())
		}
	}
	return fmt.Sprintf("%s did not finish within %v after faults stopped at %v", strings.Join(names, ", "), r.w.Liveness.Within, faultEnd)
}

// worldEvent writes an event about the whole world to the trace.
func (r *runner) worldEvent(text string) {
	r.tr.Add(trace.Line{At: r.s.Now(), Node: "world", Kind: trace.Event, Text: text})
}

func (r *runner) finally() *node {
	for _, n := range r.nodes {
		if n.prog.Role == world.RoleFinally {
			return n
		}
	}
	return nil
}

// apply fires a timed fault, if it can happen now.
func (r *runner) apply(f faults.Fault) {
	if r.held && f.Kind == KindClockSkew {
		r.skews = append(r.skews, f)
		return
	}
	if r.res != nil || !r.faultsActive() {
		return
	}
	for _, fam := range r.fams {
		if fam.apply != nil && fam.apply(f) {
			return
		}
	}
}

func (r *runner) pass(reason string) {
	if r.res != nil {
		return
	}
	for _, f := range r.fams {
		if f.check == nil {
			continue
		}
		if class, n, why := f.check(); class != "" {
			r.fail(class, n, why)
			return
		}
	}
	r.finish(reason)
}

// finish ends the run as passed, without the families' checks.
func (r *runner) finish(reason string) {
	if r.res != nil {
		return
	}
	r.res = &Result{Passed: true, Reason: reason}
	r.s.Stop()
}

func (r *runner) fail(class string, n *node, reason string) {
	if r.res != nil {
		return
	}
	r.res = &Result{Class: class, Reason: reason}
	if n != nil {
		r.res.Node = n.prog.Name
	}
	r.s.Stop()
}

// outOfMemory fails the run with ClassMemory if n's memory was refused a
// grow, and reports whether it did: how a program that ran out of memory
// ends (exit status 2 from Go's runtime, a trap from others) says nothing
// more than that.
func (r *runner) outOfMemory(n *node) bool {
	g := n.mem
	if g == nil || !g.refused {
		return false
	}
	raise := `raise "memory_limit"`
	if n.prog.MemoryLimit > 0 {
		raise = fmt.Sprintf(`raise "memory_limit" in %s`, n.prog.Path)
	}
	r.fail(ClassMemory, n, fmt.Sprintf("%s ran out of memory: it had %s and asked for %s more, over its memory_limit of %s (a leak? %s if it needs more)",
		n.label(), memText(g.had), memText(g.asked-g.had), memText(g.limit), raise))
	return true
}

// state captures the world now.
func (r *runner) state() *State {
	st := &State{At: time.Duration(r.s.Now()), QuietUntil: time.Duration(max(r.quietUntil, 0)),
		Recovering: r.recovering, FaultsHeld: r.held}
	if st.QuietUntil <= st.At {
		st.QuietUntil = 0
	}
	if r.net != nil {
		groups, clogs := r.net.Faults()
		for _, g := range groups {
			var names []string
			for _, h := range g {
				names = append(names, r.nodes[h].prog.Name)
			}
			st.Partition = append(st.Partition, names)
		}
		st.Clogs = clogs
	}
	for _, n := range r.nodes {
		ps := ProgramState{Name: n.prog.Name, Role: n.prog.Role.String(), Inc: n.inc, Slow: 1}
		switch {
		case n.inc == 0:
			ps.What = "not started"
			if n.prog.Role == world.RoleFinally {
				ps.What = "not started (it starts once every workload has exited 0)"
			}
		case n.up && n.proc.HeldUntil() > 0:
			ps.What = fmt.Sprintf("paused until %v", time.Duration(n.proc.HeldUntil()))
		case n.up:
			ps.What = "running"
		case n.done:
			ps.What = "exited 0"
		case n.restartAt > 0:
			ps.What = fmt.Sprintf("down, restarts at %v", time.Duration(n.restartAt))
		case n.ended != "":
			ps.What = n.ended // not a crash: it ended by itself
		default:
			ps.What = "down"
		}
		if r.clocks != nil {
			slow, wall := r.clocks.clock(n.host)
			ps.Slow, ps.WallOffset = slow, time.Duration(wall)
		}
		if r.net != nil && n.up {
			ps.Conns = r.net.Conns(n.host)
		}
		// The root's entries first (the create of data/, say): a crash
		// loses them as surely as any directory's.
		if rst, pending := n.disk.RootPending(); pending > 0 {
			ps.Pending = append(ps.Pending, PendingFile{Path: "/", Dir: true, Size: rst.Size, DurableSize: rst.Size, Ops: pending})
		}
		n.disk.Walk(func(path string, s disk.Stat, durable int64, pending int) {
			if pending > 0 {
				ps.Pending = append(ps.Pending, PendingFile{Path: path, Dir: s.Type == disk.TypeDirectory,
					Size: s.Size, DurableSize: durable, Ops: pending})
			}
		})
		st.Programs = append(st.Programs, ps)
	}
	return st
}

// seedFor is the seed a stream draws from now: the run's seed, re-keyed by
// every branch applied so far that names the stream or all streams.
func (r *runner) seedFor(stream string) uint64 { return rekeyedSeed(r.seed, r.rekeyed, stream) }

// branch applies one branch (branch.go): long-lived streams restart from their new
// keys; streams made per draw pick theirs up through seedFor.
func (r *runner) branch(b faults.Branch) {
	if r.res != nil {
		return
	}
	r.rekeyed = append(r.rekeyed, b)
	what := "every stream"
	if b.Stream != "" {
		what = "the " + b.Stream + " stream"
	}
	r.worldEvent(fmt.Sprintf("branch: %s re-keyed with %d", what, b.Key))
	on := func(stream string) bool { return b.Stream == "" || b.Stream == stream }
	if on("sched") {
		r.s.Rekey(rng.New(r.seedFor("sched"), "sched", -1))
	}
	if on("net") {
		r.netR = rng.New(r.seedFor("net"), "net", -1)
	}
	for _, f := range r.fams {
		if f.rekey != nil {
			f.rekey(on) // disklatency
		}
	}
	for _, n := range r.nodes {
		name := n.prog.Name
		if on("random") && n.up && n.wp != nil {
			n.wp.Random = rng.ForName(r.seedFor("random"), "random", name, uint64(n.inc))
		}
		if on("poll") && n.up && n.wp != nil {
			n.wp.Order = rng.ForName(r.seedFor("poll"), "poll", name, uint64(n.inc))
		}
		if on("cpu") && n.up && n.wp != nil && n.wp.CPU != nil {
			n.wp.CPU.Stream = rng.ForName(r.seedFor("cpu"), "cpu", name, uint64(n.inc))
		}
		if b.Stream == "" {
			n.rst = rng.ForName(r.seedFor("restart"), "restart", name)
		}
	}
}

// appendNetEvent encodes a network event for the digest: cheaper than
// formatting it, and just as exact.
func appendNetEvent(b []byte, e netsim.Event) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(e.At))
	b = append(b, e.Kind...)
	b = binary.LittleEndian.AppendUint32(b, uint32(e.Host))
	b, _ = e.Local.AppendBinary(b)
	b, _ = e.Remote.AppendBinary(b)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Bytes))
	return binary.LittleEndian.AppendUint64(b, uint64(e.Arrive))
}

// trapText is the first line of a trap's error without wazero's
// "module[NAME] " prefix: the instance name says nothing to the user, and
// no instance name may reach the trace.
func trapText(err error) string {
	s := firstLine(err.Error())
	if strings.HasPrefix(s, "module[") {
		if i := strings.Index(s, "] "); i >= 0 {
			s = s[i+2:]
		}
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
