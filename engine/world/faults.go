package world

import (
	"math"
	"time"
)

// Preset names a built-in fault level. The values each one sets belong to a
// later stage; the parser only checks the name.
type Preset string

const (
	PresetNone             Preset = "none"
	PresetDurability       Preset = "durability"
	PresetResilient        Preset = "resilient"
	PresetHighAvailability Preset = "high_availability"
	PresetEverything       Preset = "everything"
)

// Presets lists the valid presets, each adding to the one before.
var Presets = []Preset{PresetNone, PresetDurability, PresetResilient, PresetHighAvailability, PresetEverything}

// Topology is a shape a partition can take.
type Topology string

const (
	TopologyHalf           Topology = "half"
	TopologyOne            Topology = "one"
	TopologyMajority       Topology = "majority"
	TopologyMajoritiesRing Topology = "majorities_ring"
	TopologyRandomGroups   Topology = "random_groups"
)

// Topologies lists the valid partition topologies.
var Topologies = []Topology{TopologyHalf, TopologyOne, TopologyMajority, TopologyMajoritiesRing, TopologyRandomGroups}

// ClogMode is what a clog does to the traffic it hits.
type ClogMode string

const (
	ClogStop ClogMode = "stop"
	ClogSlow ClogMode = "slow"
	ClogJam  ClogMode = "jam"
)

// ClogModes lists the valid clog modes.
var ClogModes = []ClogMode{ClogStop, ClogSlow, ClogJam}

// FSModel says which crash states reorder_writes may produce.
type FSModel string

const (
	FSExt4Ordered     FSModel = "ext4_ordered"
	FSPageIndependent FSModel = "page_independent"
	FSDirReorder      FSModel = "dir_reorder"
)

// FSModels lists the valid file system models.
var FSModels = []FSModel{FSExt4Ordered, FSPageIndependent, FSDirReorder}

// Faults is the "faults" object. Rates are per second of virtual time,
// probabilities are per operation and lie in [0, 1].
type Faults struct {
	Preset Preset // "" when the file names none

	CrashPerSec  float64
	RestartAfter Range

	PartitionPerSec     float64
	PartitionFor        Range
	PartitionTopologies []Topology

	ClogPerSec    float64
	ClogFor       Range
	ClogModes     []ClogMode
	ClogDelay     Range
	SwizzlePerSec float64
	ResetPerSec   float64

	UDPLoss float64
	UDPDup  float64

	SlowPerSec float64
	SlowFor    Range
	SlowFactor float64

	TornWrites         bool
	ReorderWrites      bool
	FSModel            FSModel
	SectorBytes        int64 // 1: a torn write may end at any byte
	CrashOnIO          float64
	FsyncEIO           float64
	DiskBytes          int64 // 0: unlimited
	WriteEIO           float64
	WriteENOSPC        float64
	ReadEIO            float64
	ReadCorrupt        float64
	LostWrite          float64
	MisdirectedWrite   float64
	CorruptOnCrash     bool
	BitrotPerSec       float64
	DiskLatency        Range
	MmapEarlyWriteback float64
	StrictDirs         bool

	ClockSkew       time.Duration
	PausePerSec     float64
	PauseFor        Range
	ClockJumpPerSec float64
	ClockJumpMax    time.Duration

	Buggify         bool
	IncludeWorkload bool
	Swarm           bool
}

// DefaultFaults returns the "faults" object with nothing set: no faults at
// all, with the spec's default ranges and shapes ready for when a rate is set.
func DefaultFaults() Faults {
	ms := time.Millisecond
	return Faults{
		RestartAfter:        Range{10 * ms, time.Second},
		PartitionFor:        Range{50 * ms, 2 * time.Second},
		PartitionTopologies: []Topology{TopologyHalf},
		ClogFor:             Range{100 * ms, 2 * time.Second},
		ClogModes:           []ClogMode{ClogStop, ClogSlow, ClogJam},
		ClogDelay:           Range{10 * ms, 200 * ms},
		SlowFor:             Range{500 * ms, 5 * time.Second},
		SlowFactor:          10,
		FSModel:             FSExt4Ordered,
		SectorBytes:         1,
		PauseFor:            Range{100 * ms, 3 * time.Second},
		ClockJumpMax:        10 * time.Second,
	}
}

