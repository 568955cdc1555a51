package disk

// Weakened durability, for seedfall mutate. A mutant takes away one
// guarantee the disk otherwise keeps, to see whether the workload notices:
// a sync that succeeds and makes nothing durable (Options.Weaken), or a
// rename that a crash keeps in half (Options.Tear). The engine decides
// which calls to weaken; the disk says where it could (Reach), so that a
// run without a mutant tells which mutants could change it at all.

// SyncKind says which call asks a disk to make a file's data durable.
type SyncKind uint8

const (
	// SyncFsync is fsync(2): fd_sync, os.File.Sync (and its parked form,
	// SyncMark and SyncTo).
	SyncFsync SyncKind = iota + 1
	// SyncData is fdatasync(2): fd_datasync, syscall.Fdatasync (parked,
	// through fdatasync_start), and msync(MS_SYNC), which makes a mapped
	// file's data durable as fdatasync does.
	SyncData
	// SyncWrite is the sync that ends each write through a descriptor
	// opened with O_SYNC or O_DSYNC.
	SyncWrite
)

func (k SyncKind) String() string {
	switch k {
	case SyncFsync:
		return "fsync"
	case SyncData:
		return "fdatasync"
	case SyncWrite:
		return "O_SYNC write"
	}
	return "unknown"
}

// SyncCall describes to Options.Weaken a sync that would make something
// durable: a file with pending data (or pages an earlier writeback failed
// to write), or, with strict dirs, a directory while directory operations
// are pending. A sync with nothing to do is never asked about.
type SyncCall struct {
	Kind SyncKind // how it was asked for; a directory's is whatever call synced it
	Dir  bool     // a directory's fsync
	N    uint64   // the disk op it is ("disk op #N")
	Path string   // the file's or directory's path from the disk root
}

// Tear says what a crash keeps of a rename that no directory fsync has made
// durable yet (strict dirs only), in place of the crash model's choice of
// all of it or none.
type Tear uint8

const (
	// TearNone leaves the rename to the crash model.
	TearNone Tear = iota
	// TearBoth keeps the new entry but not the removal of the old one:
	// both names lead to the renamed file.
	TearBoth
	// TearNeither keeps the removal of the old name but not the new
	// entry, and the file the new name held before is gone too: neither
	// name survives.
	TearNeither
)

func (t Tear) String() string {
	switch t {
	case TearBoth:
		return "both names"
	case TearNeither:
		return "neither name"
	}
	return "as the crash model decides"
}

// Reach counts the calls and crashes of a disk that a mutant could have
// weakened: syncs that had something to make durable, by kind, directory
// fsyncs with directory operations pending (strict dirs only), and renames
// pending at a crash (strict dirs only). A run without any reach for a
// mutant runs the same with that mutant.
type Reach struct {
	Fsync, Fdatasync, OSync, DirSync uint64
	Renames                          uint64
}

// Add returns the sum of two counts.
func (r Reach) Add(o Reach) Reach {
	return Reach{Fsync: r.Fsync + o.Fsync, Fdatasync: r.Fdatasync + o.Fdatasync, OSync: r.OSync + o.OSync,
		DirSync: r.DirSync + o.DirSync, Renames: r.Renames + o.Renames}
}

// Reach returns what the disk's mutants could have weakened so far.
func (d *Disk) Reach() Reach { return d.reach }

// weakened decides a sync of n up to mark that Options.Weaken may make a
// no-op: it counts the sync's reach and, when the hook says so, counts the
// disk op and reports true, and the caller does nothing more.
func (d *Disk) weakened(n *inode, mark uint64, kind SyncKind) bool {
	c := SyncCall{Kind: kind, N: d.ops + 1}
	switch n.typ {
	case TypeDirectory:
		if !d.dirSyncs(n, mark) {
			return false
		}
		c.Dir = true
		d.reach.DirSync++
	case TypeRegular:
		if n.opsTo(mark) == 0 && len(n.stale) == 0 {
			return false
		}
		switch kind {
		case SyncData:
			d.reach.Fdatasync++
		case SyncWrite:
			d.reach.OSync++
		default:
			d.reach.Fsync++
		}
	default:
		return false
	}
	if d.weaken == nil {
		return false
	}
	c.Path = d.pathOf(n)
	if !d.weaken(c) {
		return false
	}
	// Still a disk op, so that the operations after it keep the numbers
	// (and the operation faults) they have without the mutant.
	d.ops++
	return true
}

// dirSyncs reports whether an fsync of dir up to mark has anything to
// make durable: with strict dirs, a pending operation on dir up to mark.
func (d *Disk) dirSyncs(dir *inode, mark uint64) bool {
	if !d.strict {
		return false
	}
	for i := range d.dirLog {
		if d.dirLog[i].op.Seq > mark {
			break
		}
		for _, ef := range d.dirLog[i].effects() {
			if ef.dir == dir {
				return true
			}
		}
	}
	return false
}

// tears asks Options.Tear about every rename pending at a crash, in the
// order they happened, and counts them. It returns nil when none is torn,
// else a Tear for each entry of the directory log.
func (d *Disk) tears() []Tear {
	var out []Tear
	for i := range d.dirLog {
		op := d.dirLog[i].op
		if op.Kind != DirRename {
			continue
		}
		d.reach.Renames++
		if d.tear == nil {
			continue
		}
		if t := d.tear(op); t != TearNone {
			if out == nil {
				out = make([]Tear, len(d.dirLog))
			}
			out[i] = t
		}
	}
	return out
}

// applyTorn applies the half of a rename that a crash keeps.
func applyTorn(e *dirLogEntry, t Tear) {
	old, nw := e.eff[0], e.eff[1] // the old name's removal, the new entry
	switch t {
	case TearBoth:
		nw.dir.durEntries.set(nw.name, nw.node)
	case TearNeither:
		old.dir.durEntries.set(old.name, nil)
		nw.dir.durEntries.set(nw.name, nil)
	}
}
