package wasi

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
)

// The host side of the fsync overlay (engine/guest/fsyncoverlay): an fsync
// that takes virtual time (disk_latency, a slow node) parks only the
// goroutine that called it. fsync_start notes what the fsync covers (the
// disk's SyncMark) and hands the guest a descriptor that polls readable
// when the fsync's time has passed; the guest's netpoll waits on it while
// the node's other goroutines run. fsync_finish then makes the covered
// writes durable (SyncTo) and returns the result, at the moment the
// waiting goroutine takes it: a crash before that keeps only what an
// earlier fsync made durable, which a program may not have relied on yet.
// Writes made while the fsync was in flight stay in the page cache.

// fsyncOp is one fsync in flight: its descriptor's entry has kind kindFsync.
type fsyncOp struct {
	file   *fdEntry // the file or directory being synced
	mark   uint64   // what it covers (disk.Handle.SyncMark)
	doneAt int64    // virtual time at which its wait ends
}

func init() {
	seedfallFuncs = append(seedfallFuncs,
		fn("fsync_start", vt(i32, i32), fsyncStart),
		fn("fsync_finish", vt(i32), fsyncFinish),
	)
}

const fsyncDone = 0xFFFFFFFF

func fsyncStart(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	out := uint32(s[1])
	e := p.fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind != kindFile && e.kind != kindDir {
		return errno.EINVAL
	}
	var d int64
	if p.SyncDelay != nil && !e.readonly {
		d = p.SyncDelay()
	}
	if d <= 0 {
		if !m.Memory().WriteUint32Le(out, fsyncDone) {
			return errno.EFAULT
		}
		if e.readonly {
			return 0
		}
		return e.h.Sync()
	}
	op := &fsyncOp{file: e, mark: e.h.SyncMark(), doneAt: p.Now() + d}
	fd := p.alloc(&fdEntry{kind: kindFsync, fsync: op})
	if !m.Memory().WriteUint32Le(out, fd) {
		p.fds[fd] = nil
		return errno.EFAULT
	}
	return 0
}

func fsyncFinish(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	fd := uint32(s[0])
	e := p.fd(fd)
	if e == nil || e.kind != kindFsync {
		return errno.EBADF
	}
	op := e.fsync
	if p.Now() < op.doneAt {
		return errno.EAGAIN
	}
	p.fds[fd] = nil
	return op.file.h.SyncTo(op.mark)
}
