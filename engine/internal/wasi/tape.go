package wasi

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/seedfall/seedfall/engine/disk"
)

// A Tape is what a guest did, as its host saw it: every host call it made,
// with its arguments and every value the host read from the guest while
// serving it (memory, its size, globals), and the few things that happen
// between calls (a memory_limit refusal, a trap). The host is a pure
// function of what it reads, so playing a tape back through the same host
// functions, against the same host state, does to the host exactly what
// the guest did, without running the guest: that is how a fork gets the
// world as it was at its checkpoint (engine/checkpoint.go).
//
// Recording costs a copy of what the host reads; playing back costs the
// host's own work, a small part of a run (the guests' code is most of it).
type Tape struct {
	// The items, in chunks of tapeChunk that never move: a tape grows
	// by a chunk at a time rather than by copying itself over.
	chunks [][]tapeItem
	n      int
	slab   []byte // what memory reads returned, back to back: items' data point into it
	// closed: no fork plays the tape past its end, so it records no
	// more. (A played guest killed past its fork's moment dies as its
	// copy, so no fork reads a last global past it either.)
	closed bool
}

// Close stops the tape: nothing after it is recorded.
func (t *Tape) Close() { t.closed = true }

// recording reports whether the process records its host calls.
func (p *Process) recording() bool { return p.Tape != nil && !p.Tape.closed }

const tapeChunk = 1024

// Len is the number of items on the tape.
func (t *Tape) Len() int { return t.n }

// add appends it to the tape.
func (t *Tape) add(it tapeItem) {
	if t.n%tapeChunk == 0 {
		t.chunks = append(t.chunks, make([]tapeItem, 0, tapeChunk))
	}
	c := &t.chunks[len(t.chunks)-1]
	*c = append(*c, it)
	t.n++
}

// at is item i of the tape.
func (t *Tape) at(i int) *tapeItem { return &t.chunks[i/tapeChunk][i%tapeChunk] }

// keep copies b onto the tape's slab and returns the copy (empty, not
// nil, for an empty b).
func (t *Tape) keep(b []byte) []byte {
	if t.slab == nil || cap(t.slab)-len(t.slab) < len(b) {
		t.slab = make([]byte, 0, max(64<<10, len(b)))
	}
	at := len(t.slab)
	t.slab = append(t.slab, b...)
	return t.slab[at:len(t.slab):len(t.slab)]
}

type tapeOp uint8

const (
	tapeCall      tapeOp = iota // a host call: name, params
	tapeRead                    // a memory read of n bytes at off: data (nil: out of bounds)
	tapeWrite                   // a memory write of n bytes at off: val 1 if it was in bounds
	tapeSize                    // the memory's size: val
	tapeGet                     // a global's value: name (or "#i" by index), val
	tapeLookup                  // an export looked up: name, val 1 if found
	tapeNumGlobal               // the number of globals: val
	tapeRefused                 // memory_limit refused a grow: params had, asked
	tapeEnd                     // the guest ended between host calls: err (a trap)
	tapeFinal                   // a global read once the guest ended: val
	tapeScan                    // a mapping compared with the cache: the dirty pages (params offsets and lengths, data their bytes)
	tapeWindow                  // a window of n bytes at off that the host only writes into: val 1 if it was in bounds
)

var tapeOps = [...]string{"call", "read", "write", "size", "global", "lookup", "globals", "refused", "end", "final", "scan", "window"}

type tapeItem struct {
	op     tapeOp
	name   string
	off, n uint32
	val    uint64
	data   []byte
	params []uint64
	err    error
}

func (it *tapeItem) String() string {
	switch it.op {
	case tapeCall, tapeGet, tapeLookup:
		return fmt.Sprintf("%s %s", tapeOps[it.op], it.name)
	case tapeRead, tapeWrite, tapeWindow:
		return fmt.Sprintf("%s %d bytes at %#x", tapeOps[it.op], it.n, it.off)
	}
	return tapeOps[it.op]
}

// ---- recording ----

// recording wraps the module a host call serves while the process records:
// what the host reads of the guest goes on the tape.
type recModule struct {
	api.Module
	p   *Process
	mem recMemory
}

func (p *Process) recModule(m api.Module) api.Module {
	if p.rec == nil || p.rec.Module != m {
		p.rec = &recModule{Module: m, p: p}
		p.rec.mem = recMemory{real: m.Memory(), p: p}
	}
	return p.rec
}

