package main

import (
	"fmt"
	"path/filepath"
	"sort"
)

// PrintCPUFigures compares worlds whose programs' work takes virtual time
// (the default, cpu.ns_per_call 5) with the same worlds on free CPU, in
// rounds that alternate the two so that the machine's other load falls on
// both alike. A third pair adds a disk_latency, so that fsyncs park their
// goroutine and the node's others run meanwhile. It prints each world's
// median seeds/s per core over the rounds, and the ratio.
func PrintCPUFigures(cache string, rounds, n int) {
	kvlog := filepath.Join(*root, "examples/kvlog/seedfall.fixed.json")
	chaos := filepath.Join(*root, "examples/liveness/seedfall.chaos.fixed.json")
	free := []string{"-set", "cpu.ns_per_call=0"}
	latency := []string{"-set", `faults.disk_latency=["100us","2ms"]`}
	rows := []struct {
		name  string
		world string
		n     int
		extra []string
	}{
		{"kvlog (fixed)", kvlog, n, nil},
		{"liveness chaos (fixed)", chaos, max(n/10, 20), nil},
		{"kvlog (fixed), disk_latency 0.1-2ms", kvlog, n, latency},
	}
	fmt.Printf("\nCPU time against free CPU, 1 core, median of %d interleaved rounds\n", rounds)
	fmt.Printf("%-40s %12s %12s %7s\n", "", "CPU time", "free CPU", "ratio")
	for _, r := range rows {
		var on, off []float64
		for i := 0; i < rounds; i++ {
			on = append(on, perCore(sweepArgs(cache, r.world, 1, r.n, r.extra...)))
			off = append(off, perCore(sweepArgs(cache, r.world, 1, r.n, append(append([]string{}, r.extra...), free...)...)))
		}
		a, b := median(on), median(off)
		fmt.Printf("%-40s %8.0f s/s %8.0f s/s %6.2fx\n", r.name, a, b, a/b)
	}
	fmt.Println("s/s: seeds per second of the runs' own real time (per core).")
}

func perCore(rs []result) float64 {
	var busy int64
	for _, r := range rs {
		busy += r.WallNs
	}
	return float64(len(rs)) / (float64(busy) / 1e9)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
