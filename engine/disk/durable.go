package disk

import (
	"fmt"
	"slices"
)

// What survives a crash. Each file keeps the ordered log of data operations
// since its last fsync (pending.go: a write's bytes are held once, in the
// page cache or set aside); the disk keeps (under strict dirs) the ordered log
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
	// Seq orders every pending operation of the disk, data and directory
	// operations of all files together, from 1. A model that keeps an
	// in-order prefix across files compares it.
	Seq uint64
}

// PendingFile is what a crash model sees of one file with pending data.
type PendingFile struct {
	Ino         uint64
	Path        string // in Pending: its path before the crash; in File: after
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
	Seq     uint64 // as DataOp.Seq
}

// Pending is everything a crash could write back, as it stands before the
// crash changes anything. Its slices are only valid during DirOps.
type Pending struct {
	Dirs  []DirOp       // pending directory operations (strict dirs only), in order
	Files []PendingFile // every file with pending data, in inode order
}

// A CrashModel decides which pending operations a crash keeps. A directory
// operation is kept or dropped whole; file data may be kept in part.
type CrashModel interface {
	// DirOps is called first, once per crash, with everything pending.
	// It returns the indices into p.Dirs of the directory operations to
	// keep, ascending; they apply in their original order. A model that
	// decides across files (an in-order prefix of all writes) decides
	// here, since it sees every file's log.
	DirOps(p *Pending) []int
	// File is called next for each file that exists after the crash and
	// has pending data, in inode order. It returns what to write back on
	// top of the durable content. f.Ops and the bytes they hold are only
	// valid during the call.
	File(f PendingFile) Writeback
}

// Writeback is what a crash writes back for one file.
type Writeback struct {
	// Ops are applied to the durable content in this order: a subset, a
	// prefix, parts of writes, reordered, and truncates of the model's own.
	Ops []DataOp
	// Flips are bits flipped after Ops, each as byte offset*8 + bit; the
	// byte must be inside the file as Ops leave it. Each is recorded as
	// corrupt_on_crash damage.
	Flips []int64
}

// KeepNothing is the plain crash: only what fsync made durable survives.
type KeepNothing struct{}

func (KeepNothing) DirOps(*Pending) []int      { return nil }
func (KeepNothing) File(PendingFile) Writeback { return Writeback{} }

// KeepAll is a crash after the kernel wrote everything back: the disk
// comes back as the program last saw it, minus open handles and files
// that only open handles kept alive.
type KeepAll struct{}

func (KeepAll) DirOps(p *Pending) []int {
	keep := make([]int, len(p.Dirs))
	for i := range keep {
		keep[i] = i
	}
	return keep
}
func (KeepAll) File(f PendingFile) Writeback { return Writeback{Ops: f.Ops} }

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
	d.seq++
	op.Seq = d.seq
	d.dirLog = append(d.dirLog, dirLogEntry{op: op, eff: [2]effect{a, b}})
}

