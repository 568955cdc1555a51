package realsoft

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
)

// natsNoResolveError: the server's log must not say it cannot find the
// node's addresses, since net.Interfaces reports lo and eth0.
func natsNoResolveError(t *testing.T, res *engine.Result) {
	t.Helper()
	if out := output(res, "server"); strings.Contains(out, "can not be resolved properly") || !strings.Contains(out, "Server is ready") {
		t.Fatalf("seed %d: the server did not start cleanly:\n%s", res.Seed, out)
	}
}

// With JetStream's default sync_interval (2 minutes), a PubAck comes back
// before the message reaches the disk: a crash loses acknowledged messages
// of a stream that was durable before the run (the world seeds the node's
// disk with it), and the restarted server hands their sequences out again.
func TestJetStreamDefaultSyncLosesAckedMessages(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "jetstream/seedfall.json")
	check := func(res *engine.Result) {
		t.Helper()
		natsNoResolveError(t, res)
		client := output(res, "client")
		if res.Class != engine.ClassWorkload || !(strings.Contains(client, "the stream lost acknowledged messages") || strings.Contains(client, "lost acknowledged message")) {
			t.Fatalf("seed %d: %s: %s; want acknowledged messages lost:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
		}
	}
	res := findFailure(t, p, 5)
	check(res)
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)

	shrunk := shrunkFails(t, p, "jetstream/shrunk/default-sync.faults.json")
	check(shrunk)
	if n := len(shrunk.Schedule.Faults); n != 1 {
		t.Fatalf("the shrunk schedule has %d faults, want 1", n)
	}
}

// With sync_interval: always, every acknowledged message of a stream that
// exists (seeded on the node's disk, as in the buggy world) survives
// crashes, torn and reordered writeback and crashes during disk operations.
func TestJetStreamSyncAlwaysPasses(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "jetstream/seedfall.fixed.json")
	faulted, total := 0, 0
	for seed := uint64(1); seed <= passingSeeds(); seed++ {
		res := run(t, p, seed, nil)
		if !res.Passed {
			t.Fatalf("seed %d: %s: %s\n%s", seed, res.Class, res.Reason, output(res, ""))
		}
		natsNoResolveError(t, res)
		if !strings.Contains(output(res, "client"), "read back by sequence") {
			t.Fatalf("seed %d passed without the client's check:\n%s", seed, output(res, ""))
		}
		if len(res.Schedule.Faults) > 0 {
			faulted++
		}
		total += len(res.Schedule.Faults)
	}
	if faulted == 0 {
		t.Fatalf("no fault in %d seeds", passingSeeds())
	}
	t.Logf("%d seeds passed, %d with faults, %d faults in all", passingSeeds(), faulted, total)
}

// Under strict_dirs even sync_interval: always loses the stream: JetStream
// creates the stream's directories without fsyncing their parents, so a
// crash can take the whole stream away with its acknowledged messages.
func TestJetStreamStrictDirsLosesStream(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "jetstream/seedfall.strictdirs.json")
	res := findFailure(t, p, 6)
	if res.Class != engine.ClassWorkload || !strings.Contains(output(res, "client"), "is gone") {
		t.Fatalf("seed %d: %s: %s; want the stream gone:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
	}
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)
}

// A crash while JetStream creates a stream (sync_interval: always), after
// meta.inf is written and before meta.sum is, leaves a stream directory
// that every restart skips ("Missing stream checksum file"). The client's
// retried create reuses the directory without writing meta.sum, the server
// acknowledges it and its messages, and the next restart drops the stream.
func TestJetStreamCrashDuringCreateDropsStream(t *testing.T) {
	t.Parallel()
	p := prepareFile(t, "jetstream/seedfall.createcrash.json")
	check := func(res *engine.Result) {
		t.Helper()
		if res.Class != engine.ClassWorkload || !strings.Contains(output(res, "client"), "whose creation the server acknowledged, is gone") ||
			!strings.Contains(output(res, "server"), "Missing stream checksum file") {
			t.Fatalf("seed %d: %s: %s; want the stream dropped for its missing meta.sum:\n%s", res.Seed, res.Class, res.Reason, output(res, ""))
		}
	}
	res := findFailure(t, p, 10)
	check(res)
	t.Logf("seed %d: %s: %s", res.Seed, res.Class, res.Reason)
	replaysExactly(t, p, res)
	check(shrunkFails(t, p, "jetstream/shrunk/createcrash.faults.json"))
}
