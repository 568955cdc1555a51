package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
)

// The host side of the fsync overlay (engine/guest/fsyncoverlay): an fsync,
// fdatasync or msync(MS_SYNC) that takes virtual time (disk_latency, a slow
// node) parks only the goroutine that called it. fsync_start,
// fdatasync_start and msync_start note what the call covers (the disk's SyncMark) and hand the
// guest a descriptor that polls readable when the call's time has passed;
// the guest's netpoll waits on it while the node's other goroutines run.
// fsync_finish then makes the covered writes durable (SyncTo) and returns
// the result, at the moment the waiting goroutine takes it: a crash before
// that keeps only what an earlier fsync made durable, which a program may
// not have relied on yet. Writes made while the call was in flight stay in
// the page cache.

// waitOp is a call in flight: its descriptor's entry has kind kindWait.
// finish completes it (makes durable what it covers) and gives its result.
type waitOp struct {
	doneAt int64 // virtual time at which its wait ends
	finish func() errno.Errno
}

func init() {
	seedfallFuncs = append(seedfallFuncs,
		fn("fsync_start", vt(i32, i32), syncCall(disk.SyncFsync, true)),
		fn("fdatasync_start", vt(i32, i32), syncCall(disk.SyncData, true)),
		fn("msync_start", vt(i32, i32, i32, i32), msyncStart),
		fn("fsync_finish", vt(i32), fsyncFinish),
	)
}

const fsyncDone = 0xFFFFFFFF

// startFsync begins an fsync of a file or directory, asked for as kind
// (an fsync, or an fdatasync, which only a mutant tells apart). The op it
// returns is due at once when the fsync takes no virtual time.
func (p *Process) startFsync(e *fdEntry, kind disk.SyncKind) *waitOp {
	if e.readonly {
		return &waitOp{doneAt: p.Now(), finish: func() errno.Errno { return 0 }}
	}
	op := &waitOp{doneAt: p.Now() + p.syncDelay()}
	h, mark := e.h, e.h.SyncMark()
	op.finish = func() errno.Errno { return h.SyncToAs(mark, kind) }
	return op
}

// syncDelay draws the virtual time one fsync takes (zero without
// disk_latency or a slow node).
func (p *Process) syncDelay() int64 {
	if p.SyncDelay == nil {
		return 0
	}
	return max(p.SyncDelay(), 0)
}

// await is a call that waits in the host: the whole node waits until op is
// due, then takes its result. A guest that pauses meanwhile issues the call
// again, which finds op in p.again.
func (p *Process) await(ctx context.Context, m api.Module, op *waitOp) errno.Errno {
	if op.doneAt > p.Now() {
		if p.block(ctx, m, func() int64 { return op.doneAt }) {
			p.again = &reissue{sync: op}
			return 0
		}
	}
	return op.finish()
}

// start hands the guest an op in flight (writing its descriptor at out),
// or, when it is due already, finishes it at once (writing fsyncDone).
func (p *Process) start(m api.Module, out uint32, op *waitOp) errno.Errno {
	if op.doneAt <= p.Now() {
		if !m.Memory().WriteUint32Le(out, fsyncDone) {
			return errno.EFAULT
		}
		return op.finish()
	}
	fd := p.alloc(&fdEntry{kind: kindWait, wait: op})
	if !m.Memory().WriteUint32Le(out, fd) {
		p.fds[fd] = nil
		return errno.EFAULT
	}
	return 0
}

// syncCall is fd_sync and fd_datasync, where the caller waits in the host
// (a prebuilt module, or a call made before the overlay can park: a slow
// fsync then holds up the whole node, whose goroutines share one thread),
// and, parked, fsync_start and fdatasync_start. fsync and fdatasync differ
// only to a mutant.
func syncCall(kind disk.SyncKind, parked bool) func(context.Context, api.Module, []uint64) errno.Errno {
	return func(ctx context.Context, m api.Module, s []uint64) errno.Errno {
		p := proc(ctx)
		e := p.fd(uint32(s[0]))
		if e == nil {
			return errno.EBADF
		}
		if e.kind != kindFile && e.kind != kindDir {
			return errno.EINVAL
		}
		if !parked {
			if r := p.takeReissue(); r != nil && r.sync != nil {
				return p.await(ctx, m, r.sync) // issued again after a pause
			}
		}
		op := p.startFsync(e, kind)
		if parked {
			return p.start(m, uint32(s[1]), op)
		}
		return p.await(ctx, m, op)
	}
}

func msyncStart(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	op, en := p.startMsync(uint32(s[0]), uint32(s[1]), uint32(s[2]))
	if en != 0 {
		return en
	}
	return p.start(m, uint32(s[3]), op)
}

func fsyncFinish(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	fd := uint32(s[0])
	e := p.fd(fd)
	if e == nil || e.kind != kindWait {
		return errno.EBADF
	}
	if p.Now() < e.wait.doneAt {
		return errno.EAGAIN
	}
	p.fds[fd] = nil
	return e.wait.finish()
}

// startMsync begins an msync of [addr, addr+length): the stores there
// go into the page cache now; with MS_SYNC the files they map are made
// durable when the op finishes, each fsync taking its own time.
func (p *Process) startMsync(addr, length, flags uint32) (*waitOp, errno.Errno) {
	if flags&^(msAsync|msInvalidate|msSync) != 0 || flags&(msAsync|msSync) == msAsync|msSync {
		return nil, errno.EINVAL
	}
	op := &waitOp{doneAt: p.Now(), finish: func() errno.Errno { return 0 }}
	if length == 0 {
		return op, 0
	}
	maps, ok := p.covering(addr, length)
	if !ok {
		return nil, errno.ENOMEM
	}
	var syncs []*disk.Mapping
	var marks []uint64
	for _, pm := range maps {
		if pm.m == nil {
			continue
		}
		from := int64(max(addr, pm.addr) - pm.addr)
		to := int64(min(uint64(addr)+uint64(length), pm.end()) - uint64(pm.addr))
		pm.m.Flush(from, to)
		if flags&msSync != 0 {
			op.doneAt += p.syncDelay()
			syncs, marks = append(syncs, pm.m), append(marks, pm.m.SyncMark())
		}
	}
	op.finish = func() errno.Errno {
		for i, m := range syncs {
			if en := m.SyncTo(marks[i]); en != 0 {
				return en
			}
		}
		return 0
	}
	return op, 0
}
