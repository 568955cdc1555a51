package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/seedfall/seedfall/engine/session"
)

func logsCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logs", stderr)
	cfg := worldFlags(fs)
	node := fs.String("node", "", "print only this program's lines")
	tail := fs.Int("tail", 0, "print only the last N lines (0: all)")
	asJSON := fs.Bool("json", false, "print the lines and the verdict as JSON")
	sa := seedFlags(fs, "print the logs of").withMutant()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.Close()
	l, err := s.Logs(ctx, session.LogsOptions{Seed: *sa.seed, Schedule: sch, From: from, Mutant: sa.mut, Node: *node, Tail: *tail})
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := json.Marshal(l.Report())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	return l.Write(stdout)
}
