package proto

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/guest/pauseoverlay"
)

// World is a toy world in which one host goroutine runs every guest: the
// shape the engine's loop takes once guests pause when idle (pauseoverlay.Options.Idle).
// Each guest runs until it pauses or exits; the loop then resumes, in a
// fixed order, every guest one of whose subscriptions is due, and when none
// is, moves the virtual clock to the earliest moment one will be. There is
// no baton and no goroutine per guest.
//
// The world has a virtual clock, a loopback-only TCP network with a fixed
// latency between every two sockets (the net overlay's host calls; every
// guest is one host, listeners are found by port), and fsyncs that take
// FsyncDelay (the fsync overlay's host calls, on any fd; nothing is
// written anywhere). Guests have no files: stdout and stderr go to
// Proc.Out. It is a prototype's test bed, not the engine's WASI layer.
type World struct {
	Now        int64 // virtual nanoseconds
	Latency    int64 // one way, for connects, data and closes
	FsyncDelay int64
	// Block makes guests block in poll_oneoff instead of pausing: idle
	// answers 0 and poll_oneoff, when nothing is due, moves the clock on
	// itself (HandOff, if set, is called with the time to move it to, as a
	// hand-off to a scheduler would). Only for a world of one guest.
	Block   bool
	HandOff func(wake int64)
	// Seed seeds each guest's random_get stream, with its index.
	Seed uint64
	// PauseAtMain answers snapshot_point: guests pause before main.main,
	// where Spawn returns them, to be copied (Program.Take).
	PauseAtMain bool

	procs     []*Proc
	listeners map[uint32]*sock
	ports     uint32
}

// Proc is one guest of a World.
type Proc struct {
	Name   string
	Out    bytes.Buffer // stdout and stderr
	M      api.Module
	Pauses int // times it paused when idle
	Exited bool
	Code   uint32

	w         *World
	ctx       context.Context
	addr      string
	waits     []Subscription
	waitSince int64
	fds       map[int32]any // *sock or *fsyncOp
	nextFd    int32
	random    *rand.ChaCha8
	resumeFn  api.Function
	prog      *Program
}

type sock struct {
	listener    bool
	port        uint32
	local       string
	remote      string
	backlog     []pending // listener: connections not yet accepted
	peer        *sock
	in          []chunk // data on its way or arrived, in order
	eofAt       int64   // when the peer's close or shutdown arrives; -1 if it has not closed
	connectedAt int64   // when a connect completes
	refused     bool
}

type pending struct {
	at int64
	s  *sock
}

type chunk struct {
	at   int64
	data []byte
}

type fsyncOp struct{ at int64 }

const never = math.MaxInt64

// monoBase keeps the monotonic clock from zero, which Go's runtime refuses.
const monoBase = 1e9

// epoch is the wall clock at time 0: 2025-01-01T00:00:00Z.
const epoch = 1735689600 * 1e9

// NewWorld returns an empty world at time 0.
func NewWorld() *World {
	return &World{Latency: 1e6, FsyncDelay: 5e6, listeners: map[uint32]*sock{}, ports: 40000}
}

type procKey struct{}

func procOf(ctx context.Context) *Proc {
	p, _ := ctx.Value(procKey{}).(*Proc)
	return p
}

// SpawnReset puts the instance of prev, an exited guest of prog (of this
// world or another), back to s (Program.Reset: under a context from
// WithCOW, in place) and runs it in the world as SpawnFrom does: a restart
// that makes no new instance.
func (w *World) SpawnReset(ctx context.Context, prog *Program, s *pauseoverlay.Snapshot, prev *Proc, addr, name string) (*Proc, error) {
	if !prev.Exited {
		return nil, fmt.Errorf("pause world: %s has not exited: its instance is in use", prev.Name)
	}
	p, _ := w.newProc(ctx, prog, wazero.NewModuleConfig(), addr, name)
	m := prev.M
	p.M, p.resumeFn = m, prev.resumeFn
	if err := prog.Reset(p.ctx, m, s, m.Memory().Size()); err != nil {
		return nil, err
	}
	return w.started(p, m, p.resume()), nil
}