var faultFields = []field[Faults]{
	enumField("preset", "preset", Presets, func(f *Faults) *Preset { return &f.Preset }),
	rateField("crash_per_sec", func(f *Faults) *float64 { return &f.CrashPerSec }),
	rangeField("restart_after", func(f *Faults) *Range { return &f.RestartAfter }),
	rateField("partition_per_sec", func(f *Faults) *float64 { return &f.PartitionPerSec }),
	rangeField("partition_for", func(f *Faults) *Range { return &f.PartitionFor }),
	enumListField("partition_topologies", "topology", Topologies, func(f *Faults) *[]Topology { return &f.PartitionTopologies }),
	rateField("clog_per_sec", func(f *Faults) *float64 { return &f.ClogPerSec }),
	rangeField("clog_for", func(f *Faults) *Range { return &f.ClogFor }),
	enumListField("clog_modes", "clog mode", ClogModes, func(f *Faults) *[]ClogMode { return &f.ClogModes }),
	rangeField("clog_delay", func(f *Faults) *Range { return &f.ClogDelay }),
	rateField("swizzle_per_sec", func(f *Faults) *float64 { return &f.SwizzlePerSec }),
	rateField("reset_per_sec", func(f *Faults) *float64 { return &f.ResetPerSec }),
	probField("udp_loss", func(f *Faults) *float64 { return &f.UDPLoss }),
	probField("udp_dup", func(f *Faults) *float64 { return &f.UDPDup }),
	rateField("slow_per_sec", func(f *Faults) *float64 { return &f.SlowPerSec }),
	rangeField("slow_for", func(f *Faults) *Range { return &f.SlowFor }),
	numField("slow_factor", 1, math.MaxFloat64, "a factor of 1 or more", func(f *Faults) *float64 { return &f.SlowFactor }),
	boolField("torn_writes", func(f *Faults) *bool { return &f.TornWrites }),
	boolField("reorder_writes", func(f *Faults) *bool { return &f.ReorderWrites }),
	enumField("fs_model", "file system model", FSModels, func(f *Faults) *FSModel { return &f.FSModel }),
	{"sector_bytes", func(d *decoder, f *Faults, v *value, path string) (bool, error) {
		const what = "1 (tear at any byte) or a power of two from 512 to 4096"
		n, err := d.integer(v, path, 1, 4096, what)
		if err == nil && n != 1 && (n < 512 || n&(n-1) != 0) {
			err = d.errAt(v, path, "want %s, got %s", what, v.str)
		}
		if err != nil {
			return false, err
		}
		f.SectorBytes = n
		return n != 1, nil
	}},
	probField("crash_on_io", func(f *Faults) *float64 { return &f.CrashOnIO }),
	probField("fsync_eio", func(f *Faults) *float64 { return &f.FsyncEIO }),
	{"disk_bytes", func(d *decoder, f *Faults, v *value, path string) (bool, error) {
		n, err := d.integer(v, path, 0, math.MaxInt64, "a size in bytes of 0 (unlimited) or more")
		f.DiskBytes = n
		return n != 0, err
	}},
	probField("write_eio", func(f *Faults) *float64 { return &f.WriteEIO }),
	probField("write_enospc", func(f *Faults) *float64 { return &f.WriteENOSPC }),
	probField("read_eio", func(f *Faults) *float64 { return &f.ReadEIO }),
	probField("read_corrupt", func(f *Faults) *float64 { return &f.ReadCorrupt }),
	probField("lost_write", func(f *Faults) *float64 { return &f.LostWrite }),
	probField("misdirected_write", func(f *Faults) *float64 { return &f.MisdirectedWrite }),
	boolField("corrupt_on_crash", func(f *Faults) *bool { return &f.CorruptOnCrash }),
	rateField("bitrot_per_sec", func(f *Faults) *float64 { return &f.BitrotPerSec }),
	rangeField("disk_latency", func(f *Faults) *Range { return &f.DiskLatency }),
	probField("mmap_early_writeback", func(f *Faults) *float64 { return &f.MmapEarlyWriteback }),
	boolField("strict_dirs", func(f *Faults) *bool { return &f.StrictDirs }),
	clockField("clock_skew", func(f *Faults) *time.Duration { return &f.ClockSkew }),
	rateField("pause_per_sec", func(f *Faults) *float64 { return &f.PausePerSec }),
	rangeField("pause_for", func(f *Faults) *Range { return &f.PauseFor }),
	rateField("clock_jump_per_sec", func(f *Faults) *float64 { return &f.ClockJumpPerSec }),
	clockField("clock_jump_max", func(f *Faults) *time.Duration { return &f.ClockJumpMax }),
	boolField("buggify", func(f *Faults) *bool { return &f.Buggify }),
	boolField("include_workload", func(f *Faults) *bool { return &f.IncludeWorkload }),
	boolField("swarm", func(f *Faults) *bool { return &f.Swarm }),
}

// MaxClockOffset bounds clock_skew and clock_jump_max: a century moves a
// node's wall clock further than any real clock goes wrong, and keeps the
// offsets drawn from them far from overflowing.
const MaxClockOffset = 100 * 365 * 24 * time.Hour

// clockField decodes clock_skew or clock_jump_max: a duration of at most
// MaxClockOffset.
func clockField(name string, get func(*Faults) *time.Duration) field[Faults] {
	f := durField(name, false, get)
	dec := f.dec
	f.dec = func(d *decoder, t *Faults, v *value, path string) (bool, error) {
		x, err := d.duration(v, path)
		if err != nil {
			return false, err
		}
		if x > MaxClockOffset {
			return false, d.errAt(v, path, `want at most 100 years ("876000h"), got %s`, describe(v))
		}
		return dec(d, t, v, path)
	}
	return f
}

// faults decodes the "faults" object, or a preset name as its shorthand.
func (d *decoder) faults(v *value, path string, f *Faults) error {
	if v.kind == kindString {
		p, err := enum(d, v, path, "preset", Presets)
		if err != nil {
			return err
		}
		f.Preset = p
		pp := join(path, "preset")
		at := pos{v.src, v.src.line(v.start)}
		d.w.line[pp] = at
		d.mark(pp, at)
		return nil
	}
	if v.kind != kindObject {
		return d.want(v, path, `an object of fault settings, or a preset name such as "resilient"`)
	}
	if err := decodeFields(d, v, path, f, faultFields); err != nil {
		return err
	}
	return nil
}
