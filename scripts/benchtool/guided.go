package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	sl "go.starlark.net/starlark"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
	"github.com/seedfall/seedfall/starlark"
)

// guidedSubjects are the worlds PrintGuidedFigures explores: the rare-bug
// examples (random seeds find their bug once in hundreds to thousands of
// seeds), and kvlog, where every seed fails, so that a strategy's cost
// where bugs are common shows too.
var guidedSubjects = []string{
	"examples/kvsnap/seedfall.checkpoint.json",
	"examples/kvsnap/seedfall.rewrite.json",
	"examples/blocklog/seedfall.json",
	"examples/semisync/seedfall.json",
	"examples/kvlog/seedfall.json",
}

// guidedStrategies are the stdlib strategies compared.
var guidedStrategies = []string{"random_seeds", "swarm", "branch_closest", "guided"}

// PrintCoverageCost measures what coverage costs kvlog's seeds: the CPU
// of the same seeds run one at a time with coverage on and off, in
// interleaved rounds, and the median of each round's ratio.
func PrintCoverageCost(rounds, seeds int) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{})
	check(err)
	defer e.Close(ctx)
	w, err := world.Load(filepath.Join(*root, "examples/kvlog/seedfall.json"))
	check(err)
	covered := *w
	covered.Coverage = true
	var ps [2]*engine.Prepared
	for i, cw := range []*world.World{w, &covered} {
		ps[i], err = e.Prepare(ctx, cw)
		check(err)
		ps[i].Run(ctx, engine.RunOptions{Seed: 1}) // warms the caches
	}
	var ratios, perSec []float64
	for range rounds {
		var cpu [2]float64
		for i, p := range ps {
			procs := runtime.GOMAXPROCS(1)
			cpu[i] = measure(func() {
				for s := range seeds {
					_, err := p.Run(ctx, engine.RunOptions{Seed: uint64(s + 1)})
					check(err)
				}
			}).cpu
			runtime.GOMAXPROCS(procs)
		}
		ratios = append(ratios, cpu[1]/cpu[0])
		perSec = append(perSec, float64(seeds)/(cpu[1]/1e9))
	}
	fmt.Printf("\ncoverage on kvlog: %d seeds, %d interleaved rounds: CPU with coverage over without %.3f (median; %.3f to %.3f), %.0f seeds per CPU-second with it\n",
		seeds, rounds, median(ratios), slices.Min(ratios), slices.Max(ratios), median(perSec))
}

// PrintGuidedFigures measures, for each subject and strategy, the CPU
// seconds and the runs an exploration takes to its first failure
// (explore -stop-at-first), over `explorations` exploration seeds (each
// draws its seeds from its own million), in one process on one core
// (-parallel 1), the strategies interleaved in each round so that the
// machine's other load falls on all alike. It prints the medians, and
// each strategy's CPU over random_seeds'. An exploration that finds
// nothing within the budget counts as the budget's CPU, marked ">".
func PrintGuidedFigures(explorations, budget int) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{})
	check(err)
	defer e.Close(ctx)
	env := starlark.NewEnv(starlark.Options{Engine: e, Parallel: 1})
	th := env.NewThread("bench")
	fmt.Printf("\nCPU and runs to the first failure, -parallel 1, median of %d explorations (budget %d runs each)\n", explorations, budget)
	fmt.Printf("%-34s %-15s %9s %8s %8s %9s\n", "world", "strategy", "CPU s", "runs", "found", "CPU/random")
	for _, sub := range guidedSubjects {
		if *guidedWorlds != "" && !slices.ContainsFunc(strings.Split(*guidedWorlds, ","), func(word string) bool { return strings.Contains(sub, word) }) {
			continue
		}
		w, err := world.Load(filepath.Join(*root, sub))
		check(err)
		wv, err := starlark.WorldValue(w)
		check(err)
		// Build and compile both worlds (guided's has coverage) first.
		for _, name := range []string{"random_seeds", "guided"} {
			fn, err := env.StdStrategy(th, sl.String(name))
			check(err)
			_, err = env.Explore(th, wv, fn, starlark.ExploreOptions{Seeds: engine.SeedRange(1, 1), Budget: starlark.Budget{Runs: 1}, Parallel: 1})
			check(err)
		}
		cpu := map[string][]float64{}
		runs := map[string][]float64{}
		found := map[string]int{}
		for k := range explorations {
			from := uint64(k+1) * 1_000_000
			for _, name := range guidedStrategies {
				fn, err := env.StdStrategy(th, sl.String(name))
				check(err)
				var x *starlark.Exploration
				procs := runtime.GOMAXPROCS(1)
				c := measure(func() {
					x, err = env.Explore(th, wv, fn, starlark.ExploreOptions{Seeds: engine.SeedRange(from, from+999_999),
						Budget: starlark.Budget{Runs: budget}, Parallel: 1, StopAtFirst: true})
				})
				runtime.GOMAXPROCS(procs)
				check(err)
				cpu[name] = append(cpu[name], c.cpu/1e9)
				runs[name] = append(runs[name], float64(x.Runs))
				if len(x.Failures) > 0 {
					found[name]++
				}
			}
		}
		base := median(cpu["random_seeds"])
		for _, name := range guidedStrategies {
			mark := ""
			if found[name] < explorations {
				mark = ">"
			}
			fmt.Printf("%-34s %-15s %8s%.1f %8.0f %5d/%-2d %9.2f\n", strings.TrimPrefix(sub, "examples/"), name, mark, median(cpu[name]),
				median(runs[name]), found[name], explorations, median(cpu[name])/base)
		}
	}
	fmt.Println("found: explorations that found a failure within the budget; > marks a median that includes one that did not.")
}
