package engine

import (
	"context"
	"testing"
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
