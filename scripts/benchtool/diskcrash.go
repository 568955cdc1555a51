package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
)

// DiskCrashRow is what one crash with 10,000 pending pages costs under one
// crash model.
type DiskCrashRow struct {
	Model    string
	PerCrash time.Duration
}

// DiskCrashFigures measures a crash with 10,000 pending pages (5,000 pages
// appended to one file and 5,000 overwritten in another, strict_dirs on)
// under each crash model, averaged over rounds crashes. Only the crash is
// timed, not the writes before it. `go test -bench Crash ./engine/disk`
// measures the same.
func DiskCrashFigures(rounds int) []DiskCrashRow {
	models := []struct {
		name string
		cfg  disk.CrashConfig
	}{
		{"plain crash", disk.CrashConfig{StrictDirs: true}},
		{"torn_writes", disk.CrashConfig{Torn: true, StrictDirs: true}},
		{"reorder_writes ext4_ordered", disk.CrashConfig{Reorder: true, Torn: true, FSModel: disk.Ext4Ordered, StrictDirs: true}},
		{"reorder_writes page_independent", disk.CrashConfig{Reorder: true, Torn: true, FSModel: disk.PageIndependent, StrictDirs: true}},
		{"reorder_writes dir_reorder", disk.CrashConfig{Reorder: true, Torn: true, FSModel: disk.DirReorder, StrictDirs: true}},
		{"torn_writes + corrupt_on_crash", disk.CrashConfig{Torn: true, Corrupt: true, StrictDirs: true}},
	}
	const pageSize = 4096
	page := make([]byte, pageSize)
	var out []DiskCrashRow
	for _, m := range models {
		r := rand.New(rand.NewPCG(1, 2))
		var total time.Duration
		for range rounds {
			d := disk.New(disk.Options{StrictDirs: true})
			check(d.WriteFile("over", make([]byte, 5000*pageSize)))
			check(d.WriteFile("log", nil))
			over, e1 := d.Open(d.Root(), "over", false, disk.Write)
			log, e2 := d.Open(d.Root(), "log", false, disk.Write)
			if e1 != 0 || e2 != 0 {
				panic(fmt.Sprintf("open: %v %v", e1, e2))
			}
			for i := range 5000 {
				over.WriteAt(page, int64(i)*pageSize)
				log.WriteAt(page, int64(i)*pageSize)
			}
			model, err := disk.NewCrashModel(m.cfg, func(n int) int { return r.IntN(n) })
			check(err)
			start := time.Now()
			d.CrashWith(model)
			total += time.Since(start)
		}
		out = append(out, DiskCrashRow{Model: m.name, PerCrash: total / time.Duration(rounds)})
	}
	return out
}

// PrintDiskCrashFigures writes DiskCrashFigures as rows of the benchmark table.
func PrintDiskCrashFigures(w io.Writer, rounds int) {
	fmt.Fprintf(w, "\n%-40s %9s\n", "a crash with 10,000 pending pages", "wall")
	for _, r := range DiskCrashFigures(rounds) {
		fmt.Fprintf(w, "%-40s %9s\n", r.Model, r.PerCrash.Round(10*time.Microsecond))
	}
}
