//go:build sim

package kvlog

// TestKvlog is examples/kvlog/seedfall.json as a gosim test:
//
//	server   -ack before-sync -sync-every 200ms, on its own machine (10.0.0.1)
//	client   kvclient's defaults, on the test's own machine (11.0.0.1)
//	faults   crash_per_sec 1, restart_after 10ms-300ms
//	latency  1ms-5ms
//
// The crasher draws from gosim's seeded math/rand as seedfall's planner draws from
// its seeded streams (engine/faults.PlanCrashes): the next crash comes an
// exponential wait (rate 1/s) after the previous restart, and the server stays
// down for a uniform 10-300ms. gosim's latency is one fixed delay per pair of
// hosts, so each seed draws one delay in 1-5ms where seedfall draws one per
// message. A seed fails when the client's check fails: an acknowledged write was
// lost (or none was acknowledged, or a read-back gave up), as kvclient exits 1.
// The world's "supervise" (restart a server that exits) is not ported: without
// disk faults the server never exits on its own. scripts/gosim/port_test.go
// checks these constants and the server's flags against seedfall.json.
//
// Run with: go run github.com/jellevandenhooff/gosim/cmd/gosim test -seeds=1-100 .

import (
	"log"
	"math/rand"
	"net/netip"
	"testing"
	"time"

	"github.com/jellevandenhooff/gosim"
)

const (
	serverAddr   = "10.0.0.1"
	clientAddr   = "11.0.0.1" // the address gosim gives the test's own machine
	crashPerSec  = 1.0
	restartMin   = 10 * time.Millisecond
	restartMax   = 300 * time.Millisecond
	latencyMin   = 1 * time.Millisecond
	latencyMax   = 5 * time.Millisecond
	worldHorizon = 20 * time.Second // seedfall.json's duration
)

func between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(rand.Int63n(int64(hi-lo)+1))
}

// crasher crashes and restarts m until done is closed or the horizon passes.
func crasher(m gosim.Machine, done <-chan struct{}) {
	var t time.Duration
	for {
		wait := time.Duration(rand.ExpFloat64() / crashPerSec * float64(time.Second))
		if wait >= worldHorizon-t {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(wait):
		}
		t += wait
		m.Crash()
		down := between(restartMin, restartMax)
		log.Printf("crasher: crashed the server, restart in %v", down)
		time.Sleep(down)
		t += down
		m.Restart()
	}
}

func TestKvlog(t *testing.T) {
	if err := gosim.SetDelay(serverAddr, clientAddr, between(latencyMin, latencyMax)); err != nil {
		t.Fatal(err)
	}

	sp := DefaultServerParams()
	sp.Ack = "before-sync"
	sp.SyncEvery = 200 * time.Millisecond
	server := gosim.NewMachine(gosim.MachineConfig{
		Label:    "server",
		Addr:     netip.MustParseAddr(serverAddr),
		MainFunc: func() { Server(sp) },
	})

	done := make(chan struct{})
	go crasher(server, done)

	summary, err := Client(DefaultClientParams())
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(summary)
}
