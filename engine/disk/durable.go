package disk

import (
	"fmt"
	"slices"
)

// What survives a crash. Each file keeps the ordered log of data operations
// since its last fsync; the disk keeps (under strict dirs) the ordered log
// of directory operations whose entries are not durable yet. fsync applies
// a log to the durable state; a crash asks a CrashModel which pending
// operations to apply before it throws the page cache away.

// DataOpKind says what a pending data operation is.
type DataOpKind uint8

const (
	DataWrite DataOpKind = iota + 1
	DataTruncate
)

// DataOp is one pending data operation of a file.
type DataOp struct {
	Kind DataOpKind
	Off  int64  // DataWrite: where the bytes go
	Data []byte // DataWrite: the bytes written; read-only
	Size int64  // DataTruncate: the new size
}

// PendingFile is what a crash model sees of one file with pending data.
type PendingFile struct {
	Ino         uint64
	Path        string // where the file is after the crash
	DurableSize int64
	Ops         []DataOp // in the order they happened; read-only
}

// DirOpKind says what a pending directory operation is.
type DirOpKind uint8

const (
	DirCreate DirOpKind = iota + 1
	DirMkdir
	DirSymlink
	DirLink
	DirUnlink
	DirRmdir
	DirRename
)

func (k DirOpKind) String() string {
	switch k {
	case DirCreate:
		return "create"
	case DirMkdir:
		return "mkdir"
	case DirSymlink:
		return "symlink"
	case DirLink:
		return "link"
	case DirUnlink:
		return "unlink"
	case DirRmdir:
		return "rmdir"
	case DirRename:
		return "rename"
	}
	return "unknown"
}

// DirOp is one pending directory operation, with the paths it had when it
// happened. Rename and Link also have NewPath.
type DirOp struct {
	Kind    DirOpKind
	Path    string
	NewPath string
}

// A CrashModel decides which pending operations a crash keeps. A directory
// operation is kept or dropped whole; file data may be kept in part.
type CrashModel interface {
	// DirOps gets the pending directory operations (strict dirs only) in
	// the order they happened and returns the indices of those to keep,
	// ascending. Kept operations apply in their original order.
	DirOps(ops []DirOp) []int
	// File is called for each file that exists after the crash and has
	// pending data, in inode order. It returns the data operations to
	// apply on top of the durable content, in the order to apply them:
	// a subset, a prefix, parts of writes, reordered. f.Ops and the bytes
	// they hold are only valid during the call.
	File(f PendingFile) []DataOp
}

// KeepNothing is the plain crash: only what fsync made durable survives.
type KeepNothing struct{}

func (KeepNothing) DirOps([]DirOp) []int      { return nil }
func (KeepNothing) File(PendingFile) []DataOp { return nil }

// KeepAll is a crash after the kernel wrote everything back: the disk
// comes back as the program last saw it, minus open handles and files
// that only open handles kept alive.
type KeepAll struct{}

func (KeepAll) DirOps(ops []DirOp) []int {
	keep := make([]int, len(ops))
	for i := range keep {
		keep[i] = i
	}
	return keep
}
func (KeepAll) File(f PendingFile) []DataOp { return f.Ops }

// effect is what a directory operation does to one directory: set name to
// node, or remove it when node is nil.
type effect struct {
	dir  *inode
	name string
	node *inode
}

type effectKey struct {
	dir  *inode
	name string
}

type dirLogEntry struct {
	op  DirOp
	eff [2]effect // eff[1].dir is nil for single-directory operations
}

func (e *dirLogEntry) effects() []effect {
	if e.eff[1].dir == nil {
		return e.eff[:1]
	}
	return e.eff[:]
}

func (d *Disk) logDirOp(op DirOp, a, b effect) {
	d.dirLog = append(d.dirLog, dirLogEntry{op: op, eff: [2]effect{a, b}})
}

// syncDir makes dir's pending entries durable: every pending operation
// that changed dir, and every earlier one that changed a name those
// operations touch (a journal could not commit the later without the
// earlier). Operations on other directories stay pending.
func (d *Disk) syncDir(dir *inode) {
	if !d.strict || len(d.dirLog) == 0 {
		return
	}
	need := map[effectKey]struct{}{}
	commit := make([]bool, len(d.dirLog))
	any := false
	for i := len(d.dirLog) - 1; i >= 0; i-- {
		effs := d.dirLog[i].effects()
		hit := false
		for _, ef := range effs {
			if _, ok := need[effectKey{ef.dir, ef.name}]; ok || ef.dir == dir {
				hit = true
			}
		}
		if hit {
			commit[i], any = true, true
			for _, ef := range effs {
				need[effectKey{ef.dir, ef.name}] = struct{}{}
			}
		}
	}
	if !any {
		return
	}
	kept := d.dirLog[:0]
	for i := range d.dirLog {
		if commit[i] {
			applyEffects(&d.dirLog[i])
		} else {
			kept = append(kept, d.dirLog[i])
		}
	}
	clear(d.dirLog[len(kept):])
	d.dirLog = kept
}

func applyEffects(e *dirLogEntry) {
	for _, ef := range e.effects() {
		ef.dir.durEntries.set(ef.name, ef.node)
	}
}

// makeDurable records name -> n in dir's durable entries at once (host
// helpers seed the disk this way).
func (d *Disk) makeDurable(dir *inode, name string, n *inode) {
	if d.strict {
		dir.durEntries.set(name, n)
	}
}

// durableEntries are the entries a crash keeps before pending operations.
func (d *Disk) durableEntries(dir *inode) entries {
	if d.strict {
		return dir.durEntries
	}
	return dir.entries
}

