package engine

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/internal/wasi"
	"github.com/seedfall/seedfall/engine/world"
)

// Disk fault kinds that fire at an operation, as the schedule names them.
// "disk op #N" (writes, truncates, fsyncs) numbers all but the read kinds,
// which count "disk read #N".
const (
	KindCrashIO          = "crash_io"
	KindFsyncEIO         = disk.KindFsyncEIO
	KindWriteEIO         = "write_eio"
	KindWriteENOSPC      = "write_enospc"
	KindReadEIO          = "read_eio"
	KindReadCorrupt      = disk.KindReadCorrupt
	KindLostWrite        = disk.KindLostWrite
	KindMisdirectedWrite = disk.KindMisdirectedWrite
	KindBitrot           = disk.KindBitrot
)

func init() {
	register(familyDef{name: "disk", open: openDisk})
	faults.Register(faults.KindInfo{Name: KindCrashIO, AtOp: true, Lasts: true})
	for _, k := range []string{KindFsyncEIO, KindWriteEIO, KindWriteENOSPC, KindReadEIO, KindReadCorrupt, KindLostWrite, KindMisdirectedWrite} {
		faults.Register(faults.KindInfo{Name: k, AtOp: true})
	}
	faults.Register(faults.KindInfo{Name: KindBitrot})
	faults.Register(faults.KindInfo{Name: KindMmapEarlyWriteback, AtOp: true}) // op: the node's crash number
	for _, f := range []string{"torn_writes", "reorder_writes", "fs_model", "sector_bytes", "corrupt_on_crash", "crash_on_io",
		"fsync_eio", "write_eio", "write_enospc", "read_eio", "read_corrupt", "lost_write", "misdirected_write",
		"disk_bytes", "disk_latency", "bitrot_per_sec", "mmap_early_writeback"} {
		Implemented["faults."+f] = true
	}
	for _, p := range []string{"nodes[]", "workload", "workloads[]", "finally"} {
		Implemented[p+".disk"] = true
		Implemented[p+".files"] = true
	}
}

// diskFamily is the disk faults' state for one run.
type diskFamily struct {
	*env
	crash disk.CrashConfig
	nodes map[string]*diskNode // by program name; looked up, never iterated
	// ops indexes a replay's operation faults by where they fire.
	ops map[opKey][]faults.Fault
	// wb is a replay's mmap_early_writeback faults (below).
	wb map[wbKey]bool
	// moved says which of a replay's operation faults hit another file
	// than the one the schedule names (Result.Moved).
	moved []string
}

type opKey struct {
	node string
	read bool // counted by "disk read #N", not "disk op #N"
	op   uint64
}

// diskNode is one program's disk fault state, across its incarnations.
type diskNode struct {
	faulty  bool   // the program takes disk faults (world.NodeFaults)
	crashes uint64 // crashes so far: the crash model's draws are keyed by it
	syncing uint64 // the inode whose fsync a crash_io interrupts, or 0
	latency rng.Stream
	seed    []seedFile // copied onto the disk before the first start
}

// seedFile is one entry of a seeded disk: a directory when dir is set.
type seedFile struct {
	path string
	data []byte
	dir  bool
}

func openDisk(e *env) (family, error) {
	f := &e.w.Faults
	d := &diskFamily{env: e, nodes: map[string]*diskNode{}}
	d.crash = disk.CrashConfig{Torn: f.TornWrites, Reorder: f.ReorderWrites, Corrupt: f.CorruptOnCrash, StrictDirs: f.StrictDirs,
		SectorBytes: f.SectorBytes}
	if f.ReorderWrites {
		d.crash.FSModel = disk.FSModel(f.FSModel)
	}
	if err := d.crash.Validate(); err != nil {
		return family{}, err
	}
	for _, p := range e.w.Programs() {
		dn := &diskNode{faulty: e.w.NodeFaults(p), latency: rng.ForName(e.seedFor("disklatency"), "disklatency", p.Name)}
		var err error
		if dn.seed, err = readSeed(p); err != nil {
			return family{}, err
		}
		d.nodes[p.Name] = dn
	}
	if e.given != nil {
		d.ops = map[opKey][]faults.Fault{}
		d.wb = map[wbKey]bool{}
		for _, f := range e.given.Faults {
			if f.Kind == KindMmapEarlyWriteback {
				d.wb[wbKey{node: f.Node, crash: f.Op, path: f.Path, off: f.Offset}] = true
			}
			if read, ok := opKinds[f.Kind]; ok {
				k := opKey{node: f.Node, read: read, op: f.Op}
				d.ops[k] = append(d.ops[k], f)
			}
		}
	}
	return family{disk: d.options, process: d.process, plan: d.planBitrot, apply: d.applyBitrot,
		crashDisk: d.crashWithModel, rekey: d.rekey,
		keep:   func() any { return slices.Clone(d.moved) },
		resume: func(v any) { d.moved = slices.Clone(v.([]string)) },
		result: func(res *Result) { res.Moved = d.moved }}, nil
}

