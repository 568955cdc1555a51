// Package wasi is seedfall's own wasi_snapshot_preview1: every function Go's
// wasip1 port imports, implemented over the simulated world instead of the
// host. Nothing here reaches the host's clock, random source, files or
// network. It also provides the `seedfall` host module that the guest API
// (package sim) and the net overlay call.
//
// A Process is the OS-side state of one running instance: its fd table,
// clock, random stream, output and links to its node's disk and network.
// Host functions find it through the context passed to InstantiateModule.
package wasi

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/guest"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/sched"
)

// Epoch is the wall-clock time at virtual time 0: 2025-01-01T00:00:00Z.
const Epoch int64 = 1735689600 * 1e9

// monoBase keeps the monotonic clock away from zero, as a real uptime is.
const monoBase int64 = 1e9

// ExitKilled is the exit code of an instance that was killed (a crash).
const ExitKilled = 137

// Process is one running instance of a program.
type Process struct {
	Name string
	Args []string // argv, including argv[0]
	Env  []string // "K=V"

	Proc   *sched.Proc
	Now    func() int64 // virtual ns since the start of the run
	Random rng.Stream
	// Order draws the order in which poll_oneoff reports what is ready
	// when more than one thing is: the guest's runtime runs the goroutines
	// it readies in that order. A zero stream is a valid one.
	Order rng.Stream

	Disk *disk.Disk // the node's disk, preopened as "/" and the working directory
	Etc  *disk.Disk // read-only "/etc" (hosts), or nil

	Net  *netsim.Network // nil without net_overlay
	Host int             // this node's host index in Net

	// Output receives each complete line written to stdout (1) or stderr (2).
	Output func(stream int, line []byte)
	// SetupComplete is called when the program calls sim.SetupComplete().
	SetupComplete func()
	// QuietFor is called when the program calls sim.QuietFor(ns).
	QuietFor func(ns int64)
	// Buggify is asked when the program calls sim.Buggify at site
	// ("file:line") with firing probability prob; nil never fires.
	Buggify func(site string, prob float64) bool
	// Assert receives each sim property evaluation; true means it failed the run and the guest must stop.
	Assert func(a Assertion) (stop bool)
	// History records the program's sim.Put, Get and Invoke; nil records nothing.
	History HistoryRecorder
	// SyncDelay, if set, is the virtual time each file or directory fsync
	// takes (disk_latency); the node waits that long before it syncs.
	SyncDelay func() int64
	// WallOffset, if set, is added to the wall clock (clock skew and jumps);
	// the monotonic clock never sees it.
	WallOffset func() int64
	// Slow, if set, is the node's slowdown factor (at least 1): each wait
	// for a timer takes that many times as long.
	Slow func() float64
	// Preempt, if set, is called when a guest built with guest.CountCalls
	// has used up its count of calls: it may preempt the running goroutine,
	// and must load the next count into calls.
	Preempt func(m api.Module, calls api.MutableGlobal)
	// CPU, if set, makes the guest's work take virtual time (cpu.go).
	CPU *CPU
	// Arrived, if set, is called at a host call of a node that has just
	// paid for its work (cpu.go) when something reached its TCP sockets
	// while it computed: m is the module the call came from. It is called
	// before the call does its work.
	Arrived func(m api.Module)
	// Boot, if set, makes this a snapshot boot (boot.go): the guest pauses
	// at the snapshot point, and a host call that a copy could not repeat
	// stops it. Output goes to Boot, not to Output.
	Boot *BootLog
	// Cover is where a guest built with coverage keeps its counters, once
	// it said so (cover.go), or its snapshot boot did (Replay).
	Cover *Cover
	// MonoStart is the virtual time at which the monotonic clock reads
	// what it read at the start of the run: an incarnation restored from a
	// snapshot continues the snapshot's clock (0 for a boot of its own).
	MonoStart int64
	// Reuse keeps the instance open when the guest exits or is killed, so
	// that the engine can put it back to a snapshot for the next start
	// (Reusable says whether it may).
	Reuse bool
	// NoPause makes the guest wait inside its host calls even when its
	// module can pause (pause.go): for comparison.
	NoPause bool
	// Relocate, if set, is called before each resume of a paused guest
	// without mappings (pause.go): it returns the instance to resume,
	// either m or a new instance of the same module holding a copy of m's
	// memory and globals, which then replaces m (m is closed). It is how
	// the tests show that a paused guest is its memory and globals.
	Relocate func(ctx context.Context, m api.Module) (api.Module, error)
	// Pauses counts the times the guest paused to wait.
	Pauses int

	// Tape, if set, records what the guest does, as the host sees it
	// (tape.go); Play, if set, plays a tape back instead of running a
	// guest.
	Tape *Tape
	Play *Playback

	cpu     cpuState
	rec     *recModule // the recording wrapper of the instance
	inCall  bool       // a host call is being served (what it reads goes on the tape)
	pz      *pauser    // what pausing needs, once looked for
	waiting *waiting   // what the paused guest waits for
	parked  api.Module // the guest's instance while it waits in Run
	inst    api.Module // the guest's instance, as the last host call saw it (mappings read through it)
	again   *reissue   // what the call that paused decided

	fds      []*fdEntry
	maps     []*procMap // mappings by address (mmap.go)
	lineBuf  [3][]byte  // the partial line of stdout and stderr: at most MaxLine+1 bytes
	lineCut  [3]int     // bytes of that line left out past lineBuf
	exitCode uint32
	exited   bool
	killed   bool
	overdue  atomic.Bool
}

