package disk

import (
	"fmt"
	"slices"
	"sort"
)

// Crash models: which of the pending writes a crash writes back. The
// configuration fields torn_writes, reorder_writes, fs_model and
// corrupt_on_crash select one with NewCrashModel; sector_bytes sets where
// a torn write may end.
//
// Every choice a model makes comes from its Draw, in this order within one
// crash (a draw is skipped when there is nothing to choose):
//
//	torn_writes alone, in DirOps: c = draw(N+1), N the pending operations
//	    of the disk (directory operations and every file's writes and
//	    truncates); the first c in the order they happened are kept. If the
//	    next one is a write of L >= 2 bytes, t = draw(L) of its bytes are
//	    kept too.
//	reorder_writes, in DirOps: dir_reorder draws draw(2) per pending
//	    directory operation in order (1 keeps it); the other models keep
//	    the first draw(D+1) of the D pending directory operations.
//	reorder_writes, per surviving file in inode order, in File: the
//	    size log keeps its first draw(U+1) units; under ext4_ordered with
//	    torn_writes, if the next unit is an append piece of L >= 2 bytes,
//	    draw(L) of its bytes are kept. Then for each page holding pieces,
//	    ascending: its first draw(M+1) pieces are kept and, with
//	    torn_writes, draw(L) bytes of the next one if it has L >= 2.
//	crash_on_io during the fsync of a file (CrashConfig.Syncing), for
//	    that file instead of the model's draws for it: its first
//	    draw(N+1) of N pending operations are kept and, if the next is a
//	    write of L >= 2 bytes, draw(L) of its bytes.
//	corrupt_on_crash, per surviving file in inode order, after the
//	    model's own draws for the file: the byte draw(B), B the written
//	    bytes that are in the file after the crash, then the bit draw(8).
//
// sector_bytes (CrashConfig.SectorBytes) changes no draw: each draw(L) of
// a write's bytes is made as above, then the kept part is cut back so that
// it ends on a file offset that is a multiple of the sector size, and a
// write of which nothing remains is not kept at all (sectorCut).

// FSModel names which crash states reorder_writes may produce.
type FSModel string

const (
	// Ext4Ordered is ext4 data=ordered: appends and truncates of a file
	// persist as an in-order prefix split at page boundaries; overwrites
	// persist per page in any order; bytes past the surviving size are
	// not kept. Directory operations persist as an in-order prefix.
	Ext4Ordered FSModel = "ext4_ordered"
	// PageIndependent keeps any subset of a file's dirty pages, in order
	// within each page, so a later appended page can survive without an
	// earlier one, leaving zeros. The file's size and truncates persist as
	// an in-order prefix. Directory operations as Ext4Ordered.
	PageIndependent FSModel = "page_independent"
	// DirReorder is PageIndependent with each pending directory operation
	// surviving independently. It needs strict directories.
	DirReorder FSModel = "dir_reorder"
)

// ParseFSModel checks an fs_model name; "" is the default, ext4_ordered.
func ParseFSModel(s string) (FSModel, error) {
	switch m := FSModel(s); m {
	case "":
		return Ext4Ordered, nil
	case Ext4Ordered, PageIndependent, DirReorder:
		return m, nil
	}
	return "", fmt.Errorf("fs_model %q is not a file system model: use ext4_ordered, page_independent or dir_reorder", s)
}

// CrashConfig is the part of a world's faults that shapes a crash.
type CrashConfig struct {
	Torn    bool    // torn_writes
	Reorder bool    // reorder_writes
	FSModel FSModel // fs_model; "" when the world does not set it
	Corrupt bool    // corrupt_on_crash
	// StrictDirs is strict_dirs, which dir_reorder needs.
	StrictDirs bool
	// SectorBytes is sector_bytes: a write torn by a crash keeps a prefix
	// that ends on a multiple of it. 0 and 1 tear at any byte.
	SectorBytes int64
	// Syncing is the inode (Op.Ino) of the file whose fsync the crash
	// interrupts, for crash_on_io during a file fsync; 0 for none.
	Syncing uint64
}