// Spawn starts a guest of prog (a module compiled into a runtime prepared
// by InstallWorldHost) at the world's current time, with address addr
// ("10.0.0.1") and args, and runs it until it first pauses or exits. cfg
// may carry other settings; its name and arguments are the world's, and
// the world's host serves its clocks, random stream and output.
func (w *World) Spawn(ctx context.Context, r wazero.Runtime, prog *Program, cfg wazero.ModuleConfig, addr string, args ...string) (*Proc, error) {
	p, cfg := w.newProc(ctx, prog, cfg, addr, args[0])
	m, err := prog.Start(p.ctx, r, cfg.WithArgs(args...))
	if m == nil {
		return nil, err
	}
	p.M = m
	return w.started(p, m, err), nil
}

// SpawnFrom restores a guest from s, a snapshot of prog paused before
// main.main (the guest has the snapshot's arguments), and runs it until it
// first pauses or exits. name is for messages.
func (w *World) SpawnFrom(ctx context.Context, r wazero.Runtime, prog *Program, s *pauseoverlay.Snapshot, cfg wazero.ModuleConfig, addr, name string) (*Proc, error) {
	p, cfg := w.newProc(ctx, prog, cfg, addr, name)
	m, err := prog.Restore(p.ctx, r, s, cfg)
	if err != nil {
		return nil, err
	}
	p.M = m
	return w.started(p, m, p.resume()), nil
}

func (w *World) newProc(ctx context.Context, prog *Program, cfg wazero.ModuleConfig, addr, name string) (*Proc, wazero.ModuleConfig) {
	p := &Proc{Name: name, w: w, addr: addr, fds: map[int32]any{}, nextFd: 100, prog: prog}
	p.ctx = context.WithValue(WithControl(ctx, &Control{
		SnapshotPoint: func(api.Module) bool { return w.PauseAtMain },
		Idle: func(m api.Module, subs []Subscription) bool {
			if w.Block {
				return false
			}
			p.Pauses++
			p.waits, p.waitSince = subs, w.Now
			return true
		},
	}), procKey{}, p)
	var seed [32]byte
	le.PutUint64(seed[:], w.Seed)
	le.PutUint64(seed[8:], uint64(len(w.procs)))
	p.random = rand.NewChaCha8(seed)
	return p, cfg.WithName("")
}

// resume resumes p, through the api.Function looked up once per instance
// (wazero makes a call stack for each).
func (p *Proc) resume() error {
	if p.resumeFn == nil {
		f, err := pauseoverlay.ResumeFunc(p.M)
		if err != nil {
			return err
		}
		p.resumeFn = f
	}
	_, err := p.resumeFn.Call(p.ctx)
	return err
}

func (w *World) started(p *Proc, m api.Module, err error) *Proc {
	w.procs = append(w.procs, p)
	p.settle(err)
	return p
}

// Fork returns a copy of w at its current time, w stopped by RunUntil:
// every live guest copied (Program.Take, then Program.Restore into a new
// instance in r) and the host's state cloned: the clock, the sockets with
// the data on its way, the fsyncs in flight, each guest's descriptors,
// random stream, waits and output so far. Run on, the copy does what w
// does from here: a checkpoint is exactly these.
func (w *World) Fork(ctx context.Context, r wazero.Runtime) (*World, error) {
	f := &World{Now: w.Now, Latency: w.Latency, FsyncDelay: w.FsyncDelay, Seed: w.Seed, PauseAtMain: w.PauseAtMain,
		listeners: map[uint32]*sock{}, ports: w.ports}
	socks := map[*sock]*sock{}
	var clone func(s *sock) *sock
	clone = func(s *sock) *sock {
		if s == nil {
			return nil
		}
		if c, ok := socks[s]; ok {
			return c
		}
		c := new(sock)
		*c = *s
		socks[s] = c
		c.in = slices.Clone(s.in) // the bytes are never written, only resliced
		c.backlog = nil
		for _, b := range s.backlog {
			c.backlog = append(c.backlog, pending{b.at, clone(b.s)})
		}
		c.peer = clone(s.peer)
		return c
	}
	for _, port := range slices.Sorted(maps.Keys(w.listeners)) {
		f.listeners[port] = clone(w.listeners[port])
	}
	for _, p := range w.procs {
		q, cfg := f.newProc(ctx, p.prog, wazero.NewModuleConfig(), p.addr, p.Name)
		q.Out.Write(p.Out.Bytes())
		q.Pauses, q.Exited, q.Code = p.Pauses, p.Exited, p.Code
		q.waits, q.waitSince, q.nextFd = slices.Clone(p.waits), p.waitSince, p.nextFd
		for _, fd := range slices.Sorted(maps.Keys(p.fds)) {
			switch x := p.fds[fd].(type) {
			case *sock:
				q.fds[fd] = clone(x)
			case *fsyncOp:
				op := *x
				q.fds[fd] = &op
			}
		}
		stream := *p.random
		q.random = &stream
		if !p.Exited {
			snap, err := p.prog.Take(p.M)
			if err != nil {
				return nil, err
			}
			if q.M, err = p.prog.Restore(q.ctx, r, snap, cfg); err != nil {
				return nil, err
			}
		}
		f.procs = append(f.procs, q)
	}
	return f, nil
}

