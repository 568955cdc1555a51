// Package disk is the simulated, crashable disk of one node: a Linux-like
// file system whose writes land in a page cache and survive a crash only as
// far as fsync (and, under strict directories, directory fsync) made them
// durable, or as far as a crash model (torn or reordered writeback, corruption
// on crash) writes them back. It also applies the disk faults the engine
// decides: failing, lost, misdirected and corrupted operations, bit rot and a
// disk that fills up.
//
// A Disk is not safe for concurrent use; the scheduler runs one node at a
// time, and that is the only caller.
package disk

import (
	"github.com/seedfall/seedfall/engine/errno"
)

// FileType uses WASI's filetype numbering, so the WASI layer passes it on.
type FileType uint8

const (
	TypeUnknown   FileType = 0
	TypeDirectory FileType = 3
	TypeRegular   FileType = 4
	TypeSymlink   FileType = 7
)

func (t FileType) String() string {
	switch t {
	case TypeDirectory:
		return "dir"
	case TypeRegular:
		return "file"
	case TypeSymlink:
		return "symlink"
	}
	return "unknown"
}

// Options configure a Disk.
type Options struct {
	// StrictDirs makes directory entries durable only when their parent
	// directory is fsynced (strict POSIX). Off, they are durable at once.
	StrictDirs bool
	// Now returns wall-clock nanoseconds since the Unix epoch, for
	// atime/mtime/ctime. Nil means time 0.
	Now func() int64
	// OnOp, if set, is called before each data operation (read, write,
	// truncate, fsync) once it has passed argument checks. A non-zero
	// return fails the operation with that errno and leaves the disk
	// unchanged. If OnOp crashes the disk, the operation does not happen
	// and returns EBADF. The hook may apply a fault to the operation with
	// FailSync, LoseWrite, MisdirectWrite or CorruptRead.
	OnOp func(Op) errno.Errno
	// Capacity is the disk's size in bytes (disk_bytes); 0 is unlimited.
	// See WriteAt for what a full disk does.
	Capacity int64
	// Weaken, if set, is asked about each sync that would make something
	// durable (mutant.go); true makes it a no-op that succeeds: it counts
	// as a disk op, OnOp is not asked, and nothing becomes durable.
	Weaken func(SyncCall) bool
	// Tear, if set, is asked at each crash about every rename that is
	// still pending (strict dirs), in order, and may keep it in half.
	Tear func(DirOp) Tear
}

// OpKind says what a data operation is.
type OpKind uint8

const (
	OpRead OpKind = iota + 1
	OpWrite
	OpTruncate
	OpSync
)

func (k OpKind) String() string {
	switch k {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpTruncate:
		return "truncate"
	case OpSync:
		return "fsync"
	}
	return "unknown"
}

// Op describes one data operation to Options.OnOp.
type Op struct {
	Kind OpKind
	// N numbers the operation from 1: "disk op #N" counts writes,
	// truncates and fsyncs together; "disk read #N" counts reads.
	N    uint64
	Path string // the file's path from the disk root, "." for the root; its last path if unlinked
	Ino  uint64
	Dir  bool  // an fsync of a directory
	Off  int64 // read/write: offset; truncate: the new size
	Len  int64 // read/write: bytes asked for
}

// OpenFlags say how Open finds or creates a file and what the handle may do.
// A handle is readable when Read is set or Write is not (O_RDONLY is 0).
type OpenFlags uint16

const (
	Read OpenFlags = 1 << iota
	Write
	Create
	Excl
	Trunc
	Directory
)

// TimeFlags are WASI's fstflags, with the same bit values, so the WASI layer
// passes them through: which times SetTimes sets, to a given value or to now.
type TimeFlags uint16

const (
	SetAtim TimeFlags = 1 << iota
	SetAtimNow
	SetMtim
	SetMtimNow
)

// Stat describes a file as fd_filestat_get reports it.
type Stat struct {
	Ino              uint64
	Type             FileType
	Mode             uint32 // permission bits
	Nlink            uint64
	Size             int64
	Atim, Mtim, Ctim int64
}

// Dirent is one directory entry.
type Dirent struct {
	Name string
	Ino  uint64
	Type FileType
}

