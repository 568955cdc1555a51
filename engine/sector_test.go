package engine

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
)

// With sector_bytes, a crash that tears a write keeps it up to a sector
// boundary: the log of 4096-byte pages that d appends survives with a
// size that is a multiple of the sector, under each model that tears,
// and every seed runs twice to the same digest. With sector_bytes 1 the
// same seeds leave sizes off any sector.
func TestSectorBytesTornWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults string
		op     uint64 // the crash_io: 3 is the third write, 4 the fsync
	}{
		{"torn_writes", `"torn_writes": true`, 3},
		{"reorder_writes torn", `"reorder_writes": true, "torn_writes": true`, 3},
		{"crash_on_io in the fsync", `"torn_writes": true`, 4},
	} {
		for _, sector := range []int{1, 512, 4096} {
			t.Run(tc.name+"/"+strconv.Itoa(sector), func(t *testing.T) {
				p := diskWorld(t, tc.faults+`, "sector_bytes": `+strconv.Itoa(sector), "-sync-last", "-pages", "3")
				off, offPage := 0, 0 // sizes that are not a multiple of 512, of 4096
				sizes := map[int]bool{}
				for seed := uint64(1); seed <= 16; seed++ {
					sch := &faults.Schedule{Seed: seed, Faults: []faults.Fault{{Kind: KindCrashIO, Node: "d", Op: tc.op, Until: 100 * time.Millisecond}}}
					r := twice(t, p, seed, sch)
					got := found(r)
					if got == "no log" {
						sizes[0] = true
						continue
					}
					n, err := strconv.Atoi(strings.Fields(got + " x")[0])
					if err != nil {
						t.Fatalf("seed %d: d found %q", seed, got)
					}
					sizes[n] = true
					if n%sector != 0 {
						t.Errorf("seed %d: the log survived with %d bytes, not a multiple of sector_bytes %d", seed, n, sector)
					}
					if n%512 != 0 {
						off++
					}
					if n%4096 != 0 {
						offPage++
					}
				}
				if len(sizes) < 2 {
					t.Errorf("every seed left the same log: %v", sizes)
				}
				if sector == 512 && offPage == 0 {
					t.Errorf("sector_bytes 512 tore no page within it: %v", sizes)
				}
				if sector == 1 && off == 0 {
					t.Errorf("byte granularity left every log on a 512-byte boundary: %v", sizes)
				}
			})
		}
	}
}