// settle records how a call into the guest ended.
func (p *Proc) settle(err error) {
	if err == nil {
		return
	}
	p.Exited, p.waits = true, nil
	if code, ok := Exited(err); ok {
		p.Code = code
		return
	}
	p.Code = 255
	fmt.Fprintf(&p.Out, "[host] stopped: %v\n", err)
}

// Run resumes due guests until every guest has exited. It fails when no
// guest can ever be resumed (all wait for something that never comes).
func (w *World) Run() error { return w.RunUntil(never) }

// RunUntil is Run that stops, every guest paused, when the next guest due
// is due after time t. The world can then be forked.
func (w *World) RunUntil(t int64) error {
	for {
		live, ran := 0, false
		for _, p := range w.procs {
			if p.Exited {
				continue
			}
			live++
			if p.dueAt() <= w.Now {
				p.waits = nil
				p.settle(p.resume())
				ran = true
			}
		}
		if live == 0 {
			return nil
		}
		if ran {
			continue
		}
		wake := int64(never)
		for _, p := range w.procs {
			if !p.Exited {
				wake = min(wake, p.dueAt())
			}
		}
		if wake == never {
			var names []string
			for _, p := range w.procs {
				if !p.Exited {
					names = append(names, fmt.Sprintf("%s (on %v)", p.Name, p.waits))
				}
			}
			return fmt.Errorf("pause world: deadlock at %dns: %s wait for nothing that can come", w.Now, strings.Join(names, ", "))
		}
		if wake > t {
			return nil
		}
		w.Now = wake
	}
}

// dueAt is the earliest time one of p's subscriptions is (or will be) due.
func (p *Proc) dueAt() int64 {
	at := int64(never)
	for _, s := range p.waits {
		at = min(at, p.subDue(s, p.waitSince))
	}
	return at
}

// subDue is when subscription s, made at since, is due, or never.
func (p *Proc) subDue(s Subscription, since int64) int64 {
	switch s.Tag {
	case 0:
		if s.Abs {
			return s.Timeout - monoBase
		}
		return since + s.Timeout
	case 1:
		switch f := p.fds[int32(s.Fd)].(type) {
		case *sock:
			return f.readableAt()
		case *fsyncOp:
			return f.at
		}
		return since // not ours (stdin): ready at once, as wazero's is
	case 2:
		if f, ok := p.fds[int32(s.Fd)].(*sock); ok {
			return f.connectedAt
		}
		return since
	}
	return never
}

func (s *sock) readableAt() int64 {
	if s.listener {
		if len(s.backlog) > 0 {
			return s.backlog[0].at
		}
		return never
	}
	if len(s.in) > 0 {
		return s.in[0].at
	}
	if s.eofAt >= 0 {
		return s.eofAt
	}
	if s.refused {
		return s.connectedAt
	}
	return never
}

