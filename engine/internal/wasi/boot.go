package wasi

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

// A snapshot boot (engine/snapshot.go) runs a program's Go runtime and
// package init once, under a Process whose Boot is set, up to the snapshot
// point the pause overlay puts before main.main; every incarnation of the
// program then starts from a copy of that state. The copy stands for a boot
// only if nothing init did depends on the run it is copied into: Boot
// watches every host call and refuses (Taint) any whose answer could
// differ between runs or incarnations, or whose effect others could see.
// Allowed: arguments and environment (part of the snapshot's key), the
// monotonic clock (each incarnation's starts where the snapshot's stood,
// Process.MonoStart), the runtime's own 32 random bytes (re-drawn from the
// incarnation's stream after the restore), the standard descriptors and the
// preopen (the same in every incarnation), flags set on them (replayed
// into each incarnation's descriptor table), whole lines written to stdout
// and stderr (replayed into each incarnation's output), and the loop and
// call budgets' refills.

// BootLog is what a snapshot boot saw of its program.
type BootLog struct {
	// Taint says why the snapshot cannot stand for a boot of the program
	// ("" if it can): the first host call that init made and a copy could
	// not repeat. A tainted boot is stopped at that call.
	Taint string
	// Output is every line init wrote, in order.
	Output []BootLine
	// Flags are the fd_fdstat_set_flags calls init made, in order.
	Flags []BootFlags
	// Paused is set once the guest reached the snapshot point.
	Paused bool
	// Cover is where init said its coverage counters are (cover.go).
	Cover *Cover

	random int // random bytes drawn so far
	yields int // sched_yield calls: the loop budget's refills
}

// maxBootYields bounds a snapshot boot: an init that needs more refills of
// the loop budget (about a billion loop iterations, a second or more of
// work) is stopped and boots cold, under the watchdog.
const maxBootYields = 1024

// BootLine is one line of output written during init.
type BootLine struct {
	Stream int // 1 stdout, 2 stderr
	Text   []byte
}

// BootFlags is one fd_fdstat_set_flags call made during init.
type BootFlags struct {
	Fd    uint32
	Flags uint16
}

// Replay makes p, an incarnation restored from the snapshot b was made
// with, what the snapshot's init left it: its descriptors' flags, and the
// lines init printed.
func (p *Process) Replay(b *BootLog) {
	p.Cover = b.Cover
	for _, f := range b.Flags {
		if e := p.fd(f.Fd); e != nil {
			e.setFlags(f.Flags)
		}
	}
	if p.Output != nil {
		for _, l := range b.Output {
			p.Output(l.Stream, l.Text)
		}
	}
}

// runtimeRandom is what Go's runtime draws from random_get during its own
// init (randinit's seed): the pause overlay draws as much again after every
// restore, so a copy takes it from its incarnation's stream.
const runtimeRandom = 32

// bootAllowed are the host calls a snapshot boot lets through (some with
// conditions, in (*BootLog).check).
var bootAllowed = map[string]bool{
	"args_get": true, "args_sizes_get": true, "environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true, "random_get": true, "sched_yield": true,
	"fd_fdstat_get": true, "fd_prestat_get": true, "fd_prestat_dir_name": true, "fd_write": true,
	"fd_fdstat_set_flags": true,
	"snapshot_point":      true,
}

// check is asked before each host call of a snapshot boot; false stops the
// boot (Taint says why).
func (b *BootLog) check(name string, s []uint64) bool {
	if b.Taint != "" || b.Paused {
		// After the pause nothing runs; before it, a taint stopped it.
		b.taint(name, "after the snapshot point")
		return false
	}
	if !bootAllowed[name] {
		b.taint(name, "")
		return false
	}
	switch name {
	case "sched_yield":
		if b.yields++; b.yields > maxBootYields {
			b.taint(name, fmt.Sprintf("more than %d times: it works too long", maxBootYields))
			return false
		}
	case "clock_time_get", "clock_res_get":
		if uint32(s[0]) == clockRealtime {
			b.taint(name, "the wall clock")
			return false
		}
	case "random_get":
		b.random += int(uint32(s[1]))
		if b.random > runtimeRandom {
			b.taint(name, fmt.Sprintf("%d random bytes, more than the runtime's %d", b.random, runtimeRandom))
			return false
		}
	case "fd_write":
		if fd := uint32(s[0]); fd != 1 && fd != 2 {
			b.taint(name, fmt.Sprintf("to descriptor %d", fd))
			return false
		}
	case "fd_fdstat_set_flags":
		if fd := uint32(s[0]); fd > 3 {
			b.taint(name, fmt.Sprintf("on descriptor %d", fd))
			return false
		}
		b.Flags = append(b.Flags, BootFlags{Fd: uint32(s[0]), Flags: uint16(s[1])})
	}
	return true
}

func (b *BootLog) taint(name, detail string) {
	if b.Taint != "" {
		return
	}
	b.Taint = "its init calls " + name
	if detail != "" {
		b.Taint += " (" + detail + ")"
	}
}

// stopBoot ends a snapshot boot that init made unusable.
func stopBoot(ctx context.Context, m api.Module) {
	_ = m.CloseWithExitCode(ctx, ExitKilled)
	panic(sys.NewExitError(ExitKilled))
}

// snapshotPoint answers the pause overlay's snapshot_point: a snapshot
// boot pauses there (once), every other instance runs on into main.main.
func snapshotPoint(ctx context.Context, m api.Module, s []uint64) {
	s[0] = 0
	p := proc(ctx)
	if b := p.Boot; b != nil && !b.Paused {
		for stream := 1; stream <= 2; stream++ {
			if len(p.lineBuf[stream]) > 0 || p.lineCut[stream] > 0 {
				b.taint("fd_write", "a line it does not end")
				stopBoot(ctx, m)
			}
		}
		b.Paused = true
		s[0] = 1
	}
}

func init() {
	seedfallFuncs = append(seedfallFuncs, hostFunc{name: "snapshot_point", results: vt(i32), fn: snapshotPoint})
}
