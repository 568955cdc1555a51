package engine

import (
	"context"
	"testing"
)

// BenchmarkTrivialWorld is the prototype's throughput figure: three nodes
// that each print and sleep three times. seeds/s per core = 1e9 / ns/op.
func BenchmarkTrivialWorld(b *testing.B) {
	p := prepare(b, `{"nodes": [{"name": "a", "pkg": "./tiny"}, {"name": "b", "pkg": "./tiny"}], "workload": {"name": "c", "pkg": "./tiny"}}`)
	b.ResetTimer()
	var sim int64
	for i := 0; i < b.N; i++ {
		res, err := p.Run(context.Background(), RunOptions{Seed: uint64(i)})
		if err != nil || !res.Passed {
			b.Fatalf("seed %d: %v %+v", i, err, res)
		}
		sim += res.SimNs
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "seeds/s")
	b.ReportMetric(float64(sim)/float64(b.Elapsed().Nanoseconds()), "sim/wall")
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