// InstallWorldHost registers in r the host modules of World's guests: WASI
// (wazero's, with poll_oneoff, fd_read, fd_write, fd_close, fd_fdstat_get,
// fd_fdstat_set_flags, sock_accept, sock_shutdown and proc_exit of the
// world's) and "seedfall"
// (the overlay's calls, the net overlay's TCP calls, the fsync overlay's
// calls, and ENOSYS stubs for whatever else mods import).
func InstallWorldHost(ctx context.Context, r wazero.Runtime, mods ...wazero.CompiledModule) error {
	b := r.NewHostModuleBuilder(wasi_snapshot_preview1.ModuleName)
	wasi_snapshot_preview1.NewFunctionExporter().ExportFunctions(b)
	ProcExit(b)
	// The clocks and random stream are the world's and the guest's, found
	// through the context of each call, not fixed in the instance: a reset
	// instance starts in another world.
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
		p := procOf(ctx)
		if p == nil {
			s[0] = uint64(errno.ENOSYS)
			return
		}
		t := monoBase + p.w.Now
		if uint32(s[0]) == 0 { // realtime
			t = epoch + p.w.Now
		}
		s[0] = 0
		if !m.Memory().WriteUint64Le(uint32(s[2]), uint64(t)) {
			s[0] = uint64(errno.EFAULT)
		}
	}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI64, api.ValueTypeI32}, i32s(1)).Export("clock_time_get")
	for _, name := range slices.Sorted(maps.Keys(worldWASI)) {
		f := worldWASI[name]
		b.NewFunctionBuilder().WithGoModuleFunction(wrap(f.fn), i32s(f.params), i32s(1)).Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return err
	}
	extra := map[string]HostFunc{}
	for name, f := range worldSeedfall {
		extra[name] = HostFunc{Fn: wrap(f.fn), Params: i32s(f.params), Results: i32s(1)}
	}
	return Instantiate(ctx, r, extra, mods...)
}

type worldFunc struct {
	params int
	fn     func(p *Proc, mem api.Memory, a []uint32) errno.Errno
}

func i32s(n int) []api.ValueType {
	t := make([]api.ValueType, n)
	for i := range t {
		t[i] = api.ValueTypeI32
	}
	return t
}

func wrap(f func(p *Proc, mem api.Memory, a []uint32) errno.Errno) api.GoModuleFunc {
	return func(ctx context.Context, m api.Module, s []uint64) {
		p := procOf(ctx)
		if p == nil {
			s[0] = uint64(errno.ENOSYS)
			return
		}
		a := make([]uint32, len(s))
		for i := range s {
			a[i] = uint32(s[i])
		}
		s[0] = uint64(f(p, m.Memory(), a))
	}
}

var le = binary.LittleEndian

var worldWASI = map[string]worldFunc{
	"random_get": {2, func(p *Proc, mem api.Memory, a []uint32) errno.Errno {
		b, ok := mem.Read(a[0], a[1])
		if !ok {
			return errno.EFAULT
		}
		p.random.Read(b)
		return 0
	}},
	"poll_oneoff":   {4, pollOneoff},
	"fd_read":       {4, fdRead},
	"fd_write":      {4, fdWrite},
	"fd_close":      {1, fdClose},
	"fd_fdstat_get": {2, fdFdstatGet},
	"fd_fdstat_set_flags": {2, func(p *Proc, mem api.Memory, a []uint32) errno.Errno {
		if _, ok := p.fds[int32(a[0])].(*sock); ok || a[0] <= 2 {
			return 0 // sockets never block: nothing to set
		}
		return errno.EBADF
	}},
	"sock_accept":   {3, sockAccept},
	"sock_shutdown": {2, sockShutdown},
}

var worldSeedfall = map[string]worldFunc{
	"sock_listen":  {4, sockListen},
	"sock_connect": {4, sockConnect},
	"sock_status":  {1, sockStatus},
	"sock_addrs":   {4, sockAddrs},
	"fsync_start":  {2, fsyncStart},
	"fsync_finish": {1, fsyncFinish},
}

