package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTrivialWorld is the prototype's throughput figure: three nodes
// that each print and sleep three times. seeds/s per core = 1e9 / ns/op.
// Sub-benchmarks: programs started from their post-init snapshots (as
// seedfall runs them), and booted cold, running their init every time.
func BenchmarkTrivialWorld(b *testing.B) {
	p := prepare(b, `{"nodes": [{"name": "a", "pkg": "./tiny"}, {"name": "b", "pkg": "./tiny"}], "workload": {"name": "c", "pkg": "./tiny"}}`)
	for _, cold := range []bool{false, true} {
		b.Run(bootName(cold), func(b *testing.B) {
			var sim int64
			for i := 0; i < b.N; i++ {
				res, err := p.Run(context.Background(), RunOptions{Seed: uint64(i), ColdBoot: cold})
				if err != nil || !res.Passed {
					b.Fatalf("seed %d: %v %+v", i, err, res)
				}
				sim += res.SimNs
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
			b.ReportMetric(float64(sim)/float64(b.Elapsed().Nanoseconds()), "sim/wall")
		})
	}
}

func bootName(cold bool) string {
	if cold {
		return "cold"
	}
	return "snapshot"
}

// BenchmarkStart is what a start of a program costs, to main.main and back:
// a world whose one program exits as soon as it starts. µs/start is per
// start; the run around it (trace, verdict, digest) is included.
func BenchmarkStart(b *testing.B) {
	p := prepare(b, `{"nodes": [], "workload": {"name": "c", "pkg": "./hello"}}`)
	for _, cold := range []bool{false, true} {
		b.Run(bootName(cold), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				res, err := p.Run(context.Background(), RunOptions{Seed: uint64(i), ColdBoot: cold})
				if err != nil || !res.Passed {
					b.Fatalf("seed %d: %v %+v", i, err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/start")
		})
	}
}

// BenchmarkHostCalls is the cost of a host call as a guest sees it: a
// guest that does nothing but read the clock and write one byte to a file,
// 100,000 times each. ns/call is per host call of either kind.
func BenchmarkHostCalls(b *testing.B) {
	const rounds = 100000
	p := prepare(b, `{"nodes": [], "workload": {"name": "c", "pkg": "./hostcalls", "args": ["-n", "100000"]}}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := p.Run(context.Background(), RunOptions{Seed: uint64(i)})
		if err != nil || !res.Passed {
			b.Fatalf("seed %d: %v %+v", i, err, res)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*rounds), "ns/call")
}

// BenchmarkFork is what checkpoints and forks cost, on kvlog's failing
// seed 1 (examples/kvlog): the run as seedfall runs it ("run"); the same
// run recording its tapes with 1 and with 15 checkpoints, one every 1/16
// of it, as cause takes them ("record+1", "record+15"); and forks at 1/4,
// 1/2 and 15/16 of it, from the latest checkpoint ("fork-N/16") against
// the same fork run from t=0 ("scratch-N/16"); and the past alone, the
// fork at 15/16 stopped just after its moment, played back against run
// ("past-15/16-played", "past-15/16-run"). Interleave A/B rounds with
// -count: the pairs measure the same forks.
func BenchmarkFork(b *testing.B) {
	p := prepareFile(b, "../examples/kvlog/seedfall.json")
	first, err := p.Run(context.Background(), RunOptions{Seed: 1})
	if err != nil || first.Passed {
		b.Fatalf("kvlog seed 1: %v, passed %v: the benchmark needs its failure", err, first != nil && first.Passed)
	}
	sch, end := first.Schedule, time.Duration(first.SimNs)
	var moments []time.Duration
	for i := 1; i < 16; i++ {
		moments = append(moments, end*time.Duration(i)/16)
	}
	runs := func(b *testing.B, opt RunOptions) {
		for i := 0; i < b.N; i++ {
			if _, err := p.Run(context.Background(), opt); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/run")
	}
	b.Run("run", func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: sch}) })
	b.Run("record+1", func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: sch, Checkpoints: moments[:1]}) })
	b.Run("record+15", func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: sch, Checkpoints: moments}) })
	base, err := p.Run(context.Background(), RunOptions{Seed: 1, Schedule: sch, Checkpoints: moments})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{4, 8, 15} {
		c := base.Checkpoints[k-1]
		if c.Reason != "" {
			b.Fatalf("no fork at %d/16: %s", k, c.Reason)
		}
		fs := sch.ForkAt(c.At, 1)
		b.Run(fmt.Sprintf("fork-%d/16", k), func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: fs, From: c}) })
		b.Run(fmt.Sprintf("scratch-%d/16", k), func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: fs}) })
	}
	// The past alone: the fork at 15/16 stopped right after its moment,
	// played back against run.
	c := base.Checkpoints[14]
	fs, stop := sch.ForkAt(c.At, 1), c.At+1
	b.Run("past-15/16-played", func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: fs, From: c, StopAt: stop}) })
	b.Run("past-15/16-run", func(b *testing.B) { runs(b, RunOptions{Seed: 1, Schedule: fs, StopAt: stop}) })
}
