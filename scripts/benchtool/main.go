// Command benchtool measures seedfall's speed figures in one run and prints
// them as a table: seeds per second per core for a trivial 3-node world,
// the simulated-to-wall ratio of the bundled example, and the cost of a first
// run (cold build and compile) against a cached run. scripts/bench runs it.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

type result struct {
	Seed   uint64 `json:"seed"`
	Passed bool   `json:"passed"`
	SimNs  int64  `json:"sim_ns"`
	WallNs int64  `json:"wall_ns"`
	Steps  uint64 `json:"steps"`
}

var (
	bin          = flag.String("seedfall", "", "the seedfall binary")
	root         = flag.String("root", ".", "the repository root")
	seeds        = flag.Int("seeds", 500, "seeds per throughput row")
	cold         = flag.Bool("cold", true, "measure a first run from empty caches (takes a while: Go builds the standard library for wasip1)")
	only         = flag.String("only", "", `print one section only: "cpu" (CPU time against free CPU), "merge" (seedfall merge of 10,000 seeds), "snapshot" (starts from the post-init snapshot against cold boots), "cause" (seedfall cause in runs of the seed), "guided" (CPU and runs to the first failure of each exploration strategy)`)
	cpuRounds    = flag.Int("cpurounds", 3, "interleaved rounds of the CPU time against free CPU comparison")
	netSeeds     = flag.Int("netseeds", 2, "seeds of the 5-node chatting world (about 20s of real time each)")
	mergeRuns    = flag.Int("mergerounds", 3, "runs of each seedfall merge of 10,000 seeds")
	causeRuns    = flag.Int("causerounds", 3, "interleaved rounds of seedfall cause, each way of running its forks")
	causePar     = flag.Int("causeparallel", 2, "forks seedfall cause runs at once (its default is 2)")
	explorations = flag.Int("explorations", 5, "exploration seeds of each strategy on each world (-only guided)")
	guidedBudget = flag.Int("guidedbudget", 5000, "the run budget of each exploration (-only guided)")
	guidedWorlds = flag.String("guidedworlds", "", "with -only guided, only the worlds whose path contains one of these comma-separated words")
)