func pollOneoff(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	in, out, n, nOut := a[0], a[1], a[2], a[3]
	if n == 0 {
		return errno.EINVAL
	}
	subs, err := ReadSubscriptions(mem, in, n)
	if err != nil {
		return errno.EFAULT
	}
	w, since := p.w, p.w.Now
	due := func() []Subscription {
		var d []Subscription
		for _, s := range subs {
			if p.subDue(s, since) <= w.Now {
				d = append(d, s)
			}
		}
		return d
	}
	ready := due()
	if len(ready) == 0 {
		if !w.Block {
			return errno.ENOTSUP // a pausing guest never waits here
		}
		wake := int64(never)
		for _, s := range subs {
			wake = min(wake, p.subDue(s, since))
		}
		if wake == never {
			return errno.EINVAL // would wait forever: a deadlock
		}
		if w.HandOff != nil {
			w.HandOff(wake)
		} else {
			w.Now = wake
		}
		ready = due()
	}
	for i, s := range ready {
		ev := make([]byte, 32)
		le.PutUint64(ev, s.Userdata)
		ev[10] = s.Tag
		if !mem.Write(out+uint32(i)*32, ev) {
			return errno.EFAULT
		}
	}
	if !mem.WriteUint32Le(nOut, uint32(len(ready))) {
		return errno.EFAULT
	}
	return 0
}