// Disk is the file system of one node.
type Disk struct {
	strict bool
	now    func() int64
	onOp   func(Op) errno.Errno
	weaken func(SyncCall) bool
	tear   func(DirOp) Tear
	reach  Reach // what a mutant could weaken (mutant.go)

	root       *inode
	rootHandle *Handle
	nextIno    uint64
	epoch      uint64 // bumped by a crash; handles from an older epoch are stale
	nsGen      uint64 // bumped when existing paths may change; invalidates path caches
	ops, reads uint64

	dirLog []dirLogEntry       // pending directory operations, strict dirs only
	dirty  map[*inode]struct{} // files with pending data operations
	seq    uint64              // numbers pending operations (DataOp.Seq, DirOp.Seq)

	capacity int64 // disk_bytes; 0 is unlimited
	used     int64 // sum of the page-cache sizes of every live file

	// The operation OnOp is deciding, for the fault methods it may call.
	hookOp   Op
	hookNode *inode
	inHook   bool
	// The mark of the fsync being decided (syncOp): the sync faults apply
	// to the pending operations up to it.
	syncMark uint64
	// A read_corrupt armed for the read being decided: the bit to flip,
	// counted from the start of the buffer; -1 for none.
	readFlip int64

	// Shared mappings (mmap.go): the live ones in the order they were
	// made, the dirty pages of mappings whose process died, and the pages
	// the next crash writes back.
	maps       []*Mapping
	orphans    []MappedPage
	keepMapped []MappedPage
	// flock locks by file (flock.go); looked up, never iterated.
	locks map[*inode]*flockState
}

// New returns an empty disk holding only its root directory.
func New(opts Options) *Disk {
	d := &Disk{strict: opts.StrictDirs, now: opts.Now, onOp: opts.OnOp, weaken: opts.Weaken, tear: opts.Tear,
		nsGen: 1, epoch: 1, capacity: opts.Capacity, readFlip: -1}
	if d.now == nil {
		d.now = func() int64 { return 0 }
	}
	d.root = d.newInode(TypeDirectory)
	d.root.parent = d.root
	d.rootHandle = &Handle{d: d, n: d.root, readable: true, isRoot: true}
	return d
}

// Root returns a handle on the root directory. It is never closed and stays
// valid across crashes.
func (d *Disk) Root() *Handle { return d.rootHandle }

// Ops returns how many disk ops (writes, truncates, fsyncs) have happened.
func (d *Disk) Ops() uint64 { return d.ops }

// Reads returns how many file reads have happened.
func (d *Disk) Reads() uint64 { return d.reads }

// StrictDirs reports whether directory entries need a directory fsync.
func (d *Disk) StrictDirs() bool { return d.strict }

func (d *Disk) newInode(t FileType) *inode {
	d.nextIno++
	now := d.now()
	return &inode{ino: d.nextIno, typ: t, atim: now, mtim: now, ctim: now, durMtim: now, durAtim: now, durCtim: now}
}

// op numbers a data operation and asks the hook about it. A non-zero
// result means the operation must not happen.
func (d *Disk) op(kind OpKind, n *inode, off, length int64) errno.Errno {
	var num uint64
	if kind == OpRead {
		d.reads++
		num = d.reads
	} else {
		d.ops++
		num = d.ops
	}
	if d.onOp == nil {
		return 0
	}
	epoch := d.epoch
	d.hookOp = Op{Kind: kind, N: num, Path: d.pathOf(n), Ino: n.ino, Dir: n.typ == TypeDirectory, Off: off, Len: length}
	d.hookNode, d.inHook = n, true
	e := d.onOp(d.hookOp)
	d.hookNode, d.inHook = nil, false
	if e != 0 {
		d.readFlip = -1
		return e
	}
	if d.epoch != epoch {
		d.readFlip = -1
		return errno.EBADF
	}
	return 0
}

// Handle is an open file description. An unlinked file stays readable and
// writable through it; a crash makes it stale (EBADF).
type Handle struct {
	d        *Disk
	n        *inode
	epoch    uint64
	readable bool
	writable bool
	closed   bool
	isRoot   bool
}