func main() {
	flag.Parse()
	cache, err := os.MkdirTemp("", "seedfall-bench-cache")
	check(err)
	defer os.RemoveAll(cache)

	switch *only {
	case "cpu":
		PrintCPUFigures(cache, *cpuRounds, *seeds/5)
		return
	case "merge":
		PrintMergeFigures(cache, *mergeRuns)
		return
	case "snapshot":
		PrintSnapshotFigures(cache, *cpuRounds, *seeds/5)
		return
	case "cause":
		PrintCauseFigures(*causeRuns, *causePar)
		return
	case "guided":
		PrintCoverageCost(*cpuRounds, *seeds/5)
		PrintGuidedFigures(*explorations, *guidedBudget)
		return
	}
	trivial := filepath.Join(*root, "scripts/benchtool/trivial/seedfall.json")
	example := filepath.Join(*root, "examples/kvlog/seedfall.fixed.json")
	fmt.Printf("seedfall benchmark, %s, %d cores, %s\n\n", runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	fmt.Printf("%-40s %9s %9s %10s %10s\n", "", "seeds/s", "per core", "sim/wall", "steps/s")

	var firstCold, firstWarmGo time.Duration
	if *cold {
		gocache, err := os.MkdirTemp("", "seedfall-bench-gocache")
		check(err)
		defer os.RemoveAll(gocache)
		firstCold = timed(cache, "GOCACHE="+gocache, example, "-seed", "1")
		os.RemoveAll(cache)
		os.MkdirAll(cache, 0o755)
	}
	firstWarmGo = timed(cache, "", example, "-seed", "1")
	cached := timed(cache, "", example, "-seed", "1")
	timed(cache, "", trivial, "-seed", "1")

	row := func(name, world string, parallel int) {
		n := *seeds
		if strings.Contains(world, "liveness") || strings.Contains(world, "register") || strings.Contains(world, "real/") {
			n = max(*seeds/10, 20) // a heavier world: ten times fewer seeds
		}
		start := time.Now()
		rs := sweepN(cache, world, parallel, n)
		wall := time.Since(start)
		var sim, busy int64
		var steps uint64
		for _, r := range rs {
			sim += r.SimNs
			busy += r.WallNs
			steps += r.Steps
		}
		fmt.Printf("%-40s %9.0f %9.0f %9.0fx %10.0f\n", name, float64(len(rs))/wall.Seconds(), float64(len(rs))/(float64(busy)/1e9),
			float64(sim)/float64(busy), float64(steps)/(float64(busy)/1e9))
	}
	row("trivial 3-node world, 1 core", trivial, 1)
	row(fmt.Sprintf("trivial 3-node world, %d cores", runtime.NumCPU()), trivial, runtime.NumCPU())
	row("examples/kvlog (fixed), 1 core", example, 1)
	row(fmt.Sprintf("examples/kvlog (fixed), %d cores", runtime.NumCPU()), example, runtime.NumCPU())
	// Every gray failure at once: pauses, slowdowns, clocks, buggify,
	// swarm, faults on the workloads, an upgrade and a recovery phase.
	chaos := filepath.Join(*root, "examples/liveness/seedfall.chaos.fixed.json")
	row("examples/liveness chaos (fixed), 1 core", chaos, 1)
	row(fmt.Sprintf("examples/liveness chaos (fixed), %d cores", runtime.NumCPU()), chaos, runtime.NumCPU())
	// 200 recorded operations a run, checked for linearizability.
	row("examples/register (fixed), 1 core", filepath.Join(*root, "examples/register/seedfall.fixed.json"), 1)
	// Public storage engines through compat_overlay: bbolt maps its file
	// and writes with pwrite, pebble syncs a WAL. Built before they are
	// timed, since their first build takes a minute.
	for _, ex := range []string{"bboltkv", "pebblekv"} {
		world := filepath.Join(*root, "examples/real", ex, "seedfall.fixed.json")
		timed(cache, "", world, "-seed", "1")
		row(fmt.Sprintf("examples/real/%s (fixed), 1 core", ex), world, 1)
	}

	fmt.Printf("\n%-40s %9s\n", "one seed of examples/kvlog, end to end", "wall")
	if *cold {
		fmt.Printf("%-40s %9s\n", "first run, empty Go and seedfall caches", firstCold.Round(time.Millisecond))
	}
	fmt.Printf("%-40s %9s\n", "first run, empty seedfall cache", firstWarmGo.Round(time.Millisecond))
	fmt.Printf("%-40s %9s\n", "cached run", cached.Round(time.Millisecond))
	fmt.Println("\nseeds/s: a whole `seedfall run -seeds 1-N` sweep, start-up included.")
	fmt.Println("per core, sim/wall, steps/s: over the real time the runs themselves took.")

	PrintWorkflow(cache)
	PrintMergeFigures(cache, *mergeRuns)
	PrintCPUFigures(cache, *cpuRounds, *seeds/5)
	PrintSnapshotFigures(cache, *cpuRounds, *seeds/5)
	PrintCauseFigures(*causeRuns, *causePar)

	nf, err := BenchNet(context.Background(), *root, *netSeeds)
	check(err)
	nf.Print()
	fmt.Println()
	PrintDiskCrashFigures(os.Stdout, 20)
	PrintMmapFigures(os.Stdout, 20)
}

// timed runs one seedfall command and returns its wall time.
func timed(cache, env, world string, args ...string) time.Duration {
	start := time.Now()
	cmd := exec.Command(*bin, append([]string{"run", "-c", world}, args...)...)
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+cache)
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
		os.Exit(1)
	}
	return time.Since(start)
}

func sweep(cache, world string, parallel int) []result {
	return sweepN(cache, world, parallel, *seeds)
}

func sweepN(cache, world string, parallel, n int) []result {
	return sweepArgs(cache, world, parallel, n)
}

// sweepArgs runs seeds 1-n of world with extra flags (-set ...) and returns
// their -json results.
func sweepArgs(cache, world string, parallel, n int, extra ...string) []result {
	return sweepEnv(cache, "", world, parallel, n, extra...)
}

// sweepEnv is sweepArgs with env ("K=V", or "") added to the environment.
func sweepEnv(cache, env, world string, parallel, n int, extra ...string) []result {
	args := append([]string{"run", "-c", world, "-seeds", fmt.Sprintf("1-%d", n), "-parallel", fmt.Sprint(parallel), "-json"}, extra...)
	cmd := exec.Command(*bin, args...)
	cmd.Env = append(os.Environ(), "SEEDFALL_CACHE="+cache)
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", strings.Join(cmd.Args, " "), err)
		os.Exit(1)
	}
	var rs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var r result
		check(json.Unmarshal(sc.Bytes(), &r))
		rs = append(rs, r)
	}
	return rs
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
