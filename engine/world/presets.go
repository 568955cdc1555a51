package world

import (
	"strings"
)

// presetLevels holds what each preset adds to the one before, as the
// members of a "faults" object. The values are the final ones, whatever
// this build supports: a preset that changed as fault kinds were built
// would change what every seed of a world tests. A field this build does
// not support is refused like one the user wrote, with "set by preset".
// docs/config.md#fault-presets lists them; keep the two in step.
var presetLevels = map[Preset]string{
	PresetNone: ``,
	// Crashes at any point and the disk's crash states: the durability
	// path, per the spec's "Choosing rates".
	PresetDurability: `
		"crash_per_sec": 0.2,
		"torn_writes": true,
		"reorder_writes": true,
		"strict_dirs": true,
		"crash_on_io": 0.005,
		"fsync_eio": 0.01`,
	// Clean network failures a replicated system must survive. Shapes
	// that need more nodes (majority, majorities_ring) are left out so the
	// preset fits a world of two.
	PresetResilient: `
		"partition_per_sec": 0.1,
		"partition_topologies": ["half", "one"],
		"clog_per_sec": 0.1,
		"reset_per_sec": 0.05,
		"udp_loss": 0.01,
		"udp_dup": 0.001`,
	// Gray failures that break leases, timeouts and leader election.
	PresetHighAvailability: `
		"swizzle_per_sec": 0.02,
		"slow_per_sec": 0.05,
		"pause_per_sec": 0.1,
		"clock_skew": "100ms",
		"clock_jump_per_sec": 0.02`,
	// Everything else: disk errors and silent corruption, and buggify.
	PresetEverything: `
		"write_eio": 0.001,
		"write_enospc": 0.001,
		"read_eio": 0.001,
		"read_corrupt": 0.001,
		"lost_write": 0.0005,
		"misdirected_write": 0.0005,
		"corrupt_on_crash": true,
		"bitrot_per_sec": 0.001,
		"buggify": true`,
}

// presetJSON returns the faults object a preset stands for: its own level
// and every level before it.
func presetJSON(p Preset) string {
	var parts []string
	for _, q := range Presets {
		if s := strings.TrimSpace(presetLevels[q]); s != "" {
			parts = append(parts, s)
		}
		if q == p {
			break
		}
	}
	return "{" + strings.Join(parts, ",\n") + "}"
}
