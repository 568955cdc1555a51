package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cause"
	"github.com/seedfall/seedfall/engine/world"
)

// causeSubjects are the failing seeds PrintCauseFigures explains: three of
// kvlog, whose failure becomes inevitable at a crash early, late and
// about a third of the way into the run; bank's quick handlers' race, which
// needs no fault at all; and hashicorp/raft's raftkv, whose failure comes at a
// tenth of the workload, so that a fork that passes costs about nine
// runs of the failing seed.
var causeSubjects = []struct {
	world string
	seed  uint64
}{
	{"examples/kvlog/seedfall.json", 1},
	{"examples/kvlog/seedfall.json", 2},
	{"examples/kvlog/seedfall.json", 3},
	{"examples/bank/seedfall.handlers.json", 42},
	{"examples/real/raftkv/seedfall.json", 2},
}

// cost is what one measured call took.
type cost struct{ wall, cpu float64 }

// measure times f's wall time and this process's CPU time meanwhile.
func measure(f func()) cost {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, start := cpu(), time.Now()
	f()
	return cost{float64(time.Since(start)), float64(cpu() - c0)}
}

// causeModes are the ways PrintCauseFigures runs each search's forks:
// from t=0 (-noforks), as the command runs them (the moment's first
// fork's checkpoint where the past is long enough), and from a
// checkpointed run of the seed (-checkpoints).
var causeModes = []struct {
	name string
	opt  cause.Options
}{
	{"forks from t=0", cause.Options{NoForks: true}},
	{"forks as cause runs them", cause.Options{}},
	{"forks from checkpoints", cause.Options{Checkpoints: true}},
}

// PrintCauseFigures measures seedfall cause in this process, in runs of
// the seed it explains: its wall and CPU time over one run's, with its
// forks run each way of causeModes, at parallel forks at once (the
// command's default is 2). Each round times one run (on one core, as run
// -parallel 1 runs it; the median of three), then the searches, so that
// the machine's other load falls on all alike; the table shows the
// medians over rounds of each round's ratios, each search's runs, and the
// forks that started from a checkpoint and the memory those held.
func PrintCauseFigures(rounds, parallel int) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Options{})
	check(err)
	defer e.Close(ctx)
	fmt.Printf("\ncause in runs of the seed, -parallel %d, median of %d interleaved rounds\n", parallel, rounds)
	fmt.Printf("%-40s %8s %5s %7s %7s %7s %7s %15s\n", "", "one run", "runs", "wall", "CPU", "wall", "CPU", "forked")
	fmt.Printf("%-40s %8s %5s %7s %7s %7s %7s %15s\n", "", "", "", "", "", "vs t=0", "vs t=0", "")
	n := len(causeModes)
	for _, sub := range causeSubjects {
		w, err := world.Load(filepath.Join(*root, sub.world))
		check(err)
		p, err := e.Prepare(ctx, w)
		check(err)
		p.Run(ctx, engine.RunOptions{Seed: sub.seed}) // warms the caches
		found := make([]*cause.Result, n)
		wall, cpu, relWall, relCPU := make([][]float64, n), make([][]float64, n), make([][]float64, n), make([][]float64, n)
		var oneWall []float64
		for range rounds {
			var ws, cs []float64
			procs := runtime.GOMAXPROCS(1)
			for range 3 {
				c := measure(func() {
					r, err := p.Run(ctx, engine.RunOptions{Seed: sub.seed})
					check(err)
					if r.Passed {
						check(fmt.Errorf("%s seed %d passes: it has no failure to explain", sub.world, sub.seed))
					}
				})
				ws, cs = append(ws, c.wall), append(cs, c.cpu)
			}
			runtime.GOMAXPROCS(procs)
			one := cost{median(ws), median(cs)}
			oneWall = append(oneWall, one.wall)
			took := make([]cost, n)
			for i, m := range causeModes {
				opt := m.opt
				opt.Parallel = parallel
				took[i] = measure(func() {
					found[i], err = cause.Find(ctx, p, sub.seed, nil, opt)
					check(err)
				})
				wall[i] = append(wall[i], took[i].wall/one.wall)
				cpu[i] = append(cpu[i], took[i].cpu/one.cpu)
				relWall[i] = append(relWall[i], took[i].wall/took[0].wall)
				relCPU[i] = append(relCPU[i], took[i].cpu/took[0].cpu)
				if a, b := found[0], found[i]; a.After != b.After || a.Inevitable != b.Inevitable || a.Runs != b.Runs || a.Steps != b.Steps {
					check(fmt.Errorf("%s seed %d: %s, cause finds (%v, %v] in %d runs, %s (%v, %v] in %d", sub.world, sub.seed,
						causeModes[0].name, a.After, a.Inevitable, a.Runs, m.name, b.After, b.Inevitable, b.Runs))
				}
			}
		}
		for i, m := range causeModes {
			r := found[i]
			vs := fmt.Sprintf("%7s %7s %15s", "", "", "")
			if i > 0 {
				forked := fmt.Sprintf("%d", r.Forked)
				if m.opt.Checkpoints {
					forked = fmt.Sprintf("%d, %.0f MiB", r.Checkpoints, float64(r.CheckpointBytes)/(1<<20))
				}
				vs = fmt.Sprintf("%7.2f %7.2f %15s", median(relWall[i]), median(relCPU[i]), forked)
			}
			fmt.Printf("%-40s %8s %5d %6.1fx %6.1fx %s\n",
				fmt.Sprintf("%s seed %d, %s", filepath.Base(filepath.Dir(sub.world)), sub.seed, m.name),
				time.Duration(median(oneWall)).Round(100*time.Microsecond), r.Runs, median(wall[i]), median(cpu[i]), vs)
		}
	}
	fmt.Println("one run: the failing run alone, on one core. wall, CPU: the search's, failing run included,")
	fmt.Println("over that run's. vs t=0: over the search whose forks run from t=0, the same round.")
	fmt.Println("forked: forks that started from their moment's first fork's checkpoint; from checkpoints,")
	fmt.Println("the checkpoints and the memory their copies of the guests held.")
	fmt.Println("Every search runs the same forks and finds the same interval (checked).")
}
