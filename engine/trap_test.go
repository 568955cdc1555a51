package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// A trapping seed's digest does not depend on what ran before it in the
// process: no instance counter reaches the trap message (issue 12).
func TestTrapDigestIndependentOfHistory(t *testing.T) {
	trappy := prepare(t, `{"nodes": [], "workload": {"name": "c", "pkg": "./trappy"}}`)
	first := twice(t, trappy, 1, nil)
	if first.Passed || first.Class != ClassTrap || !strings.Contains(first.Reason, "out of bounds memory access") {
		t.Fatalf("got %v %q %q\n%s", first.Passed, first.Class, first.Reason, output(first, ""))
	}
	if strings.Contains(first.Reason, "module[") || strings.Contains(output(first, ""), "module[") {
		t.Fatalf("a module name reached the trace: %q\n%s", first.Reason, output(first, ""))
	}
	// Other programs make instances in between.
	other := prepare(t, `{"nodes": [{"name": "a", "pkg": "./sleeper"}], "workload": {"name": "c", "pkg": "./sleeper"}}`)
	for seed := uint64(1); seed <= 3; seed++ {
		run(t, other, seed, nil)
	}
	if again := run(t, trappy, 1, nil); again.Digest != first.Digest {
		t.Fatalf("after other runs the digest changed:\n%s\n---\n%s", output(first, ""), output(again, ""))
	}
	// A sweep at parallel 2, trapping and other seeds mixed.
	var wg sync.WaitGroup
	digests := make([]string, 6)
	jobs := make(chan int)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				p := trappy
				if i%2 == 1 {
					p = other
				}
				res, err := p.Run(context.Background(), RunOptions{Seed: 1})
				if err != nil {
					t.Error(err)
					continue
				}
				digests[i] = res.Digest
			}
		}()
	}
	for i := range digests {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for i := 0; i < len(digests); i += 2 {
		if digests[i] != first.Digest {
			t.Fatalf("in a sweep at parallel 2, run %d of the trapping seed gave digest %s, alone %s", i, digests[i], first.Digest)
		}
	}
}