// Interrupt asks the process to stop at its next host call or loop budget
// check: the watchdog found it running too long. It is safe to call from
// any goroutine.
func (p *Process) Interrupt() { p.overdue.Store(true) }

// Overdue reports whether the process was stopped by Interrupt.
func (p *Process) Overdue() bool { return p.overdue.Load() }

// Killed reports whether the process was killed while it waited.
func (p *Process) Killed() bool { return p.killed }

// Exited reports whether the process called proc_exit, and its code.
func (p *Process) Exited() (bool, uint32) { return p.exited, p.exitCode }

// procKey is a pointer, so that finding it in a context compares two
// words: a host call looks it up once or twice.
var procKey = new(struct{ byte })

// WithProcess returns a context under which host functions act for p.
func WithProcess(ctx context.Context, p *Process) context.Context {
	p.init()
	return context.WithValue(ctx, procKey, p)
}

func proc(ctx context.Context) *Process { return ctx.Value(procKey).(*Process) }

// Instantiate registers the wasi_snapshot_preview1 and seedfall host modules
// in r. One registration serves every world that uses the runtime.
func Instantiate(ctx context.Context, r wazero.Runtime) error {
	b := r.NewHostModuleBuilder("wasi_snapshot_preview1")
	for _, f := range wasiFuncs {
		b.NewFunctionBuilder().WithGoModuleFunction(watchedFunc("wasi_snapshot_preview1/"+f.name), f.params, f.results).Export(f.name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return err
	}
	b = r.NewHostModuleBuilder("seedfall")
	for _, f := range seedfallFuncs {
		b.NewFunctionBuilder().WithGoModuleFunction(watchedFunc("seedfall/"+f.name), f.params, f.results).Export(f.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

// watched wraps a host function so that it first stops the guest if the
// watchdog found it overdue. The loop budget hands control back to the host
// only after about a million loop iterations; a guest whose loop is a host
// call that does much work each time (a write of 16 MiB, say) would run on
// for seconds or minutes before its budget ran out. With the check, the
// watchdog bounds the real time spent in host calls as well as in guest
// code: a guest stops at its next host call after the watchdog fires, and
// one host call does at most work in proportion to its guest's memory. The
// check is a context look-up and an atomic load (BenchmarkWatched); it
// changes nothing that a run the watchdog does not stop can see.
//
// It also keeps the CPU account (cpu.go): every host call charges the calls
// counted since the last one, and all but the pure ones pay the debt first,
// so what the call does happens when the work before it is done.
//
// In a snapshot boot (boot.go) it lets through only the calls that a copy
// of the snapshot can stand for. With a Tape it records the call and what
// it reads of the guest (tape.go); key names the function on the tape.
func watched(name, key string, f api.GoModuleFunc, pure bool) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, s []uint64) {
		if p, ok := ctx.Value(procKey).(*Process); ok {
			if p.Play == nil {
				p.inst = m
			}
			if p.recording() && p.Play == nil {
				p.Tape.add(tapeItem{op: tapeCall, name: key, params: slices.Clone(s)})
				m = p.recModule(m)
				p.inCall = true
				defer func() { p.inCall = false }()
			}
			if p.Boot != nil && !p.Boot.check(name, s) {
				stopBoot(ctx, m)
			}
			if p.overdue.Load() {
				stopOverdue(ctx, m)
			}
			if p.CPU != nil {
				p.account(m)
				if p.CPU != nil {
					min := int64(1)
					if pure {
						min = p.CPU.Quantum
					}
					// The instrumentation's own sched_yield calls
					// (guest.Instrument, guest.CountCalls) are not a
					// wrapper's: they cannot pause.
					pausable := name != "sched_yield" || !instrumentYield(m)
					if p.payCPU(ctx, m, min, pausable) {
						return // paused: the guest issues the call again
					}
					p.noteArrivals(m)
				}
			}
		}
		f(ctx, m, s)
	}
}

// pure are the host calls that nobody else can see: they need not wait for
// the node's work to be paid for (cpu.go), except when its debt reaches a
// quantum. The clock calls show the debt instead.
var pure = map[string]bool{
	"args_get": true, "args_sizes_get": true, "environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true, "random_get": true, "sched_yield": true,
	"fd_fdstat_get": true, "fd_prestat_get": true, "fd_prestat_dir_name": true,
}

// stopOverdue ends a guest the watchdog stopped: the run ends with it.
func stopOverdue(ctx context.Context, m api.Module) {
	_ = m.CloseWithExitCode(ctx, ExitKilled)
	panic(sys.NewExitError(ExitKilled))
}

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      api.GoModuleFunc
}

func vt(ts ...api.ValueType) []api.ValueType { return ts }

func fn(name string, params []api.ValueType, f func(ctx context.Context, m api.Module, s []uint64) errno.Errno) hostFunc {
	return hostFunc{name: name, params: params, results: vt(i32), fn: func(ctx context.Context, m api.Module, s []uint64) {
		s[0] = uint64(f(ctx, m, s))
	}}
}

// watchedFunc returns the watched host function of a module and name, as
// Instantiate registers it and tapes are played back (tape.go). The table
// is made on first use, once every init has added its functions.
func watchedFunc(key string) api.GoModuleFunc {
	watchedFuncsOnce.Do(makeWatchedFuncs)
	return watchedFuncs[key]
}

var (
	watchedFuncs     map[string]api.GoModuleFunc
	watchedFuncsOnce sync.Once
)

func makeWatchedFuncs() {
	watchedFuncs = map[string]api.GoModuleFunc{}
	for _, f := range wasiFuncs {
		key := "wasi_snapshot_preview1/" + f.name
		watchedFuncs[key] = watched(f.name, key, f.fn, pure[f.name])
	}
	for _, f := range seedfallFuncs {
		key := "seedfall/" + f.name
		watchedFuncs[key] = watched(f.name, key, f.fn, false)
	}
}

var wasiFuncs = []hostFunc{
	fn("args_get", vt(i32, i32), argsGet),
	fn("args_sizes_get", vt(i32, i32), argsSizesGet),
	fn("environ_get", vt(i32, i32), environGet),
	fn("environ_sizes_get", vt(i32, i32), environSizesGet),
	fn("clock_res_get", vt(i32, i32), clockResGet),
	fn("clock_time_get", vt(i32, i64, i32), clockTimeGet),
	fn("fd_close", vt(i32), fdClose),
	fn("fd_datasync", vt(i32), syncCall(disk.SyncData, false)),
	fn("fd_fdstat_get", vt(i32, i32), fdFdstatGet),
	fn("fd_fdstat_set_flags", vt(i32, i32), fdFdstatSetFlags),
	fn("fd_fdstat_set_rights", vt(i32, i64, i64), fdFdstatSetRights),
	fn("fd_filestat_get", vt(i32, i32), fdFilestatGet),
	fn("fd_filestat_set_size", vt(i32, i64), fdFilestatSetSize),
	fn("fd_filestat_set_times", vt(i32, i64, i64, i32), fdFilestatSetTimes),
	fn("fd_pread", vt(i32, i32, i32, i64, i32), fdPread),
	fn("fd_prestat_get", vt(i32, i32), fdPrestatGet),
	fn("fd_prestat_dir_name", vt(i32, i32, i32), fdPrestatDirName),
	fn("fd_pwrite", vt(i32, i32, i32, i64, i32), fdPwrite),
	fn("fd_read", vt(i32, i32, i32, i32), fdRead),
	fn("fd_readdir", vt(i32, i32, i32, i64, i32), fdReaddir),
	fn("fd_seek", vt(i32, i64, i32, i32), fdSeek),
	fn("fd_sync", vt(i32), syncCall(disk.SyncFsync, false)),
	fn("fd_tell", vt(i32, i32), fdTell),
	fn("fd_write", vt(i32, i32, i32, i32), fdWrite),
	fn("path_create_directory", vt(i32, i32, i32), pathCreateDirectory),
	fn("path_filestat_get", vt(i32, i32, i32, i32, i32), pathFilestatGet),
	fn("path_filestat_set_times", vt(i32, i32, i32, i32, i64, i64, i32), pathFilestatSetTimes),
	fn("path_link", vt(i32, i32, i32, i32, i32, i32, i32), pathLink),
	fn("path_open", vt(i32, i32, i32, i32, i32, i64, i64, i32, i32), pathOpen),
	fn("path_readlink", vt(i32, i32, i32, i32, i32, i32), pathReadlink),
	fn("path_remove_directory", vt(i32, i32, i32), pathRemoveDirectory),
	fn("path_rename", vt(i32, i32, i32, i32, i32, i32), pathRename),
	fn("path_symlink", vt(i32, i32, i32, i32, i32), pathSymlink),
	fn("path_unlink_file", vt(i32, i32, i32), pathUnlinkFile),
	fn("poll_oneoff", vt(i32, i32, i32, i32), pollOneoff),
	{name: "proc_exit", params: vt(i32), fn: procExit},
	fn("random_get", vt(i32, i32), randomGet),
	fn("sched_yield", nil, schedYield),
	fn("sock_accept", vt(i32, i32, i32), sockAccept),
	fn("sock_recv", vt(i32, i32, i32, i32, i32, i32), nosys),
	fn("sock_send", vt(i32, i32, i32, i32, i32), nosys),
	fn("sock_shutdown", vt(i32, i32), sockShutdown),
	fn("proc_raise", vt(i32), nosys),
	fn("fd_advise", vt(i32, i64, i64, i32), success),
	fn("fd_allocate", vt(i32, i64, i64), fdAllocate),
	fn("fd_renumber", vt(i32, i32), nosys),
}

func nosys(context.Context, api.Module, []uint64) errno.Errno   { return errno.ENOSYS }
func success(context.Context, api.Module, []uint64) errno.Errno { return errno.SUCCESS }

var le = binary.LittleEndian

// kill unwinds the guest after its process was killed while blocked.
func kill(ctx context.Context, m api.Module) {
	p := proc(ctx)
	p.detachMappings() // while the memory is still there
	p.close(ctx, m, ExitKilled)
	panic(sys.NewExitError(ExitKilled))
}

// close closes the guest's module as it ends, unless the engine reuses it.
func (p *Process) close(ctx context.Context, m api.Module, code uint32) {
	if !p.Reuse {
		_ = m.CloseWithExitCode(ctx, code)
	}
}

// Reusable reports whether the guest's instance may start another
// incarnation: the guest exited or was killed (so no mapping refers to
// its memory any more), and nothing closed it.
func (p *Process) Reusable(m api.Module) bool {
	return p.Reuse && (p.exited || p.killed) && len(p.maps) == 0 && !m.IsClosed()
}

// block parks the calling instance until readyAt's time, or kills it. A
// guest that can pause pauses instead (pause.go), and block returns true:
// the host function must return at once, for the guest to issue the call
// again.
func (p *Process) block(ctx context.Context, m api.Module, readyAt func() int64) (paused bool) {
	if p.pauseFor(m, readyAt) {
		return true
	}
	if p.Proc.Block(readyAt) {
		p.killed = true
		kill(ctx, m)
	}
	return false
}

func procExit(ctx context.Context, m api.Module, s []uint64) {
	p := proc(ctx)
	code := uint32(s[0])
	p.exited, p.exitCode = true, code
	p.FlushOutput()
	p.unmapAll()
	p.closeAll()
	p.close(ctx, m, code)
	panic(sys.NewExitError(code))
}

// ---- args and environment ----

func strsGet(m api.Module, list []string, ptrs, buf uint32) errno.Errno {
	mem := m.Memory()
	// Positions in 64 bits: a guest pointer near the top of memory must
	// fault, not wrap around to address 0.
	p, b := uint64(ptrs), uint64(buf)
	for _, s := range list {
		if !span(mem, 0, p+4) || !span(mem, 0, b+uint64(len(s))+1) {
			return errno.EFAULT
		}
		mem.WriteUint32Le(uint32(p), uint32(b))
		mem.WriteString(uint32(b), s)
		mem.Write(uint32(b)+uint32(len(s)), []byte{0}) // not WriteByte: tapes record Write (tape.go)
		p += 4
		b += uint64(len(s)) + 1
	}
	return 0
}

func strsSizes(m api.Module, list []string, countPtr, sizePtr uint32) errno.Errno {
	n := uint32(0)
	for _, s := range list {
		n += uint32(len(s)) + 1
	}
	if !m.Memory().WriteUint32Le(countPtr, uint32(len(list))) || !m.Memory().WriteUint32Le(sizePtr, n) {
		return errno.EFAULT
	}
	return 0
}

func argsGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return strsGet(m, proc(ctx).Args, uint32(s[0]), uint32(s[1]))
}
func argsSizesGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return strsSizes(m, proc(ctx).Args, uint32(s[0]), uint32(s[1]))
}
func environGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return strsGet(m, proc(ctx).Env, uint32(s[0]), uint32(s[1]))
}
func environSizesGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return strsSizes(m, proc(ctx).Env, uint32(s[0]), uint32(s[1]))
}

