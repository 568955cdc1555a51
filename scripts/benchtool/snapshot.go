package main

import (
	"fmt"
	"path/filepath"
)

// PrintSnapshotFigures compares starts from the post-init snapshot (how
// seedfall runs programs) with cold boots (SEEDFALL_COLD_BOOT=1), in rounds
// that alternate the two so that the machine's other load falls on both
// alike: the cost of one start (a world whose one program prints a line and
// exits), and seeds/s per core of the trivial world, kvlog (fixed) and the
// liveness chaos world. Medians over the rounds. Each sweep is one process,
// and its first seed also loads the compiled modules and, from snapshots,
// boots each program's snapshot: the rates leave that seed out (it is a
// cost per process, not per seed), and the first seed's own time is printed
// beside them.
func PrintSnapshotFigures(cache string, rounds, n int) {
	rows := []struct {
		name  string
		world string
		n     int
		start bool // print µs per start instead of seeds/s
	}{
		{"one start (print a line, exit)", filepath.Join(*root, "scripts/benchtool/start/seedfall.json"), 4 * n, true},
		{"trivial 3-node world", filepath.Join(*root, "scripts/benchtool/trivial/seedfall.json"), n, false},
		{"kvlog (fixed; crashes and restarts)", filepath.Join(*root, "examples/kvlog/seedfall.fixed.json"), n, false},
		{"liveness chaos (fixed)", filepath.Join(*root, "examples/liveness/seedfall.chaos.fixed.json"), max(n/10, 20), false},
	}
	fmt.Printf("\nStarts from the post-init snapshot against cold boots, 1 core, median of %d interleaved rounds\n", rounds)
	fmt.Printf("%-40s %14s %14s %7s  %s\n", "", "snapshot", "cold boot", "ratio", "first: snapshot, cold")
	for _, r := range rows {
		timed(cache, "", r.world, "-seed", "1") // built and compiled before it is timed
		var snap, cold, snapFirst, coldFirst []float64
		for i := 0; i < rounds; i++ {
			rs := sweepEnv(cache, "", r.world, 1, r.n+1)
			snap, snapFirst = append(snap, perCore(rs[1:])), append(snapFirst, float64(rs[0].WallNs)/1e6)
			rs = sweepEnv(cache, "SEEDFALL_COLD_BOOT=1", r.world, 1, r.n+1)
			cold, coldFirst = append(cold, perCore(rs[1:])), append(coldFirst, float64(rs[0].WallNs)/1e6)
		}
		a, b := median(snap), median(cold)
		first := fmt.Sprintf("%6.0f ms %6.0f ms", median(snapFirst), median(coldFirst))
		if r.start {
			fmt.Printf("%-40s %9.0f µs/1 %9.0f µs/1 %6.2fx  %s\n", r.name, 1e6/a, 1e6/b, a/b, first)
			continue
		}
		fmt.Printf("%-40s %10.0f s/s %10.0f s/s %6.2fx  %s\n", r.name, a, b, a/b, first)
	}
	fmt.Println("s/s: seeds per second of the runs' own real time (per core), each sweep's first seed left out;")
	fmt.Println("µs/1: real time per run of one start; first: the first seed of a sweep, which loads the compiled")
	fmt.Println("code and, from snapshots, boots each program's snapshot (once per process).")
}