// iovecs returns the buffers of an iovec array.
func iovecs(mem api.Memory, iovs, n uint32) ([][]byte, bool) {
	var out [][]byte
	for i := uint32(0); i < n; i++ {
		ptr, ok1 := mem.ReadUint32Le(iovs + i*8)
		size, ok2 := mem.ReadUint32Le(iovs + i*8 + 4)
		b, ok3 := mem.Read(ptr, size)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

func fdRead(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	bufs, ok := iovecs(mem, a[1], a[2])
	if !ok {
		return errno.EFAULT
	}
	s, isSock := p.fds[int32(a[0])].(*sock)
	if a[0] == 0 {
		return wrote(mem, a[3], 0) // stdin is empty
	}
	if !isSock || s.listener {
		return errno.EBADF
	}
	now, total := p.w.Now, 0
	for _, b := range bufs {
		for len(b) > 0 && len(s.in) > 0 && s.in[0].at <= now {
			c := &s.in[0]
			k := copy(b, c.data)
			b, c.data, total = b[k:], c.data[k:], total+k
			if len(c.data) == 0 {
				s.in = s.in[1:]
			}
		}
	}
	if total == 0 && !(s.eofAt >= 0 && s.eofAt <= now && len(s.in) == 0) {
		if s.refused {
			return errno.ECONNREFUSED
		}
		return errno.EAGAIN
	}
	return wrote(mem, a[3], total)
}

func fdWrite(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	bufs, ok := iovecs(mem, a[1], a[2])
	if !ok {
		return errno.EFAULT
	}
	var data []byte
	for _, b := range bufs {
		data = append(data, b...)
	}
	switch fd := int32(a[0]); fd {
	case 1, 2:
		p.Out.Write(data)
		return wrote(mem, a[3], len(data))
	default:
		s, ok := p.fds[fd].(*sock)
		if !ok || s.listener {
			return errno.EBADF
		}
		if s.peer == nil || s.refused {
			return errno.EPIPE
		}
		if len(data) > 0 {
			s.peer.in = append(s.peer.in, chunk{at: p.w.Now + p.w.Latency, data: data})
		}
		return wrote(mem, a[3], len(data))
	}
}

func wrote(mem api.Memory, at uint32, n int) errno.Errno {
	if !mem.WriteUint32Le(at, uint32(n)) {
		return errno.EFAULT
	}
	return 0
}

func fdClose(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	fd := int32(a[0])
	f, ok := p.fds[fd]
	if !ok {
		if fd <= 2 {
			return 0
		}
		return errno.EBADF
	}
	delete(p.fds, fd)
	if s, ok := f.(*sock); ok {
		if s.listener {
			delete(p.w.listeners, s.port)
		} else if s.peer != nil && s.peer.eofAt < 0 {
			s.peer.eofAt = p.w.Now + p.w.Latency
			s.peer.peer = nil
		}
	}
	return 0
}

func fdFdstatGet(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	st := make([]byte, 24)
	fd := int32(a[0])
	switch _, isSock := p.fds[fd].(*sock); {
	case fd <= 2:
		st[0] = 2 // character device
	case isSock:
		st[0] = 6 // SOCKET_STREAM
	default:
		return errno.EBADF
	}
	le.PutUint64(st[8:], ^uint64(0))
	le.PutUint64(st[16:], ^uint64(0))
	if !mem.Write(a[1], st) {
		return errno.EFAULT
	}
	return 0
}

func (p *Proc) newFd(f any) int32 {
	fd := p.nextFd
	p.nextFd++
	p.fds[fd] = f
	return fd
}

func putFd(mem api.Memory, at uint32, fd int32) errno.Errno {
	if !mem.WriteUint32Le(at, uint32(fd)) {
		return errno.EFAULT
	}
	return 0
}

func sockListen(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	port := a[2]
	if port == 0 {
		p.w.ports++
		port = p.w.ports
	}
	if _, taken := p.w.listeners[port]; taken {
		return errno.EADDRINUSE
	}
	s := &sock{listener: true, port: port, local: fmt.Sprintf("%s:%d", p.addr, port), eofAt: -1}
	p.w.listeners[port] = s
	return putFd(mem, a[3], p.newFd(s))
}

func sockConnect(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	w := p.w
	w.ports++
	c := &sock{local: fmt.Sprintf("%s:%d", p.addr, w.ports), eofAt: -1, connectedAt: w.Now + 2*w.Latency}
	ln, ok := w.listeners[a[2]]
	if !ok {
		c.refused = true
	} else {
		srv := &sock{local: ln.local, remote: c.local, eofAt: -1, connectedAt: w.Now, peer: c}
		c.peer, c.remote = srv, ln.local
		ln.backlog = append(ln.backlog, pending{at: w.Now + w.Latency, s: srv})
	}
	return putFd(mem, a[3], p.newFd(c))
}

func sockStatus(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	s, ok := p.fds[int32(a[0])].(*sock)
	switch {
	case !ok:
		return errno.EBADF
	case s.connectedAt > p.w.Now:
		return errno.EINPROGRESS
	case s.refused:
		return errno.ECONNREFUSED
	}
	return 0
}

func sockAddrs(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	s, ok := p.fds[int32(a[0])].(*sock)
	if !ok {
		return errno.EBADF
	}
	text := s.local
	if s.remote != "" {
		text += " " + s.remote
	}
	if uint32(len(text)) > a[2] {
		return errno.ERANGE
	}
	if !mem.Write(a[1], []byte(text)) {
		return errno.EFAULT
	}
	return wrote(mem, a[3], len(text))
}

func sockAccept(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	s, ok := p.fds[int32(a[0])].(*sock)
	if !ok || !s.listener {
		return errno.EBADF
	}
	if len(s.backlog) == 0 || s.backlog[0].at > p.w.Now {
		return errno.EAGAIN
	}
	c := s.backlog[0].s
	s.backlog = s.backlog[1:]
	return putFd(mem, a[2], p.newFd(c))
}

func sockShutdown(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	s, ok := p.fds[int32(a[0])].(*sock)
	if !ok || s.listener {
		return errno.ENOTCONN
	}
	if a[1]&2 != 0 && s.peer != nil && s.peer.eofAt < 0 {
		s.peer.eofAt = p.w.Now + p.w.Latency
	}
	return 0
}

func fsyncStart(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	if p.w.FsyncDelay <= 0 {
		return wrote(mem, a[1], -1)
	}
	return putFd(mem, a[1], p.newFd(&fsyncOp{at: p.w.Now + p.w.FsyncDelay}))
}

func fsyncFinish(p *Proc, mem api.Memory, a []uint32) errno.Errno {
	op, ok := p.fds[int32(a[0])].(*fsyncOp)
	if !ok {
		return errno.EBADF
	}
	if op.at > p.w.Now {
		return errno.EAGAIN
	}
	delete(p.fds, int32(a[0]))
	return 0
}
