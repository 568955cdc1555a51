package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
)

// MmapRow is what keeping shared mappings coherent costs per MiB changed.
type MmapRow struct {
	Case   string
	PerMiB time.Duration
}

// MmapFigures measures compat_overlay's page cache: 1 MiB written with
// 4 KiB pwrites at random pages of a 256 MiB file, with no mapping, a
// read-only mapping of 1 MiB and one of 256 MiB (the cost must not grow
// with the mapping's size: each write is copied into the mappings that
// cover it); then 1 MiB stored into a writable mapping and taken into the
// page cache by msync, for a 1 MiB and a 256 MiB mapping (that scan is
// proportional to the mapping). Averaged over rounds.
func MmapFigures(rounds int) []MmapRow {
	const (
		page    = 4096
		mib     = 1 << 20
		fileLen = 256 * mib
	)
	buf := make([]byte, page)
	// open makes a file of size bytes on a new disk and maps its first
	// mapLen bytes (none for 0).
	open := func(size, mapLen int64, writable bool) (*disk.Handle, []byte, *disk.Mapping) {
		d := disk.New(disk.Options{})
		check(d.WriteFile("data", nil))
		h, e := d.Open(d.Root(), "data", false, disk.Read|disk.Write)
		if e == 0 {
			e = h.Truncate(size)
		}
		if e != 0 {
			panic(e)
		}
		if mapLen == 0 {
			return h, nil, nil
		}
		mem := make([]byte, mapLen)
		m, e := h.Map(0, mapLen, writable, func() []byte { return mem })
		if e != 0 {
			panic(e)
		}
		return h, mem, m
	}
	write := func(mapLen int64) time.Duration {
		r := rand.New(rand.NewPCG(3, 4))
		h, _, _ := open(fileLen, mapLen, false)
		start := time.Now()
		for range mib / page {
			h.WriteAt(buf, int64(r.IntN(min(int(max(mapLen, mib)), fileLen)/page))*page)
		}
		return time.Since(start)
	}
	store := func(mapLen int64) time.Duration {
		r := rand.New(rand.NewPCG(5, 6))
		_, mem, m := open(mapLen, mapLen, true)
		for _, pg := range r.Perm(int(mapLen / page))[:mib/page] {
			mem[pg*page] ^= 1 // 256 distinct dirty pages: 1 MiB to take in
		}
		start := time.Now()
		m.Flush(0, mapLen)
		return time.Since(start)
	}
	cases := []struct {
		name string
		run  func() time.Duration
	}{
		{"pwrite, no mapping", func() time.Duration { return write(0) }},
		{"pwrite, 1 MiB read-only mapping", func() time.Duration { return write(mib) }},
		{"pwrite, 256 MiB read-only mapping", func() time.Duration { return write(fileLen) }},
		{"stores + msync, 1 MiB mapping", func() time.Duration { return store(mib) }},
		{"stores + msync, 256 MiB mapping", func() time.Duration { return store(fileLen) }},
	}
	// Rounds interleave the cases, and a first round warms up, so that a
	// busy machine weighs on every case alike.
	totals := make([]time.Duration, len(cases))
	for round := range rounds + 1 {
		for i, c := range cases {
			if d := c.run(); round > 0 {
				totals[i] += d
			}
		}
	}
	out := make([]MmapRow, len(cases))
	for i, c := range cases {
		out[i] = MmapRow{c.name, totals[i] / time.Duration(rounds)}
	}
	return out
}

// PrintMmapFigures writes MmapFigures as rows of the benchmark table.
func PrintMmapFigures(w io.Writer, rounds int) {
	fmt.Fprintf(w, "\n%-40s %9s\n", "1 MiB changed in a 256 MiB file", "wall")
	for _, r := range MmapFigures(rounds) {
		fmt.Fprintf(w, "%-40s %9s\n", r.Case, r.PerMiB.Round(time.Microsecond))
	}
}
