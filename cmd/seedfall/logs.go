package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/trace"
)

func logsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logs", stderr)
	cfg := worldFlags(fs)
	seed := fs.Uint64("seed", 0, "the seed whose run to print")
	node := fs.String("node", "", "print only this program's lines")
	faultsFile := fs.String("faults", "", "the schedule to apply (default: .seedfall/seed-N.faults.json next to the config, if it exists)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "seed") {
		return fmt.Errorf("say which seed's logs to print: -seed N")
	}
	ctx := context.Background()
	s, err := open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer s.close()
	if *node != "" && s.w.Program(*node) == nil {
		var names []string
		for _, p := range s.w.Programs() {
			names = append(names, p.Name)
		}
		return fmt.Errorf("-node %q: no such program in %s (it has %v)", *node, s.cfg, names)
	}
	sch, _, err := s.loadSchedule(*faultsFile, *seed)
	if err != nil {
		return err
	}
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch})
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, trace.Render(res.Lines, *node))
	verdict := "PASS"
	if !res.Passed {
		verdict = "FAIL " + res.Class + ":"
	}
	fmt.Fprintf(stdout, "%s %s\n", verdict, res.Reason)
	return nil
}