// Validate reports a configuration no crash model can follow.
func (c CrashConfig) Validate() error {
	m, err := ParseFSModel(string(c.FSModel))
	if err != nil {
		return err
	}
	if c.FSModel != "" && !c.Reorder {
		return fmt.Errorf("fs_model %s has no effect without reorder_writes: set \"reorder_writes\": true, or remove fs_model", c.FSModel)
	}
	if m == DirReorder && !c.StrictDirs {
		return fmt.Errorf("fs_model dir_reorder reorders directory operations, which are only pending with strict_dirs: set \"strict_dirs\": true")
	}
	if !ValidSectorBytes(c.SectorBytes) && c.SectorBytes != 0 {
		return fmt.Errorf("sector_bytes %d is not a sector size: use 1 (tear at any byte) or a power of two from 512 to 4096", c.SectorBytes)
	}
	return nil
}

// ValidSectorBytes reports whether n is a sector_bytes value: 1, or a
// power of two from 512 to 4096.
func ValidSectorBytes(n int64) bool {
	return n == 1 || n >= 512 && n <= 4096 && n&(n-1) == 0
}

// sectorCut is how many of the first t bytes of a write at off a crash
// keeps when the disk writes sectors of sector bytes atomically: the kept
// end rounded down to a multiple of sector, 0 when that leaves nothing of
// the write. A sector of 0 or 1 keeps all t.
func sectorCut(off int64, t int, sector int64) int {
	if sector <= 1 {
		return t
	}
	end := (off + int64(t)) / sector * sector
	if end <= off {
		return 0
	}
	return int(end - off)
}

// NewCrashModel returns the crash model c describes, drawing every choice
// from draw. A model is meant for one crash; the package comment above
// lists the draws it makes, in order.
func NewCrashModel(c CrashConfig, draw Draw) (CrashModel, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	fs, _ := ParseFSModel(string(c.FSModel))
	var m CrashModel = KeepNothing{}
	switch {
	case c.Reorder:
		m = &Reorder{Model: fs, Torn: c.Torn, Draw: draw, Sector: c.SectorBytes}
	case c.Torn:
		m = &Torn{Draw: draw, Sector: c.SectorBytes}
	}
	if c.Syncing != 0 {
		m = &InFlight{Model: m, Ino: c.Syncing, Draw: draw, Sector: c.SectorBytes}
	}
	if c.Corrupt {
		m = &Corrupt{Model: m, Draw: draw}
	}
	return m, nil
}

// Torn is torn_writes without reorder_writes: a crash keeps an in-order
// prefix of every pending operation of the disk, across files and
// directories, possibly ending in part of a write. It ignores fs_model.
type Torn struct {
	Draw   Draw
	Sector int64 // sector_bytes: the part of a write kept ends on a multiple

	cut     uint64 // operations with a smaller Seq are kept
	torn    uint64 // the Seq of the write kept in part, or 0
	tornLen int    // how many of its bytes
}

func (m *Torn) DirOps(p *Pending) []int {
	seqs := make([]uint64, 0, len(p.Dirs))
	for _, op := range p.Dirs {
		seqs = append(seqs, op.Seq)
	}
	var writes map[uint64]DataOp // by Seq, the writes that can tear
	for _, f := range p.Files {
		for _, op := range f.Ops {
			seqs = append(seqs, op.Seq)
			if op.Kind == DataWrite && len(op.Data) >= 2 {
				if writes == nil {
					writes = map[uint64]DataOp{}
				}
				writes[op.Seq] = op
			}
		}
	}
	m.cut, m.torn, m.tornLen = ^uint64(0), 0, 0
	if len(seqs) == 0 {
		return nil
	}
	slices.Sort(seqs)
	if c := m.Draw.pick(len(seqs) + 1); c < len(seqs) {
		m.cut = seqs[c]
		if w, ok := writes[m.cut]; ok {
			if t := sectorCut(w.Off, m.Draw.pick(len(w.Data)), m.Sector); t > 0 {
				m.torn, m.tornLen = m.cut, t
			}
		}
	}
	var keep []int
	for i, op := range p.Dirs {
		if op.Seq < m.cut {
			keep = append(keep, i)
		}
	}
	return keep
}

