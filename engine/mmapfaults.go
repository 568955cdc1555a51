package engine

import (
	"fmt"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/rng"
)

// KindMmapEarlyWriteback is a dirty page of a writable shared mapping that
// the kernel had already written back when the node crashed: it survives
// the crash, durably, while the other dirty mapped pages are lost.
//
// It fires at a crash, not at a disk operation: its op is the node's crash
// number, counting every crash of that program in the run from 1 (crash and
// crash_io alike, the same count the crash model's draws are keyed by).
// path and offset name the page: the file's path when it crashed and the
// page's offset in it, a multiple of 4096. Each dirty page is drawn on its
// own, from a stream keyed by the seed, the kind, the node, the crash
// number, the file's inode number and the page's offset, so removing
// other faults does not move it. A replay keeps exactly the pages its
// faults name at the crash their op names, and draws nothing.
const KindMmapEarlyWriteback = "mmap_early_writeback"

// wbKey is where a replayed early writeback fires.
type wbKey struct {
	node  string
	crash uint64
	path  string
	off   int64
}

// mmapWriteback decides, at n's crash number dn.crashes, which dirty pages
// of its writable shared mappings the crash keeps, records each kept page
// as a fault, and hands them to the disk, which writes them back after the
// crash model has decided the rest.
func (d *diskFamily) mmapWriteback(n *node, dn *diskNode) {
	pages := n.disk.MappedDirty()
	if len(pages) == 0 {
		return
	}
	prob := d.w.Faults.MmapEarlyWriteback
	now := time.Duration(d.now())
	kept := pages[:0:0]
	for _, pg := range pages {
		var keep bool
		switch {
		case d.given != nil:
			keep = d.wb[wbKey{node: n.prog.Name, crash: dn.crashes, path: pg.Path, off: pg.Off}]
		case prob > 0:
			s := rng.ForName(d.seed, KindMmapEarlyWriteback, n.prog.Name, dn.crashes, pg.Ino, uint64(pg.Off))
			keep = s.Float64() < prob
		}
		if !keep {
			continue
		}
		kept = append(kept, pg)
		d.record(faults.Fault{At: now, Kind: KindMmapEarlyWriteback, Node: n.prog.Name, Op: dn.crashes, Path: pg.Path, Offset: pg.Off})
		d.event(n, fmt.Sprintf("fault %s at crash #%d: page at %d of %s was written back", KindMmapEarlyWriteback, dn.crashes, pg.Off, pg.Path))
	}
	n.disk.KeepMapped(kept)
	if lost := len(pages) - len(kept); lost > 0 {
		d.event(n, fmt.Sprintf("crash loses %d dirty mapped pages", lost))
	}
}