// ---- clocks, randomness, yielding ----

const (
	clockRealtime  = 0
	clockMonotonic = 1
)

// clock reads a clock in its own base: wall ns since the Unix epoch, or
// monotonic ns.
func (p *Process) clock(id uint32) (int64, bool) {
	switch id {
	case clockRealtime:
		if p.WallOffset != nil {
			return WallClock(Epoch+p.Now()+p.cpuDebt(), p.WallOffset()), true
		}
		return Epoch + p.Now() + p.cpuDebt(), true
	case clockMonotonic, 2, 3: // process and thread CPU time count as monotonic time
		return monoBase + p.Now() - p.MonoStart + p.cpuDebt(), true
	}
	return 0, false
}

// WallClock is the wall clock at true time now (ns since the Unix epoch)
// moved by offset (clock skew and jumps), saturated to what the guest's
// unsigned clock can show without wrapping: no earlier than the epoch, no
// later than the largest int64 (the year 2262), however far the offset goes.
func WallClock(now, offset int64) int64 {
	switch {
	case offset > 0 && now > math.MaxInt64-offset:
		return math.MaxInt64
	case now+offset < 0:
		return 0
	}
	return now + offset
}

// stretch scales a wait of d ns by the slowdown factor in force.
func (p *Process) stretch(d int64) int64 {
	if p.Slow == nil || d <= 0 {
		return d
	}
	f := p.Slow()
	if f <= 1 {
		return d
	}
	x := float64(d) * f
	if x >= 1<<62 {
		return 1 << 62
	}
	return int64(x)
}

func clockResGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	if _, ok := proc(ctx).clock(uint32(s[0])); !ok {
		return errno.EINVAL
	}
	if !m.Memory().WriteUint64Le(uint32(s[1]), 1) {
		return errno.EFAULT
	}
	return 0
}

func clockTimeGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	t, ok := proc(ctx).clock(uint32(s[0]))
	if !ok {
		return errno.EINVAL
	}
	if !m.Memory().WriteUint64Le(uint32(s[2]), uint64(t)) {
		return errno.EFAULT
	}
	return 0
}

func randomGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	buf, ok := m.Memory().Read(uint32(s[0]), uint32(s[1]))
	if !ok {
		return errno.EFAULT
	}
	p := proc(ctx)
	p.Random.Fill(buf)
	return 0
}

func schedYield(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	// A guest instrumented by engine/guest calls sched_yield when its loop
	// budget runs out: give it a new budget, and stop it if the watchdog
	// says so. This is not a scheduling point: it happens at the same place
	// in every run, but changes nothing the guest can see.
	if g, ok := m.ExportedGlobal(guest.BudgetGlobal).(api.MutableGlobal); ok && uint32(g.Get()) == 0 {
		g.Set(guest.LoopBudget)
		if p.overdue.Load() {
			stopOverdue(ctx, m)
		}
		return 0
	}
	// Likewise when its count of calls runs out (guest.CountCalls): a
	// preemption point, decided by the engine, not a yield to other nodes.
	if p.Preempt != nil {
		if c, ok := m.ExportedGlobal(guest.CallsGlobal).(api.MutableGlobal); ok && uint32(c.Get()) == 0 {
			p.Preempt(m, c)
			p.counterLoaded()
			return 0
		}
	}
	if p.Boot != nil {
		return 0 // a snapshot boot runs alone
	}
	if r := p.takeReissue(); r != nil && r.yielded {
		return 0 // issued again after the yield paused
	}
	now := p.Now()
	if p.block(ctx, m, func() int64 { return now }) {
		p.again = &reissue{yielded: true}
	}
	return 0
}