// rekey restarts each program's fsync latency stream when a branch
// re-keys disklatency (branch.go).
func (d *diskFamily) rekey(on func(stream string) bool) {
	if !on("disklatency") {
		return
	}
	for _, n := range d.nodeList() {
		name := n.prog.Name
		if dn := d.nodes[name]; dn != nil {
			dn.latency = rng.ForName(d.seedFor("disklatency"), "disklatency", name)
		}
	}
}

// opKinds are the kinds that fire at an operation; true for reads.
var opKinds = map[string]bool{
	KindCrashIO: false, KindFsyncEIO: false, KindWriteEIO: false, KindWriteENOSPC: false,
	KindLostWrite: false, KindMisdirectedWrite: false, KindReadEIO: true, KindReadCorrupt: true,
}

// readSeed reads a program's seeded disk and files from the host, in a
// fixed order: the directory's tree in lexical order, then "files".
func readSeed(p *world.Program) ([]seedFile, error) {
	var out []seedFile
	total := int64(0)
	// read takes one host file, a regular file within what is left of the
	// program's limit, so that /dev/urandom or a huge tree cannot exhaust
	// the host.
	read := func(path string) ([]byte, error) {
		b, err := world.ReadBounded(path, MaxSeedBytes-total)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		total += int64(len(b))
		return b, nil
	}
	if p.Disk != "" {
		err := filepath.WalkDir(p.Disk, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(p.Disk, path)
			rel = filepath.ToSlash(rel)
			switch {
			case rel == ".":
			case e.IsDir():
				out = append(out, seedFile{path: rel, dir: true})
			case e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0:
				b, err := read(path)
				if err != nil {
					return err
				}
				out = append(out, seedFile{path: rel, data: b})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: disk %s: %v (it must be a readable host directory of regular files, %s in all with files)", p.Path, p.Disk, err, world.SizeText(MaxSeedBytes))
		}
	}
	for _, fc := range p.Files {
		b, err := read(fc.Host)
		if err != nil {
			return nil, fmt.Errorf("%s: files: %v (each entry copies a readable regular host file; disk and files hold %s in all)", p.Path, err, world.SizeText(MaxSeedBytes))
		}
		out = append(out, seedFile{path: fc.Path, data: b})
	}
	return out, nil
}

// MaxSeedBytes is the most a program's seeded disk and files may hold: the
// host keeps them in memory, once per world and again in each node's disk.
const MaxSeedBytes = 1 << 30

// options gives a program's disk its size and, when it takes disk
// faults, the hook that draws them per operation.
func (d *diskFamily) options(n *node, o *disk.Options) {
	dn := d.nodes[n.prog.Name]
	if !dn.faulty {
		return
	}
	f := &d.w.Faults
	o.Capacity = f.DiskBytes
	if d.given != nil || f.CrashOnIO > 0 || f.FsyncEIO > 0 || f.WriteEIO > 0 || f.WriteENOSPC > 0 || f.ReadEIO > 0 ||
		f.ReadCorrupt > 0 || f.LostWrite > 0 || f.MisdirectedWrite > 0 {
		o.OnOp = func(op disk.Op) errno.Errno { return d.diskOp(n, dn, op) }
	}
}

// process seeds the disk before the first start and sets the fsync
// latency of every incarnation.
func (d *diskFamily) process(n *node, p *wasi.Process) {
	dn := d.nodes[n.prog.Name]
	if n.inc == 1 {
		for _, sf := range dn.seed {
			var err error
			if sf.dir {
				err = n.disk.MkdirAll(sf.path)
			} else {
				err = n.disk.WriteFile(sf.path, sf.data)
			}
			if err != nil {
				d.fail(ClassExit, n, fmt.Sprintf("seeding the disk of %s: %v", n.prog.Name, err))
				return
			}
		}
	}
	lat := d.w.Faults.DiskLatency
	if dn.faulty && lat.Max > 0 {
		p.SyncDelay = func() int64 { return int64(dn.latency.Between(lat.Min, lat.Max)) }
	}
}

// candidate is one operation fault that may fire at an operation.
type candidate struct {
	kind string
	prob float64
}

// candidates lists, in the order they are drawn, the faults that may fire
// at op. The first that fires and applies is the only one.
func (d *diskFamily) candidates(op disk.Op) []candidate {
	f := &d.w.Faults
	switch op.Kind {
	case disk.OpWrite:
		return []candidate{{KindCrashIO, f.CrashOnIO}, {KindWriteEIO, f.WriteEIO}, {KindWriteENOSPC, f.WriteENOSPC}}
	case disk.OpTruncate:
		return []candidate{{KindCrashIO, f.CrashOnIO}}
	case disk.OpSync:
		if op.Dir {
			return []candidate{{KindCrashIO, f.CrashOnIO}}
		}
		return []candidate{{KindCrashIO, f.CrashOnIO}, {KindFsyncEIO, f.FsyncEIO}, {KindLostWrite, f.LostWrite},
			{KindMisdirectedWrite, f.MisdirectedWrite}}
	case disk.OpRead:
		return []candidate{{KindReadEIO, f.ReadEIO}, {KindReadCorrupt, f.ReadCorrupt}}
	}
	return nil
}

// diskOp decides the operation faults of one disk operation of n: drawn
// from the world's rates, or, in a replay, exactly the schedule's.
func (d *diskFamily) diskOp(n *node, dn *diskNode, op disk.Op) errno.Errno {
	if !d.faultsActive() || d.over() || !n.up {
		return 0
	}
	// Each kind's stream is keyed by the operation, so removing another
	// fault never moves it; its first draw decides whether it fires, the
	// next ones what it hits.
	stream := func(kind string) *rng.Stream {
		s := rng.ForName(d.seed, kind, n.prog.Name, op.N)
		s.Float64()
		return &s
	}
	if d.given != nil {
		for _, f := range d.ops[opKey{node: n.prog.Name, read: op.Kind == disk.OpRead, op: op.N}] {
			if f.Path != "" && op.Path != f.Path {
				// The program changed since the schedule was saved: the
				// fault fires at the same operation number, on another file.
				d.moved = append(d.moved, fmt.Sprintf("%s on %s at disk op #%d was saved hitting %s and now hits %s (%s): the program's operations changed since, so the fault no longer tests what it did",
					f.Kind, n.prog.Name, op.N, f.Path, op.Path, op.Kind))
			}
			if e, ok := d.fireOp(n, dn, op, f.Kind, stream(f.Kind), &f); ok {
				return e
			}
		}
		return 0
	}
	for _, c := range d.candidates(op) {
		if c.prob <= 0 {
			continue
		}
		s := rng.ForName(d.seed, c.kind, n.prog.Name, op.N)
		if s.Float64() >= c.prob {
			continue
		}
		if e, ok := d.fireOp(n, dn, op, c.kind, &s, nil); ok {
			return e
		}
	}
	return 0
}

// fireOp applies one operation fault and records it; ok is false when it
// cannot apply to op (an fsync with no dirty page cannot lose a write).
// given is the replayed fault, or nil when drawn.
func (d *diskFamily) fireOp(n *node, dn *diskNode, op disk.Op, kind string, s *rng.Stream, given *faults.Fault) (errno.Errno, bool) {
	draw := disk.Draw(s.Intn)
	now := time.Duration(d.now())
	f := faults.Fault{At: now, Kind: kind, Node: n.prog.Name, Op: op.N, Path: op.Path}
	var e errno.Errno
	switch kind {
	case KindCrashIO:
		ra := d.w.Faults.RestartAfter
		f.Until = now + s.Between(ra.Min, ra.Max)
		if given != nil {
			f.Until = now + max(0, given.Until-given.At)
		}
		if op.Kind == disk.OpSync && !op.Dir {
			dn.syncing = op.Ino
		}
		d.record(f)
		d.event(n, fmt.Sprintf("fault %s: crash during %s #%d of %s", kind, op.Kind, op.N, op.Path))
		d.links.crashInCall(n, f.Until) // does not return
	case KindWriteEIO, KindReadEIO, KindFsyncEIO:
		if kind == KindFsyncEIO {
			if _, ok := n.disk.FailSync(op); !ok {
				return 0, false
			}
		}
		e = errno.EIO
	case KindWriteENOSPC:
		e = errno.ENOSPC
	case KindReadCorrupt, KindLostWrite, KindMisdirectedWrite:
		var fired disk.Fired
		var ok bool
		switch kind {
		case KindReadCorrupt:
			fired, ok = n.disk.CorruptRead(op, draw)
		case KindLostWrite:
			fired, ok = n.disk.LoseWrite(op, draw)
		default:
			fired, ok = n.disk.MisdirectWrite(op, draw)
		}
		if !ok {
			return 0, false
		}
		f.Offset, f.Target = fired.Offset, fired.Target
	default:
		return 0, false
	}
	d.record(f)
	d.event(n, "fault "+describeDiskFault(f, op))
	return e, true
}

func describeDiskFault(f faults.Fault, op disk.Op) string {
	what := "disk op"
	if op.Kind == disk.OpRead {
		what = "disk read"
	}
	s := fmt.Sprintf("%s at %s #%d (%s %s)", f.Kind, what, f.Op, op.Kind, f.Path)
	switch f.Kind {
	case KindReadCorrupt:
		s += fmt.Sprintf(", flipped a bit of byte %d", f.Offset)
	case KindLostWrite:
		s += fmt.Sprintf(", page at %d kept its old content", f.Offset)
	case KindMisdirectedWrite:
		s += fmt.Sprintf(", page at %d landed at %d", f.Offset, f.Target)
	}
	return s
}

// crashWithModel is a crash of n's disk under the world's crash model,
// its choices drawn from the node's "disk" stream keyed by the crash's
// number, so a replay of the same crashes leaves the same states.
func (d *diskFamily) crashWithModel(n *node) {
	dn := d.nodes[n.prog.Name]
	syncing := dn.syncing
	dn.syncing = 0
	if !dn.faulty {
		n.disk.Crash()
		return
	}
	dn.crashes++
	d.mmapWriteback(n, dn)
	s := rng.ForName(d.seedFor("disk"), "disk", n.prog.Name, dn.crashes)
	cfg := d.crash
	cfg.Syncing = syncing
	m, err := disk.NewCrashModel(cfg, s.Intn)
	if err != nil {
		panic(err) // openDisk validated the configuration
	}
	rep := n.disk.CrashWith(m)
	for _, fl := range rep.Flips {
		d.event(n, fmt.Sprintf("corrupt_on_crash: flipped bit %d of byte %d of %s", fl.Bit, fl.Offset, fl.Path))
	}
}

// planBitrot draws each faulty program's bit rot as a Poisson process.
func (d *diskFamily) planBitrot() []faults.Fault {
	rate := d.w.Faults.BitrotPerSec
	if rate <= 0 {
		return nil
	}
	var out []faults.Fault
	for _, n := range d.nodeList() {
		if !d.nodes[n.prog.Name].faulty {
			continue
		}
		s := rng.ForName(d.seed, KindBitrot, n.prog.Name)
		for t := s.Exp(rate); t < d.w.Duration; t += s.Exp(rate) {
			out = append(out, faults.Fault{At: t, Kind: KindBitrot, Node: n.prog.Name, Until: t})
		}
	}
	return out
}

// applyBitrot flips one bit of durable data on a node's disk. Which bit
// comes from a stream keyed by the fault's time, so it does not move when
// other faults are removed.
func (d *diskFamily) applyBitrot(f faults.Fault) bool {
	if f.Kind != KindBitrot {
		return false
	}
	n := d.byName(f.Node)
	if n == nil {
		return true
	}
	s := rng.ForName(d.seedFor("disk"), "bitrot-site", n.prog.Name, uint64(f.At))
	fired, ok := n.disk.Bitrot(s.Intn)
	if !ok {
		return true
	}
	f.Path, f.Offset = fired.Path, fired.Offset
	d.record(f)
	d.event(n, fmt.Sprintf("fault bitrot: flipped bit %d of byte %d of %s", fired.Bit, fired.Offset, fired.Path))
	return true
}

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