// pendBufMax bounds the pending-bytes buffer a file keeps for reuse.
const pendBufMax = 1 << 20

func (d *Disk) logWrite(n *inode, p []byte, off int64) {
	start := len(n.pendBuf)
	n.pendBuf = append(n.pendBuf, p...)
	end := len(n.pendBuf)
	n.pending = append(n.pending, DataOp{Kind: DataWrite, Off: off, Data: n.pendBuf[start:end:end]})
	d.markDirty(n)
}

func (d *Disk) logTruncate(n *inode, size int64) {
	n.pending = append(n.pending, DataOp{Kind: DataTruncate, Size: size})
	d.markDirty(n)
}

func (d *Disk) markDirty(n *inode) {
	if d.dirty == nil {
		d.dirty = map[*inode]struct{}{}
	}
	d.dirty[n] = struct{}{}
}

func (n *inode) dropPending() {
	clear(n.pending)
	n.pending = n.pending[:0]
	if cap(n.pendBuf) > pendBufMax {
		n.pendBuf = nil
	} else {
		n.pendBuf = n.pendBuf[:0]
	}
}

// syncFile makes a file's data, size and times durable: O(pending bytes).
func (d *Disk) syncFile(n *inode) {
	for i := range n.pending {
		n.dur.syncFrom(&n.data, &n.pending[i])
	}
	n.dropPending()
	delete(d.dirty, n)
	n.durAtim, n.durMtim, n.durCtim = n.atim, n.mtim, n.ctim
}

// maybeFree drops the page cache of a file that has no name and no open
// handle: nothing can read it, and Linux writes nothing of it back. Its
// durable copy stays, since under strict dirs the unlink may not be.
func (d *Disk) maybeFree(n *inode) {
	if n.typ != TypeRegular || n.nlink > 0 || n.opens > 0 {
		return
	}
	n.dropPending()
	n.pendBuf = nil
	n.data = content{}
	delete(d.dirty, n)
}

// Crash is a power failure: it keeps exactly what fsync made durable.
// Every open handle except Root becomes stale.
func (d *Disk) Crash() { d.CrashWith(KeepNothing{}) }

// CrashWith crashes the disk, keeping the pending operations m chooses.
func (d *Disk) CrashWith(m CrashModel) {
	if d.strict && len(d.dirLog) > 0 {
		ops := make([]DirOp, len(d.dirLog))
		for i := range d.dirLog {
			ops[i] = d.dirLog[i].op
		}
		keep := m.DirOps(ops)
		for j, i := range keep {
			if i < 0 || i >= len(ops) || (j > 0 && i <= keep[j-1]) {
				panic(fmt.Sprintf("disk: crash model kept directory operations %v of %d: indices must be ascending and in range", keep, len(ops)))
			}
			applyEffects(&d.dirLog[i])
		}
	}
	clear(d.dirLog)
	d.dirLog = d.dirLog[:0]
	d.epoch++
	d.nsGen++

	files := d.rebuild()

	dirty := make([]*inode, 0, len(d.dirty))
	for n := range d.dirty {
		if n.mark == d.epoch {
			dirty = append(dirty, n)
		}
	}
	slices.SortFunc(dirty, func(a, b *inode) int { return cmpUint(a.ino, b.ino) })
	for _, n := range dirty {
		if len(n.pending) == 0 {
			continue
		}
		kept := m.File(PendingFile{Ino: n.ino, Path: d.pathOf(n), DurableSize: n.dur.size, Ops: n.pending})
		for i := range kept {
			op := &kept[i]
			if !validDataOp(op) {
				panic(fmt.Sprintf("disk: crash model returned an invalid data operation for %s: kind %d off %d len %d size %d", d.pathOf(n), op.Kind, op.Off, len(op.Data), op.Size))
			}
			n.dur.apply(op, &n.data)
		}
	}
	d.dirty = nil

	for _, n := range files {
		n.dropPending()
		n.pendBuf = nil
		n.data = n.dur.clone()
		n.atim, n.mtim, n.ctim = n.durAtim, n.durMtim, n.durCtim
	}
}

func validDataOp(op *DataOp) bool {
	switch op.Kind {
	case DataWrite:
		return op.Off >= 0 && op.Off <= maxFileSize && int64(len(op.Data)) <= maxFileSize-op.Off
	case DataTruncate:
		return op.Size >= 0 && op.Size <= maxFileSize
	}
	return false
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// rebuild replaces the page cache's namespace with the durable one: what is
// reachable from the root through durable entries. A directory reachable
// twice (possible when a crash model keeps a move without its source's
// removal) keeps only its first entry in name order, so the result is a
// tree. It returns the regular files that exist after the crash.
func (d *Disk) rebuild() []*inode {
	var files []*inode
	var walk func(dir *inode)
	walk = func(dir *inode) {
		src := d.durableEntries(dir)
		out := make(entries, 0, len(src))
		dir.subdirs = 0
		for _, e := range src {
			n := e.node
			if n.typ == TypeDirectory {
				if n.mark == d.epoch {
					continue
				}
				out = append(out, e)
				n.mark = d.epoch
				n.parent, n.name, n.removed, n.opens = dir, e.name, false, 0
				dir.subdirs++
				walk(n)
				continue
			}
			out = append(out, e)
			if n.mark != d.epoch {
				n.mark = d.epoch
				n.nlink, n.opens = 0, 0
				n.parent, n.name = dir, e.name
				if n.typ == TypeRegular {
					files = append(files, n)
				}
			}
			n.nlink++
		}
		dir.entries = out
		if d.strict {
			dir.durEntries = slices.Clone(out)
		}
	}
	d.root.mark = d.epoch
	walk(d.root)
	return files
}