// instrumentYield reports whether a sched_yield call comes from the
// instrumentation, whose counters are at zero when it calls, rather than
// from the runtime's wrapper.
func instrumentYield(m api.Module) bool {
	for _, name := range [...]string{guest.BudgetGlobal, guest.CallsGlobal} {
		if g, ok := m.ExportedGlobal(name).(api.MutableGlobal); ok && uint32(g.Get()) == 0 {
			return true
		}
	}
	return false
}

// ---- output ----

// writeOutput captures stdout and stderr line by line. Of a line longer
// than MaxLine the host keeps MaxLine+1 bytes, enough to cut it as cut
// does, and only counts the rest as it passes: the line reaches the run's
// output once, when it ends, cut to at most MaxLine bytes and marked with
// the count of bytes left out. Each byte written is looked at once.
func (p *Process) writeOutput(stream int, b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if room := MaxLine + 1 - len(p.lineBuf[stream]); len(part) > room {
			p.lineCut[stream] += len(part) - room
			part = part[:room]
		}
		p.lineBuf[stream] = append(p.lineBuf[stream], part...)
		if i < 0 {
			return
		}
		p.emitLine(stream)
		b = b[i+1:]
	}
}

// emitLine passes on the buffered line of stream, cut if it is longer than
// MaxLine, and empties the buffer.
func (p *Process) emitLine(stream int) {
	line := p.lineBuf[stream]
	if p.Output != nil {
		if len(line) > MaxLine {
			p.Output(stream, []byte(cutTo(line, MaxLine, p.lineCut[stream])))
		} else {
			p.Output(stream, line)
		}
	}
	p.lineBuf[stream], p.lineCut[stream] = line[:0], 0
}