// check returns EBADF unless the handle can be used.
func (h *Handle) check() errno.Errno {
	if h == nil || h.closed || (!h.isRoot && h.epoch != h.d.epoch) {
		return errno.EBADF
	}
	return 0
}

// Valid reports whether the handle is open and not made stale by a crash.
func (h *Handle) Valid() bool { return h.check() == 0 }

// IsDir reports whether the handle is on a directory.
func (h *Handle) IsDir() bool { return h.n.typ == TypeDirectory }

// Ino returns the inode number of the open file.
func (h *Handle) Ino() uint64 { return h.n.ino }

// Readable and Writable report the handle's access mode.
func (h *Handle) Readable() bool { return h.readable }
func (h *Handle) Writable() bool { return h.writable }

// Size returns the file's size as reads see it, or 0 on an invalid handle.
func (h *Handle) Size() int64 {
	if h.check() != 0 {
		return 0
	}
	return h.n.size()
}

// ReadAt reads from the page cache; 0 bytes at or past the end of file.
func (h *Handle) ReadAt(p []byte, off int64) (int, errno.Errno) {
	if e := h.check(); e != 0 {
		return 0, e
	}
	if !h.readable {
		return 0, errno.EBADF
	}
	n := h.n
	if n.typ == TypeDirectory {
		return 0, errno.EISDIR
	}
	if off < 0 {
		return 0, errno.EINVAL
	}
	if len(n.maps) > 0 {
		h.d.takeIn(n, off, off+int64(len(p)))
	}
	if e := h.d.op(OpRead, n, off, int64(len(p))); e != 0 {
		return 0, e
	}
	got := n.data.readAt(p, off)
	if f := h.d.readFlip; f >= 0 {
		h.d.readFlip = -1
		if f/8 < int64(got) {
			p[f/8] ^= 1 << (f % 8)
		}
	}
	h.d.touchAtime(n)
	return got, 0
}

// WriteAt writes p at off into the page cache, extending the file with
// zeros if off is past its end, and logs the write as pending. On a disk
// with a Capacity, a write that extends the file writes only what fits and
// returns the short count; when nothing fits it fails with ENOSPC.
// Overwrites inside the file always fit.
func (h *Handle) WriteAt(p []byte, off int64) (int, errno.Errno) {
	if e := h.check(); e != 0 {
		return 0, e
	}
	if !h.writable {
		return 0, errno.EBADF
	}
	if off < 0 {
		return 0, errno.EINVAL
	}
	if off > maxFileSize || int64(len(p)) > maxFileSize-off {
		return 0, errno.EFBIG
	}
	n := h.n
	if len(n.maps) > 0 {
		h.d.takeIn(n, off, off+int64(len(p)))
	}
	if e := h.d.op(OpWrite, n, off, int64(len(p))); e != 0 {
		return 0, e
	}
	if len(p) == 0 {
		return 0, 0
	}
	if fit := h.d.fits(n, off, int64(len(p))); fit <= 0 {
		return 0, errno.ENOSPC
	} else if fit < int64(len(p)) {
		p = p[:fit]
	}
	old := n.data.size
	h.d.writeCache(n, p, off)
	h.d.used += n.data.size - old
	if len(n.maps) > 0 {
		h.d.mapWrite(n, p, off)
	}
	now := h.d.now()
	n.mtim, n.ctim = now, now
	return len(p), 0
}

// writeCache writes p at off into the page cache and logs it as pending.
func (d *Disk) writeCache(n *inode, p []byte, off int64) {
	old := n.data.size
	n.release(off, off+int64(len(p)))
	n.data.writeAt(p, off, &n.dur)
	d.logWrite(n, off, int64(len(p)), old)
}

// fits returns how many of length bytes written at off fit on the disk:
// all of them without a capacity, and always the bytes that overwrite the
// file; what extends the file, holes included, only as far as space is
// free.
func (d *Disk) fits(n *inode, off, length int64) int64 {
	if d.capacity <= 0 || off+length <= n.data.size {
		return length
	}
	free := max(0, d.capacity-d.used)
	return min(length, n.data.size+free-off)
}