// syncDir makes dir's pending entries up to mark durable: every pending
// operation logged at or before mark (Seq <= mark) that changed dir, and
// every earlier one that changed a name those operations touch (a journal
// could not commit the later without the earlier). Operations on other
// directories, and every operation logged after mark, stay pending.
func (d *Disk) syncDir(dir *inode, mark uint64) {
	if !d.strict || len(d.dirLog) == 0 {
		return
	}
	cut := len(d.dirLog) // the log is in Seq order: [0, cut) is up to mark
	for cut > 0 && d.dirLog[cut-1].op.Seq > mark {
		cut--
	}
	need := map[effectKey]struct{}{}
	commit := make([]bool, len(d.dirLog))
	any := false
	for i := cut - 1; i >= 0; i-- {
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

// logWrite logs the write of length bytes at off that the page cache now
// holds (writeCache); old is the cache's size before the write.
func (d *Disk) logWrite(n *inode, off, length, old int64) {
	if n.pending.len() == 0 {
		n.pendBase = old
	}
	d.seq++
	n.pending.push(pendOp{off: off, n: length, seq: d.seq})
	n.live.add(off, off+length, n.pending.len()-1)
	d.markDirty(n)
}

func (d *Disk) logTruncate(n *inode, size, old int64) {
	if n.pending.len() == 0 {
		n.pendBase = old
	}
	d.seq++
	n.pending.push(pendOp{off: size, n: -1, seq: d.seq})
	d.markDirty(n)
}

func (d *Disk) markDirty(n *inode) {
	if d.dirty == nil {
		d.dirty = map[*inode]struct{}{}
	}
	d.dirty[n] = struct{}{}
}

func (n *inode) dropPending() {
	n.pending.reset()
	n.parts.reset()
	n.live.reset()
	n.arena = nil
}

// syncFile makes a file's data, size and times durable: O(pending bytes).
// It heals damage its writes cover. A stale page it writes to (one whose
// earlier writeback failed or was lost) is written in full, as the kernel
// writes whole pages, and so is the file's size.
func (d *Disk) syncFile(n *inode) {
	touched, _ := n.writeBack(n.pending.len(), nil)
	if len(n.stale) > 0 {
		n.dropStale(n.data.size)
	}
	if len(touched) > 0 {
		n.dur.truncate(n.data.size, &n.data)
		for _, pg := range touched {
			if _, ok := n.stale[pg]; !ok || pg >= len(n.data.pages) {
				continue
			}
			n.dur.pages[pg] = n.data.pages[pg] // shared: same index, writers copy
			delete(n.stale, pg)
			n.heal(int64(pg)*pageSize, int64(pg+1)*pageSize)
		}
	}
	n.dropPending()
	delete(d.dirty, n)
	n.durAtim, n.durMtim, n.durCtim = n.atim, n.mtim, n.ctim
}

// dropStale forgets stale pages past a file of size bytes.
func (n *inode) dropStale(size int64) {
	last := pagesFor(size)
	for pg := range n.stale { // deletions only; order does not matter
		if pg >= last {
			delete(n.stale, pg)
		}
	}
}

// markStale records every page whose durable copy differs from the page
// cache now that no pending operation will write it.
func (n *inode) markStale() {
	for i := 0; i < len(n.data.pages); i++ {
		n.markStaleAt(i)
	}
}

// markStaleAt records page i (of the cache) as stale if its durable copy
// differs.
func (n *inode) markStaleAt(i int) {
	var dp *page
	if i < len(n.dur.pages) {
		dp = n.dur.pages[i]
	}
	cp := n.data.pages[i]
	if cp != dp && !samePage(cp, dp) {
		n.stalePage(i)
	}
}

// samePage compares two pages' bytes; nil is a page of zeros.
func samePage(a, b *page) bool {
	var zero page
	if a == nil {
		a = &zero
	}
	if b == nil {
		b = &zero
	}
	return *a == *b
}

func (n *inode) stalePage(pg int) {
	if n.stale == nil {
		n.stale = map[int]struct{}{}
	}
	n.stale[pg] = struct{}{}
}

// maybeFree drops the page cache of a file that has no name and no open
// handle: nothing can read it, and Linux writes nothing of it back. Its
// durable copy stays, since under strict dirs the unlink may not be.
func (d *Disk) maybeFree(n *inode) {
	if n.typ != TypeRegular || n.nlink > 0 || n.opens > 0 || len(n.maps) > 0 {
		return
	}
	n.dropPending()
	d.used -= n.data.size
	n.data = content{}
	n.stale = nil
	delete(d.dirty, n)
}

// Crash is a power failure: it keeps exactly what fsync made durable.
// Every open handle except Root becomes stale.
func (d *Disk) Crash() { d.CrashWith(KeepNothing{}) }

// CrashReport says what a crash did beyond dropping the page cache.
type CrashReport struct {
	// Flips are the bits a corrupting model flipped (corrupt_on_crash),
	// in inode order, with the file's path after the crash.
	Flips []Fired
}

// CrashWith crashes the disk, keeping the pending operations m chooses.
func (d *Disk) CrashWith(m CrashModel) CrashReport {
	var rep CrashReport
	dirty := make([]*inode, 0, len(d.dirty))
	for n := range d.dirty {
		if n.pending.len() > 0 {
			dirty = append(dirty, n)
		}
	}
	slices.SortFunc(dirty, func(a, b *inode) int { return cmpUint(a.ino, b.ino) })
	p := &Pending{Files: make([]PendingFile, len(dirty))}
	logs := make([][]DataOp, len(dirty))
	_, plain := m.(KeepNothing) // looks at no log: spare making them
	for i, n := range dirty {
		if !plain {
			logs[i] = n.dataOps()
		}
		p.Files[i] = PendingFile{Ino: n.ino, Path: d.pathOf(n), DurableSize: n.dur.size, Ops: logs[i]}
	}
	if d.strict && len(d.dirLog) > 0 {
		p.Dirs = make([]DirOp, len(d.dirLog))
		for i := range d.dirLog {
			p.Dirs[i] = d.dirLog[i].op
		}
	}
	keep := m.DirOps(p)
	for j, i := range keep {
		if i < 0 || i >= len(p.Dirs) || (j > 0 && i <= keep[j-1]) {
			panic(fmt.Sprintf("disk: crash model kept directory operations %v of %d: indices must be ascending and in range", keep, len(p.Dirs)))
		}
	}
	if torn := d.tears(); torn != nil {
		// A torn rename keeps its half whether or not the model kept it;
		// the others apply as the model says, all in their order.
		k := 0
		for i := range d.dirLog {
			kept := k < len(keep) && keep[k] == i
			if kept {
				k++
			}
			switch {
			case torn[i] != TearNone:
				applyTorn(&d.dirLog[i], torn[i])
			case kept:
				applyEffects(&d.dirLog[i])
			}
		}
	} else {
		for _, i := range keep {
			applyEffects(&d.dirLog[i])
		}
	}
	clear(d.dirLog)
	d.dirLog = d.dirLog[:0]
	d.epoch++
	d.nsGen++
	d.locks = nil

	files := d.rebuild()

	for i, n := range dirty {
		if n.mark != d.epoch {
			n.dropPending() // gone after the crash, and unreachable from now on
			continue
		}
		path := d.pathOf(n)
		wb := m.File(PendingFile{Ino: n.ino, Path: path, DurableSize: n.dur.size, Ops: logs[i]})
		for j := range wb.Ops {
			op := &wb.Ops[j]
			if !validDataOp(op) {
				panic(fmt.Sprintf("disk: crash model returned an invalid data operation for %s: kind %d off %d len %d size %d", path, op.Kind, op.Off, len(op.Data), op.Size))
			}
			if op.Kind == DataWrite {
				n.dur.crashWrite(op.Data, op.Off, &n.data, n.liveShare(logs[i], op))
			} else {
				n.dur.apply(op, &n.data)
			}
			if len(n.damage) > 0 {
				n.healOp(op)
			}
		}
		for _, f := range wb.Flips {
			off, bit := f/8, int(f%8)
			if f < 0 || off >= n.dur.size {
				panic(fmt.Sprintf("disk: crash model flipped bit %d of %s, which has %d bytes after the crash", f, path, n.dur.size))
			}
			flipBit(&n.dur, &n.data, off, bit)
			n.addDamage(Damage{Off: off, Len: 1, Kind: KindCorruptOnCrash})
			rep.Flips = append(rep.Flips, Fired{Kind: KindCorruptOnCrash, Path: path, Offset: off, Bit: bit})
		}
		logs[i] = nil
	}
	d.dirty = nil
	d.crashMappings()

	d.used = 0
	for _, n := range files {
		n.dropPending()
		n.stale = nil
		n.data = n.dur.clone()
		n.atim, n.mtim, n.ctim = n.durAtim, n.durMtim, n.durCtim
		d.used += n.data.size
	}
	return rep
}

// flipBit flips one bit of c at off, copying the page first if it is
// shared with other.
func flipBit(c, other *content, off int64, bit int) {
	pg := c.own(int(off/pageSize), other)
	pg[off%pageSize] ^= 1 << bit
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