// put adds an item to the tape while a host call is being served.
func (p *Process) put(it tapeItem) {
	if p.inCall {
		p.Tape.add(it)
	}
}

func (m *recModule) Memory() api.Memory {
	if m.mem.real == nil {
		return nil
	}
	return &m.mem
}

func (m *recModule) ExportedGlobal(name string) api.Global {
	g := m.Module.ExportedGlobal(name)
	m.p.put(tapeItem{op: tapeLookup, name: name, val: b2u(g != nil)})
	switch g := g.(type) {
	case nil:
		return nil
	case api.MutableGlobal:
		return &recGlobal{MutableGlobal: g, name: name, p: m.p}
	default:
		return &recGlobal{MutableGlobal: constGlobal{g: g}, name: name, p: m.p}
	}
}

func (m *recModule) ExportedFunction(name string) api.Function {
	f := m.Module.ExportedFunction(name)
	m.p.put(tapeItem{op: tapeLookup, name: name, val: b2u(f != nil)})
	return f
}

func (m *recModule) NumGlobal() int {
	n := 0
	if im, ok := m.Module.(experimental.InternalModule); ok {
		n = im.NumGlobal()
	}
	m.p.put(tapeItem{op: tapeNumGlobal, val: uint64(n)})
	return n
}

func (m *recModule) Global(i int) api.Global {
	g := m.Module.(experimental.InternalModule).Global(i)
	return &recGlobal{MutableGlobal: constGlobal{g: g}, name: fmt.Sprintf("#%d", i), p: m.p}
}

// constGlobal lets a read-only global stand where a mutable one is kept.
type constGlobal struct {
	api.MutableGlobal
	g api.Global
}

func (c constGlobal) Get() uint64         { return c.g.Get() }
func (c constGlobal) Type() api.ValueType { return c.g.Type() }
func (c constGlobal) String() string      { return c.g.String() }
func (constGlobal) Set(uint64)            { panic("seedfall: set of a constant global") }

type recGlobal struct {
	api.MutableGlobal
	name string
	p    *Process
}

func (g *recGlobal) Get() uint64 {
	v := g.MutableGlobal.Get()
	g.p.put(tapeItem{op: tapeGet, name: g.name, val: v})
	return v
}

// recMemory records what the host reads of the memory. Its embedded
// Memory is nil: a method it does not record (ReadByte, WriteByte, Grow)
// fails at once rather than reading unrecorded; host code uses Read and
// Write for single bytes.
type recMemory struct {
	api.Memory
	real api.Memory
	p    *Process
}

func (m *recMemory) Size() uint32 {
	v := m.real.Size()
	m.p.put(tapeItem{op: tapeSize, val: uint64(v)})
	return v
}

func (m *recMemory) read(off, n uint32, b []byte, ok bool) {
	it := tapeItem{op: tapeRead, off: off, n: n}
	if ok && m.p.inCall {
		it.data = m.p.Tape.keep(b)
	}
	m.p.put(it)
}

func (m *recMemory) Read(off, n uint32) ([]byte, bool) {
	b, ok := m.real.Read(off, n)
	m.read(off, n, b, ok)
	return b, ok
}

func (m *recMemory) window(off, n uint32) ([]byte, bool) {
	b, ok := m.real.Read(off, n)
	m.p.put(tapeItem{op: tapeWindow, off: off, n: n, val: b2u(ok)})
	return b, ok
}

func (m *recMemory) ReadUint16Le(off uint32) (uint16, bool) {
	v, ok := m.real.ReadUint16Le(off)
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	m.read(off, 2, b[:], ok)
	return v, ok
}

func (m *recMemory) ReadUint32Le(off uint32) (uint32, bool) {
	v, ok := m.real.ReadUint32Le(off)
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	m.read(off, 4, b[:], ok)
	return v, ok
}

func (m *recMemory) ReadUint64Le(off uint32) (uint64, bool) {
	v, ok := m.real.ReadUint64Le(off)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.read(off, 8, b[:], ok)
	return v, ok
}

func (m *recMemory) ReadFloat32Le(off uint32) (float32, bool) {
	v, ok := m.ReadUint32Le(off)
	return math.Float32frombits(v), ok
}

func (m *recMemory) ReadFloat64Le(off uint32) (float64, bool) {
	v, ok := m.ReadUint64Le(off)
	return math.Float64frombits(v), ok
}

func (m *recMemory) wrote(off, n uint32, ok bool) bool {
	m.p.put(tapeItem{op: tapeWrite, off: off, n: n, val: b2u(ok)})
	return ok
}

