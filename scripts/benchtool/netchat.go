package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/world"
)

// NetFigures are the network's speed figures: what one delivered message
// costs in real time, and how much faster than real time a busy 5-node
// world runs under partitions and clogs.
type NetFigures struct {
	Seeds     int
	Messages  int64         // answers the programs received, over every seed
	PerMsg    time.Duration // real time per answer received
	SimToWall float64       // virtual time over real time
}

// netChatWorld is 4 nodes and a workload, each serving HTTP, a stream and
// a UDP echo, and chatting with all the others without pause (the chatter
// test guest), under partitions and clogs.
const netChatWorld = `{
  "nodes": [%s],
  "workload": %s,
  "net_overlay": true,
  "duration": "10s",
  "latency": ["1ms", "5ms"],
  "faults": {
    "partition_per_sec": 0.5, "partition_for": ["100ms", "1s"],
    "partition_topologies": ["half", "one", "majority", "majorities_ring"],
    "clog_per_sec": 1, "clog_for": ["100ms", "1s"], "clog_delay": ["10ms", "100ms"]
  }
}`

// BenchNet runs seeds seeds of the 5-node chatting world in this process
// and measures them. Every program counts the answers it receives (HTTP
// responses, stream lines, UDP echoes) and reports the count each virtual
// second; a delivered message is one such answer. root is the repository.
func BenchNet(ctx context.Context, root string, seeds int) (NetFigures, error) {
	names := []string{"n1", "n2", "n3", "n4", "client"}
	pkg, err := filepath.Abs(filepath.Join(root, "engine/testdata/guests/chatter"))
	if err != nil {
		return NetFigures{}, err
	}
	prog := func(name string) string {
		var peers []string
		for _, p := range names {
			if p != name {
				peers = append(peers, p)
			}
		}
		return fmt.Sprintf(`{"name": %q, "pkg": %q, "args": ["-serve", "-peers", %q, "-report", "1s"]}`, name, pkg, strings.Join(peers, ","))
	}
	var nodes []string
	for _, n := range names[:4] {
		nodes = append(nodes, prog(n))
	}
	dir, err := os.MkdirTemp("", "seedfall-netbench")
	if err != nil {
		return NetFigures{}, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "seedfall.json")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(netChatWorld, strings.Join(nodes, ",\n    "), prog("client"))), 0o644); err != nil {
		return NetFigures{}, err
	}
	w, err := world.Load(file)
	if err != nil {
		return NetFigures{}, err
	}
	e, err := engine.New(ctx, engine.Options{})
	if err != nil {
		return NetFigures{}, err
	}
	defer e.Close(ctx)
	p, err := e.Prepare(ctx, w)
	if err != nil {
		return NetFigures{}, err
	}
	f := NetFigures{Seeds: seeds}
	var sim, wall int64
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res, err := p.Run(ctx, engine.RunOptions{Seed: seed})
		if err != nil {
			return f, err
		}
		if !res.Passed {
			return f, fmt.Errorf("network benchmark world failed seed %d: %s", seed, res.Reason)
		}
		sim += res.SimNs
		wall += res.WallNs
		last := map[string]int64{}
		for _, l := range res.Lines {
			if n, ok := strings.CutPrefix(l.Text, "answers "); ok {
				last[l.Node], _ = strconv.ParseInt(n, 10, 64)
			}
		}
		for _, n := range names {
			f.Messages += last[n]
		}
	}
	if f.Messages > 0 {
		f.PerMsg = time.Duration(wall / f.Messages)
	}
	if wall > 0 {
		f.SimToWall = float64(sim) / float64(wall)
	}
	return f, nil
}

// Print writes the figures as rows of benchtool's table.
func (f NetFigures) Print() {
	fmt.Printf("\n%-40s %9s %9s\n", "5 nodes chatting, partitions and clogs", "sim/wall", "per msg")
	fmt.Printf("%-40s %8.1fx %9s\n", fmt.Sprintf("%d seeds of 10s, %d answers", f.Seeds, f.Messages), f.SimToWall, f.PerMsg.Round(100*time.Nanosecond))
}