func (m *Torn) File(f PendingFile) Writeback {
	var wb Writeback
	for _, op := range f.Ops {
		switch {
		case op.Seq < m.cut:
			wb.Ops = append(wb.Ops, op)
		case op.Seq == m.torn:
			op.Data = op.Data[:m.tornLen]
			wb.Ops = append(wb.Ops, op)
		}
	}
	return wb
}

// InFlight is a crash in the middle of the fsync of one file (crash_on_io):
// the fsync was writing that file's pending operations out in order, so an
// in-order prefix of them survives, possibly ending in part of a write,
// whatever Model does with the other files.
type InFlight struct {
	Model  CrashModel
	Ino    uint64
	Draw   Draw
	Sector int64 // sector_bytes: the part of a write kept ends on a multiple
}

func (m *InFlight) DirOps(p *Pending) []int { return m.Model.DirOps(p) }

func (m *InFlight) File(f PendingFile) Writeback {
	if f.Ino != m.Ino {
		return m.Model.File(f)
	}
	c := m.Draw.pick(len(f.Ops) + 1)
	wb := Writeback{Ops: f.Ops[:c:c]}
	if c < len(f.Ops) && f.Ops[c].Kind == DataWrite && len(f.Ops[c].Data) >= 2 {
		if t := sectorCut(f.Ops[c].Off, m.Draw.pick(len(f.Ops[c].Data)), m.Sector); t > 0 {
			op := f.Ops[c]
			op.Data = op.Data[:t]
			wb.Ops = append(wb.Ops, op)
		}
	}
	return wb
}

// Reorder is reorder_writes: a crash writes dirty pages back out of order
// within the limits of an FSModel, each file independently of the others.
// With Torn, the last write kept in each page may be kept in part.
type Reorder struct {
	Model  FSModel // "" is Ext4Ordered
	Torn   bool
	Draw   Draw
	Sector int64 // sector_bytes: the part of a write kept ends on a multiple
}

func (m *Reorder) DirOps(p *Pending) []int {
	var keep []int
	if len(p.Dirs) == 0 {
		return nil
	}
	if m.Model == DirReorder {
		for i := range p.Dirs {
			if m.Draw.pick(2) == 1 {
				keep = append(keep, i)
			}
		}
		return keep
	}
	for i := range m.Draw.pick(len(p.Dirs) + 1) {
		keep = append(keep, i)
	}
	return keep
}

// piece is the part of one write, or one truncate, that a crash keeps or
// drops as a unit.
type piece struct {
	seq   uint64
	off   int64
	data  []byte // nil for a truncate or a size-only unit
	trunc bool
	size  int64 // a truncate's size; a size unit's size after it
}

// split cuts the bytes [from, to) of write w at page boundaries.
func split(w *DataOp, from, to int64, fn func(p piece)) {
	for from < to {
		end := min(to, (from/pageSize+1)*pageSize)
		fn(piece{seq: w.Seq, off: from, data: w.Data[from-w.Off : end-w.Off], size: end})
		from = end
	}
}