// Close closes every descriptor the process still holds, as the kernel does
// when a process ends.
func (p *Process) Close() { p.closeAll() }

// FlushOutput emits partial lines, as when a process ends.
func (p *Process) FlushOutput() {
	for stream := 1; stream <= 2; stream++ {
		if len(p.lineBuf[stream]) > 0 {
			p.emitLine(stream)
		}
	}
}

// windowMemory is a memory whose buffers a call reads into can be told
// from those it reads: a tape (tape.go) keeps where a window is, not what
// it held, since the host only writes into it.
type windowMemory interface {
	window(off, n uint32) ([]byte, bool)
}

// readIovecs returns the guest buffers of an iovec array: EINVAL for more
// than IovMax iovecs, EFAULT when the array or a buffer is outside memory.
// Past MaxRW bytes in all the buffers are dropped, so that the call moves
// at most that many, as Linux's readv and writev do.
func readIovecs(m api.Module, iovs, n uint32) ([][]byte, errno.Errno) {
	return iovecs(m, iovs, n, false)
}

// writeIovecs is readIovecs for buffers the call only writes into
// (fd_read): the host must not look at what they hold.
func writeIovecs(m api.Module, iovs, n uint32) ([][]byte, errno.Errno) {
	return iovecs(m, iovs, n, true)
}

func iovecs(m api.Module, iovs, n uint32, into bool) ([][]byte, errno.Errno) {
	if n > IovMax {
		return nil, errno.EINVAL
	}
	mem := m.Memory()
	raw, ok := mem.Read(iovs, n*8) // n*8 <= 8 KiB: no overflow
	if !ok {
		return nil, errno.EFAULT
	}
	out := make([][]byte, 0, n)
	room := uint64(MaxRW)
	for i := uint32(0); i < n; i++ {
		ptr, l := le.Uint32(raw[i*8:]), le.Uint32(raw[i*8+4:])
		var b []byte
		var ok bool
		if w, is := mem.(windowMemory); is && into {
			b, ok = w.window(ptr, l)
		} else {
			b, ok = mem.Read(ptr, l)
		}
		if !ok {
			return nil, errno.EFAULT
		}
		if uint64(len(b)) > room {
			b = b[:room]
		}
		room -= uint64(len(b))
		out = append(out, b)
	}
	return out, 0
}
