package proto

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// Control is what the host answers to the overlay's calls, for the
// instances run under a context that carries it (WithControl). A nil
// function, or no Control, answers zero: the guest runs as without the
// overlay.
type Control struct {
	// SnapshotPoint answers snapshot_point: true pauses the guest before
	// main.main.
	SnapshotPoint func(m api.Module) bool
	// Idle answers idle: true pauses the guest instead of letting it block
	// in poll_oneoff on subs.
	Idle func(m api.Module, subs []Subscription) bool
}

type controlKey struct{}

// WithControl returns a context under which the host functions of
// Instantiate answer as c says.
func WithControl(ctx context.Context, c *Control) context.Context {
	return context.WithValue(ctx, controlKey{}, c)
}

func control(ctx context.Context) *Control {
	c, _ := ctx.Value(controlKey{}).(*Control)
	return c
}

// ENOSYS is WASI's errno for a function the host does not implement.
const ENOSYS = 52

// HostFunc is a function of the "seedfall" host module.
type HostFunc struct {
	Fn              api.GoModuleFunc
	Params, Results []api.ValueType
}

// Instantiate registers the "seedfall" host module in r: snapshot_point and
// idle, the functions of extra, and for every other function that one of
// mods imports from "seedfall" (the net overlay's, say) a stub that returns
// ENOSYS, enough for a guest to boot and fail cleanly if it calls one.
func Instantiate(ctx context.Context, r wazero.Runtime, extra map[string]HostFunc, mods ...wazero.CompiledModule) error {
	b := r.NewHostModuleBuilder("seedfall")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
		s[0] = 0
		if c := control(ctx); c != nil && c.SnapshotPoint != nil && c.SnapshotPoint(m) {
			s[0] = 1
		}
	}), nil, []api.ValueType{api.ValueTypeI32}).Export("snapshot_point")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
		c := control(ctx)
		if c == nil || c.Idle == nil {
			s[0] = 0
			return
		}
		subs, err := ReadSubscriptions(m.Memory(), uint32(s[0]), uint32(s[1]))
		if err != nil {
			panic(err)
		}
		s[0] = 0
		if c.Idle(m, subs) {
			s[0] = 1
		}
	}), []api.ValueType{api.ValueTypeI32, api.ValueTypeI32}, []api.ValueType{api.ValueTypeI32}).Export("idle")
	done := map[string]bool{"snapshot_point": true, "idle": true}
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		f := extra[name]
		b.NewFunctionBuilder().WithGoModuleFunction(f.Fn, f.Params, f.Results).Export(name)
		done[name] = true
	}
	for _, cm := range mods {
		for _, f := range cm.ImportedFunctions() {
			mod, name, _ := f.Import()
			if mod != "seedfall" || done[name] {
				continue
			}
			done[name] = true
			results := f.ResultTypes()
			b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
				for i := range results {
					s[i] = 0
				}
				if len(results) > 0 {
					s[0] = ENOSYS
				}
			}), f.ParamTypes(), results).Export(name)
		}
	}
	_, err := b.Instantiate(ctx)
	return err
}

// ProcExit exports to b, a builder of wasi_snapshot_preview1 to which the
// other functions were exported (wasi_snapshot_preview1.NewFunctionExporter),
// a proc_exit that stops the guest with a *sys.ExitError without closing its
// module, as wazero's does: the instance can then be Reset and reused.
func ProcExit(b wazero.HostModuleBuilder) {
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
		panic(sys.NewExitError(uint32(s[0])))
	}), []api.ValueType{api.ValueTypeI32}, nil).WithParameterNames("rval").Export("proc_exit")
}

// Subscription is one WASI poll_oneoff subscription.
type Subscription struct {
	Userdata uint64
	// Tag is 0 for a clock, 1 for an fd read, 2 for an fd write.
	Tag byte
	// Fd is the descriptor of an fd subscription.
	Fd uint32
	// Clock, Timeout and Abs describe a clock subscription: clock id,
	// nanoseconds, and whether Timeout is absolute.
	Clock   uint32
	Timeout int64
	Abs     bool
}

// ReadSubscriptions decodes n 48-byte subscriptions at ptr.
func ReadSubscriptions(mem api.Memory, ptr, n uint32) ([]Subscription, error) {
	if uint64(n)*48 > uint64(mem.Size()) {
		return nil, fmt.Errorf("pause: %d subscriptions cannot fit in the memory", n)
	}
	raw, ok := mem.Read(ptr, n*48)
	if !ok {
		return nil, fmt.Errorf("pause: %d subscriptions at %#x are outside the memory", n, ptr)
	}
	le := binary.LittleEndian
	out := make([]Subscription, n)
	for i := range out {
		b := raw[i*48:]
		s := Subscription{Userdata: le.Uint64(b), Tag: b[8]}
		switch s.Tag {
		case 0:
			s.Clock = le.Uint32(b[16:])
			s.Timeout = int64(le.Uint64(b[24:]))
			s.Abs = le.Uint16(b[40:])&1 != 0
		default:
			s.Fd = le.Uint32(b[16:])
		}
		out[i] = s
	}
	return out, nil
}