func (m *recMemory) WriteUint16Le(off uint32, v uint16) bool {
	return m.wrote(off, 2, m.real.WriteUint16Le(off, v))
}

func (m *recMemory) WriteUint32Le(off, v uint32) bool {
	return m.wrote(off, 4, m.real.WriteUint32Le(off, v))
}

func (m *recMemory) WriteUint64Le(off uint32, v uint64) bool {
	return m.wrote(off, 8, m.real.WriteUint64Le(off, v))
}

func (m *recMemory) WriteFloat32Le(off uint32, v float32) bool {
	return m.WriteUint32Le(off, math.Float32bits(v))
}

func (m *recMemory) WriteFloat64Le(off uint32, v float64) bool {
	return m.WriteUint64Le(off, math.Float64bits(v))
}

func (m *recMemory) Write(off uint32, v []byte) bool {
	return m.wrote(off, uint32(len(v)), m.real.Write(off, v))
}

func (m *recMemory) WriteString(off uint32, v string) bool {
	return m.wrote(off, uint32(len(v)), m.real.WriteString(off, v))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Refused puts a memory_limit refusal on the tape; Playback hears it back
// through its Refused.
func (p *Process) Refused(had, asked uint64) {
	if p.recording() {
		p.Tape.add(tapeItem{op: tapeRefused, params: []uint64{had, asked}})
	}
}

// Ended puts on the tape how the guest ended between host calls (a trap).
func (p *Process) Ended(err error) {
	if p.recording() && err != nil {
		p.Tape.add(tapeItem{op: tapeEnd, err: err})
	}
}

// Final reads g, a global of the guest's instance, once the guest has
// ended (its count of calls, for the next incarnation's): the value goes
// on the tape, and a tape played back gives it back. Call it once, last.
func (p *Process) Final(g api.Global) uint64 {
	if pb := p.Play; pb != nil {
		t := pb.Tape
		if t.n == 0 || t.at(t.n-1).op != tapeFinal {
			pb.diverged("the guest's last global", nil)
		}
		return t.at(t.n - 1).val
	}
	v := g.Get()
	if p.recording() {
		p.Tape.add(tapeItem{op: tapeFinal, val: v})
	}
	return v
}

// mappedMemory is the memory of a mapping at addr: the guest's, read
// through its current instance each time (it may grow, move, or be
// replaced by a fork's copy), or, while a tape is played in the guest's
// place, a buffer of the mapping's own that takes what the disk copies in
// (the guest's stores come from the tape: scanMapping).
func (p *Process) mappedMemory(addr, length uint32) func() []byte {
	var shadow []byte
	return func() []byte {
		if p.Play != nil {
			if shadow == nil {
				shadow = make([]byte, length)
			}
			return shadow
		}
		b, _ := p.inst.Memory().Read(addr, length)
		return b
	}
}

// scanMapping is every mapping's disk.Mapping.Scan: what the disk learns
// of the guest's stores goes on the tape, and a tape played back gives it.
// It happens in host calls and outside them (a crash, a kill), in the same
// order whenever the run is the same.
func (p *Process) scanMapping(compare func() []disk.Dirty) []disk.Dirty {
	if pb := p.Play; pb != nil {
		it := pb.next(tapeScan, "")
		var out []disk.Dirty
		at := 0
		for i := 0; i+1 < len(it.params); i += 2 {
			n := int(it.params[i+1])
			out = append(out, disk.Dirty{Off: int64(it.params[i]), Data: bytes.Clone(it.data[at : at+n])})
			at += n
		}
		return out
	}
	dirty := compare()
	if p.recording() {
		it := tapeItem{op: tapeScan}
		for _, d := range dirty {
			it.params = append(it.params, uint64(d.Off), uint64(len(d.Data)))
			it.data = append(it.data, d.Data...)
		}
		p.Tape.add(it)
	}
	return dirty
}

// ---- playback ----

// Playback plays a tape back in place of a guest.
type Playback struct {
	Tape *Tape
	pos  int
	// Refused hears the memory_limit refusals on the tape, as the guest's
	// memory made them.
	Refused func(had, asked uint64)
	// Switch, if set, is asked each time the played guest would resume:
	// a non-nil instance takes the tape's place from there on, a copy of
	// the guest as it was at that point of the tape (engine/checkpoint.go).
	Switch func(ctx context.Context) (api.Module, error)

	mod playModule
}

// Pos is how far the tape has been played.
func (pb *Playback) Pos() int { return pb.pos }

// Diverged is what a playback panics with when its host asks something
// other than the recorded host did: a bug, never a guest's doing, unless
// the run was being stopped (its context ended) while the tape played, and
// the host asked what stopping asks (the engine lets such a run go).
type Diverged struct{ Msg string }

func (d *Diverged) Error() string { return d.Msg }

// diverged stops a playback whose host asked something other than the
// recorded host did.
func (pb *Playback) diverged(want string, it *tapeItem) {
	got := "the end of the tape"
	if it != nil {
		got = it.String()
	}
	ctx := ""
	for i := max(0, pb.pos-12); i < min(pb.Tape.n, pb.pos+3); i++ {
		ctx += fmt.Sprintf("\n  %d: %s", i, pb.Tape.at(i).String())
	}
	panic(&Diverged{fmt.Sprintf("seedfall: playback diverged at item %d of %d: the host asked for %s, the tape has %s%s", pb.pos, pb.Tape.n, want, got, ctx)})
}

// next returns the next item, which must be of kind op.
func (pb *Playback) next(op tapeOp, name string) *tapeItem {
	if pb.pos >= pb.Tape.n {
		pb.diverged(tapeOps[op]+" "+name, nil)
	}
	it := pb.Tape.at(pb.pos)
	if it.op != op || (name != "" && it.name != name) {
		pb.diverged(tapeOps[op]+" "+name, it)
	}
	pb.pos++
	return it
}

// PlayStart plays the tape from its start in place of starting a guest,
// until the played guest first pauses or ends; Run takes it on from there.
func (p *Process) PlayStart(ctx context.Context) error { return p.playUntilPause(ctx) }

// switchFromTape asks Playback.Switch whether a guest takes the tape's
// place now, and if so binds the process to it.
func (p *Process) switchFromTape(ctx context.Context) (api.Module, error) {
	pb := p.Play
	if pb.Switch == nil {
		return nil, nil
	}
	m, err := pb.Switch(ctx)
	if err != nil || m == nil {
		return nil, err
	}
	p.Play = nil
	p.rebind(m)
	return m, nil
}

// playUntilPause plays the tape until the played guest pauses, ends, or the
// tape has nothing more before a switch; it returns the error the guest's
// export would have returned.
func (p *Process) playUntilPause(ctx context.Context) error {
	pb := p.Play
	if pb.mod.pb == nil {
		pb.mod.pb, pb.mod.mem.pb = pb, pb
	}
	for {
		if pb.pos >= pb.Tape.n {
			pb.diverged("the guest's next step", nil)
		}
		it := pb.Tape.at(pb.pos)
		pb.pos++
		switch it.op {
		case tapeCall:
			if err := p.playCall(ctx, it); err != nil {
				return err
			}
			if p.waiting != nil {
				return nil
			}
		case tapeRefused:
			if pb.Refused != nil {
				pb.Refused(it.params[0], it.params[1])
			}
		case tapeEnd:
			return it.err
		default:
			pb.pos--
			pb.diverged("the guest's next step", it)
		}
	}
}

func (p *Process) playCall(ctx context.Context, it *tapeItem) (err error) {
	f := watchedFunc(it.name)
	if f == nil {
		panic("seedfall: playback of an unknown host function " + it.name)
	}
	s := slices.Clone(it.params)
	p.Play.mod.mem.scratch = p.Play.mod.mem.scratch[:0]
	defer func() {
		if r := recover(); r != nil {
			if ee, ok := r.(*sys.ExitError); ok {
				err = ee
				return
			}
			panic(r)
		}
	}()
	f(ctx, &p.Play.mod, s)
	return nil
}

// playModule stands for the played guest's instance in the host calls.
type playModule struct {
	experimental.InternalModule
	pb  *Playback
	mem playMemory
}

func (m *playModule) Memory() api.Memory { return &m.mem }

func (m *playModule) ExportedGlobal(name string) api.Global {
	if m.pb.next(tapeLookup, name).val == 0 {
		return nil
	}
	return &playGlobal{name: name, pb: m.pb}
}

func (m *playModule) ExportedFunction(name string) api.Function {
	if m.pb.next(tapeLookup, name).val == 0 {
		return nil
	}
	return playFunction{}
}

func (m *playModule) NumGlobal() int { return int(m.pb.next(tapeNumGlobal, "").val) }

func (m *playModule) Global(i int) api.Global {
	return &playGlobal{name: fmt.Sprintf("#%d", i), pb: m.pb}
}

func (m *playModule) CloseWithExitCode(context.Context, uint32) error { return nil }
func (m *playModule) Close(context.Context) error                     { return nil }
func (m *playModule) IsClosed() bool                                  { return false }
func (m *playModule) String() string                                  { return "played guest" }

// playFunction stands for an export the host looked up; a played guest is
// never called.
type playFunction struct{ api.Function }

type playGlobal struct {
	api.MutableGlobal
	name string
	pb   *Playback
}

func (g *playGlobal) Get() uint64         { return g.pb.next(tapeGet, g.name).val }
func (g *playGlobal) Set(uint64)          {}
func (g *playGlobal) Type() api.ValueType { return api.ValueTypeI64 }

type playMemory struct {
	api.Memory
	pb *Playback
	// scratch holds what the host read in the call being played: the host
	// may write into it, and keeps none of it past the call (it would not
	// see the guest's later stores in a run either).
	scratch []byte
}

func (m *playMemory) Size() uint32 { return uint32(m.pb.next(tapeSize, "").val) }

func (m *playMemory) read(off, n uint32) ([]byte, bool) {
	it := m.pb.next(tapeRead, "")
	if it.off != off || it.n != n {
		m.pb.pos--
		m.pb.diverged(fmt.Sprintf("a read of %d bytes at %#x", n, off), it)
	}
	if it.data == nil {
		return nil, false
	}
	b := m.take(len(it.data))
	copy(b, it.data) // the host may write into what it read
	return b, true
}

func (m *playMemory) Read(off, n uint32) ([]byte, bool) { return m.read(off, n) }

// window gives the host n bytes of scratch to write into: what it
// writes goes nowhere, as the guest's memory is not there.
func (m *playMemory) window(off, n uint32) ([]byte, bool) {
	it := m.pb.next(tapeWindow, "")
	if it.off != off || it.n != n {
		m.pb.pos--
		m.pb.diverged(fmt.Sprintf("a window of %d bytes at %#x", n, off), it)
	}
	if it.val == 0 {
		return nil, false
	}
	return m.take(int(n)), true
}

// take returns n bytes of the call's scratch, holding anything.
func (m *playMemory) take(n int) []byte {
	if cap(m.scratch)-len(m.scratch) < n {
		// A new array: what the call took before stays where it is.
		m.scratch = make([]byte, 0, max(2*cap(m.scratch), n, 4096))
	}
	at := len(m.scratch)
	m.scratch = m.scratch[:at+n]
	return m.scratch[at : at+n : at+n]
}

func (m *playMemory) ReadUint16Le(off uint32) (uint16, bool) {
	b, ok := m.read(off, 2)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint16(b), true
}

func (m *playMemory) ReadUint32Le(off uint32) (uint32, bool) {
	b, ok := m.read(off, 4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (m *playMemory) ReadUint64Le(off uint32) (uint64, bool) {
	b, ok := m.read(off, 8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

func (m *playMemory) ReadFloat32Le(off uint32) (float32, bool) {
	v, ok := m.ReadUint32Le(off)
	return math.Float32frombits(v), ok
}

func (m *playMemory) ReadFloat64Le(off uint32) (float64, bool) {
	v, ok := m.ReadUint64Le(off)
	return math.Float64frombits(v), ok
}

func (m *playMemory) wrote(off, n uint32) bool {
	it := m.pb.next(tapeWrite, "")
	if it.off != off || it.n != n {
		m.pb.pos--
		m.pb.diverged(fmt.Sprintf("a write of %d bytes at %#x", n, off), it)
	}
	return it.val != 0
}

func (m *playMemory) WriteUint16Le(off uint32, _ uint16) bool   { return m.wrote(off, 2) }
func (m *playMemory) WriteUint32Le(off, _ uint32) bool          { return m.wrote(off, 4) }
func (m *playMemory) WriteUint64Le(off uint32, _ uint64) bool   { return m.wrote(off, 8) }
func (m *playMemory) WriteFloat32Le(off uint32, _ float32) bool { return m.wrote(off, 4) }
func (m *playMemory) WriteFloat64Le(off uint32, _ float64) bool { return m.wrote(off, 8) }
func (m *playMemory) Write(off uint32, v []byte) bool           { return m.wrote(off, uint32(len(v))) }
func (m *playMemory) WriteString(off uint32, v string) bool     { return m.wrote(off, uint32(len(v))) }