// Truncate sets the file's size in the page cache and logs it as pending.
// As ftruncate(2), it needs a handle open for writing on a regular file.
func (h *Handle) Truncate(size int64) errno.Errno {
	if e := h.check(); e != 0 {
		return e
	}
	if !h.writable || h.n.typ != TypeRegular || size < 0 {
		return errno.EINVAL
	}
	if size > maxFileSize {
		return errno.EFBIG
	}
	return h.d.truncate(h.n, size)
}

func (d *Disk) truncate(n *inode, size int64) errno.Errno {
	if len(n.maps) > 0 {
		d.takeIn(n, 0, n.data.size)
	}
	if e := d.op(OpTruncate, n, size, 0); e != 0 {
		return e
	}
	old := n.data.size
	n.release(size, old)
	n.data.truncate(size, &n.dur)
	d.used += n.data.size - old
	d.logTruncate(n, size, old)
	if len(n.maps) > 0 {
		d.mapRefresh(n, min(old, size), max(old, size))
	}
	now := d.now()
	n.mtim, n.ctim = now, now
	return 0
}

// Sync is fsync: for a file, its data and size become durable; for a
// directory, its pending entries do (with strict dirs; otherwise they
// already are). It is an fsync that completes as it starts:
// SyncTo(SyncMark()).
func (h *Handle) Sync() errno.Errno { return h.SyncTo(h.SyncMark()) }

// SyncAs is Sync asked for by another call than fsync (fdatasync, a write
// through O_SYNC), which only Options.Weaken tells apart.
func (h *Handle) SyncAs(kind SyncKind) errno.Errno { return h.SyncToAs(h.SyncMark(), kind) }

// Stat describes the open file; a zero Stat on an invalid handle.
func (h *Handle) Stat() Stat {
	if h.check() != 0 {
		return Stat{}
	}
	return h.n.stat()
}

// Readdir lists the directory, sorted by name, without "." and "..".
// A removed directory cannot be listed (ENOENT).
func (h *Handle) Readdir() ([]Dirent, errno.Errno) {
	if e := h.check(); e != 0 {
		return nil, e
	}
	n := h.n
	if n.typ != TypeDirectory {
		return nil, errno.ENOTDIR
	}
	if n.removed {
		return nil, errno.ENOENT // as getdents(2) on a removed directory
	}
	out := make([]Dirent, len(n.entries))
	for i, e := range n.entries {
		out[i] = Dirent{Name: e.name, Ino: e.node.ino, Type: e.node.typ}
	}
	h.d.touchAtime(n)
	return out, 0
}

// SetTimes sets the open file's access and modification times.
func (h *Handle) SetTimes(atim, mtim int64, flags TimeFlags) errno.Errno {
	if e := h.check(); e != 0 {
		return e
	}
	return h.d.setTimes(h.n, atim, mtim, flags)
}

// Close releases the handle. A file unlinked everywhere is dropped from the
// page cache once its last handle closes. Closing twice, or closing the
// root handle, does nothing.
func (h *Handle) Close() {
	if h == nil || h.closed || h.isRoot {
		return
	}
	h.closed = true
	if h.epoch != h.d.epoch {
		return
	}
	h.d.unlock(h)
	h.n.opens--
	h.d.maybeFree(h.n)
}

func (d *Disk) setTimes(n *inode, atim, mtim int64, flags TimeFlags) errno.Errno {
	if flags&(SetAtim|SetAtimNow) == SetAtim|SetAtimNow || flags&(SetMtim|SetMtimNow) == SetMtim|SetMtimNow {
		return errno.EINVAL
	}
	now := d.now()
	switch {
	case flags&SetAtim != 0:
		n.atim = atim
	case flags&SetAtimNow != 0:
		n.atim = now
	}
	switch {
	case flags&SetMtim != 0:
		n.mtim = mtim
	case flags&SetMtimNow != 0:
		n.mtim = now
	}
	n.ctim = now
	return 0
}

// relatimeWindow is Linux's relatime rule: atime moves on a read only if it
// is not newer than mtime or ctime, or is a day old.
const relatimeWindow = 24 * 3600 * 1_000_000_000

func (d *Disk) touchAtime(n *inode) {
	now := d.now()
	if n.atim <= n.mtim || n.atim <= n.ctim || now-n.atim >= relatimeWindow {
		n.atim = now
	}
}