func (m *Reorder) File(f PendingFile) Writeback {
	ordered := m.Model == Ext4Ordered || m.Model == ""
	// The size log: truncates, and what extends the file, split at page
	// boundaries. Under ext4_ordered it carries the appended bytes; the
	// other models write every byte back through its page.
	var sizeLog []piece
	pages := map[int64][]piece{}
	size := f.DurableSize
	for i := range f.Ops {
		op := &f.Ops[i]
		if op.Kind == DataTruncate {
			sizeLog = append(sizeLog, piece{seq: op.Seq, trunc: true, size: op.Size})
			size = op.Size
			continue
		}
		end := op.Off + int64(len(op.Data))
		toPage := func(p piece) { pages[p.off/pageSize] = append(pages[p.off/pageSize], p) }
		if ordered {
			split(op, op.Off, min(end, size), toPage) // overwrites
			split(op, max(op.Off, size), end, func(p piece) { sizeLog = append(sizeLog, p) })
		} else {
			split(op, op.Off, end, toPage)
			split(op, max(op.Off, size), end, func(p piece) {
				p.data = nil // the bytes go back through their page
				sizeLog = append(sizeLog, p)
			})
		}
		size = max(size, end)
	}

	var kept []piece
	surviving := f.DurableSize
	if len(sizeLog) > 0 {
		c := m.Draw.pick(len(sizeLog) + 1)
		kept = append(kept, sizeLog[:c]...)
		if c > 0 {
			surviving = sizeLog[c-1].size
		}
		if c < len(sizeLog) && ordered && m.Torn {
			if p := sizeLog[c]; len(p.data) >= 2 {
				if t := sectorCut(p.off, m.Draw.pick(len(p.data)), m.Sector); t > 0 {
					p.data = p.data[:t]
					kept = append(kept, p)
					surviving = p.off + int64(t)
				}
			}
		}
	}
	keys := make([]int64, 0, len(pages))
	for k := range pages {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		ps := pages[k]
		c := m.Draw.pick(len(ps) + 1)
		kept = append(kept, ps[:c]...)
		if c < len(ps) && m.Torn && len(ps[c].data) >= 2 {
			if t := sectorCut(ps[c].off, m.Draw.pick(len(ps[c].data)), m.Sector); t > 0 {
				p := ps[c]
				p.data = p.data[:t]
				kept = append(kept, p)
			}
		}
	}

	// Apply what is kept in the order it happened, then cut or extend the
	// file to the size the kept part of the size log gives it.
	sort.SliceStable(kept, func(i, j int) bool {
		if kept[i].seq != kept[j].seq {
			return kept[i].seq < kept[j].seq
		}
		return kept[i].off < kept[j].off
	})
	wb := Writeback{Ops: make([]DataOp, 0, len(kept)+1)}
	for _, p := range kept {
		switch {
		case p.trunc:
			wb.Ops = append(wb.Ops, DataOp{Kind: DataTruncate, Size: p.size, Seq: p.seq})
		case len(p.data) > 0:
			wb.Ops = append(wb.Ops, DataOp{Kind: DataWrite, Off: p.off, Data: p.data, Seq: p.seq})
		}
	}
	wb.Ops = append(wb.Ops, DataOp{Kind: DataTruncate, Size: surviving})
	return wb
}

// Corrupt is corrupt_on_crash on top of another model: in every file
// whose written-back bytes are in the file after the crash, one bit among
// those bytes flips, as a sector half written when the power failed.
type Corrupt struct {
	Model CrashModel
	Draw  Draw
}

func (m *Corrupt) DirOps(p *Pending) []int { return m.Model.DirOps(p) }

func (m *Corrupt) File(f PendingFile) Writeback {
	wb := m.Model.File(f)
	var written spans
	for _, op := range wb.Ops {
		switch op.Kind {
		case DataWrite:
			written.add(op.Off, op.Off+int64(len(op.Data)))
		case DataTruncate:
			written.cut(op.Size, maxFileSize+1)
		}
	}
	if t := written.total(); t > 0 {
		off := written.nth(int64(m.Draw.pick(int(t))))
		wb.Flips = append(wb.Flips, off*8+int64(m.Draw.pick(8)))
	}
	return wb
}
