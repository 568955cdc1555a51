package engine

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/internal/rng"
	"github.com/seedfall/seedfall/engine/world"
)

// Swarm testing ("swarm": true): each seed turns every fault type the world
// configures on or off, and rescales the rate of those it keeps between 0
// and 2x, so faults that hide each other (crashes that mask a torn write,
// partitions that hide a slow leader) get seeds of their own. Each knob
// draws from a stream keyed by the seed and its name, so adding a knob moves
// no other. Shapes (how long, how far, which topologies), disk size and
// latency are settings, not fault types, and stay as configured.

// swarmKnob is one fault type: a rate or probability to rescale, or a
// switch to flip.
type swarmKnob struct {
	name string
	rate func(f *world.Faults) *float64       // a rate per second or a probability
	dur  func(f *world.Faults) *time.Duration // clock_skew: a bound, rescaled like a rate
	on   func(f *world.Faults) *bool          // a switch
	prob bool                                 // the rate is a probability: at most 1
}

var swarmKnobs = []swarmKnob{
	{name: "crash_per_sec", rate: func(f *world.Faults) *float64 { return &f.CrashPerSec }},
	{name: "partition_per_sec", rate: func(f *world.Faults) *float64 { return &f.PartitionPerSec }},
	{name: "clog_per_sec", rate: func(f *world.Faults) *float64 { return &f.ClogPerSec }},
	{name: "swizzle_per_sec", rate: func(f *world.Faults) *float64 { return &f.SwizzlePerSec }},
	{name: "reset_per_sec", rate: func(f *world.Faults) *float64 { return &f.ResetPerSec }},
	{name: "udp_loss", prob: true, rate: func(f *world.Faults) *float64 { return &f.UDPLoss }},
	{name: "udp_dup", prob: true, rate: func(f *world.Faults) *float64 { return &f.UDPDup }},
	{name: "slow_per_sec", rate: func(f *world.Faults) *float64 { return &f.SlowPerSec }},
	{name: "torn_writes", on: func(f *world.Faults) *bool { return &f.TornWrites }},
	{name: "reorder_writes", on: func(f *world.Faults) *bool { return &f.ReorderWrites }},
	{name: "crash_on_io", prob: true, rate: func(f *world.Faults) *float64 { return &f.CrashOnIO }},
	{name: "fsync_eio", prob: true, rate: func(f *world.Faults) *float64 { return &f.FsyncEIO }},
	{name: "write_eio", prob: true, rate: func(f *world.Faults) *float64 { return &f.WriteEIO }},
	{name: "write_enospc", prob: true, rate: func(f *world.Faults) *float64 { return &f.WriteENOSPC }},
	{name: "read_eio", prob: true, rate: func(f *world.Faults) *float64 { return &f.ReadEIO }},
	{name: "read_corrupt", prob: true, rate: func(f *world.Faults) *float64 { return &f.ReadCorrupt }},
	{name: "lost_write", prob: true, rate: func(f *world.Faults) *float64 { return &f.LostWrite }},
	{name: "misdirected_write", prob: true, rate: func(f *world.Faults) *float64 { return &f.MisdirectedWrite }},
	{name: "corrupt_on_crash", on: func(f *world.Faults) *bool { return &f.CorruptOnCrash }},
	{name: "bitrot_per_sec", rate: func(f *world.Faults) *float64 { return &f.BitrotPerSec }},
	{name: "mmap_early_writeback", prob: true, rate: func(f *world.Faults) *float64 { return &f.MmapEarlyWriteback }},
	{name: "strict_dirs", on: func(f *world.Faults) *bool { return &f.StrictDirs }},
	{name: "clock_skew", dur: func(f *world.Faults) *time.Duration { return &f.ClockSkew }},
	{name: "pause_per_sec", rate: func(f *world.Faults) *float64 { return &f.PausePerSec }},
	{name: "clock_jump_per_sec", rate: func(f *world.Faults) *float64 { return &f.ClockJumpPerSec }},
	{name: "buggify", on: func(f *world.Faults) *bool { return &f.Buggify }},
}

// swarmSettings are the fault fields swarm leaves alone.
var swarmSettings = []string{
	"preset", "restart_after", "partition_for", "partition_topologies", "clog_for", "clog_modes",
	"clog_delay", "slow_for", "slow_factor", "fs_model", "sector_bytes", "disk_bytes", "disk_latency", "pause_for",
	"clock_jump_max", "include_workload", "swarm",
}

// swarm returns a copy of w with this seed's fault types and rates, and
// the trace line that says what it chose.
func swarm(w *world.World, seed uint64) (*world.World, string) {
	c := *w
	var parts []string
	for _, k := range swarmKnobs {
		s := rng.ForName(seed, "swarm", k.name)
		on := s.Float64() < 0.5
		scale := math.Round(s.Float64()*200) / 100 // two decimals: reads well, replays exactly
		switch {
		case k.on != nil:
			p := k.on(&c.Faults)
			if !*p {
				continue
			}
			*p = on
			parts = append(parts, fmt.Sprintf("%s %s", k.name, onOff(on)))
		case k.dur != nil:
			p := k.dur(&c.Faults)
			if *p == 0 {
				continue
			}
			if !on {
				*p = 0
				parts = append(parts, k.name+" off")
				continue
			}
			*p = time.Duration(float64(*p) * scale).Truncate(time.Millisecond)
			parts = append(parts, fmt.Sprintf("%s %v (x%v)", k.name, *p, scale))
		default:
			p := k.rate(&c.Faults)
			if *p == 0 {
				continue
			}
			if !on {
				*p = 0
				parts = append(parts, k.name+" off")
				continue
			}
			*p *= scale
			if k.prob {
				*p = min(*p, 1)
			}
			parts = append(parts, fmt.Sprintf("%s %.4g (x%v)", k.name, *p, scale))
		}
	}
	if len(parts) == 0 {
		return &c, "swarm: no fault type is configured"
	}
	return &c, "swarm: " + strings.Join(parts, ", ")
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
