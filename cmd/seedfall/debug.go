package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/faults"
)

func init() {
	register(command{"debug", "-c seedfall.json -seed N -at T [-faults FILE] [-json]", debugCmd})
}

// debugCmd runs a seed to a virtual time and shows the world then: each
// program's state, incarnation, connections and writes a crash would lose,
// and the faults in force.
func debugCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("debug", stderr)
	cfg := worldFlags(fs)
	at := fs.Duration("at", 0, "the virtual time to stop at, such as 1.5s")
	asJSON := fs.Bool("json", false, "print the state as JSON")
	sa := seedFlags(fs, "debug")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if !flagSet(fs, "at") || *at <= 0 {
		return fmt.Errorf("say when to stop: -at T, a virtual time above 0 such as 1.5s (the failure's time is in `seedfall replay`)")
	}
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.close()
	res, err := s.p.Run(ctx, engine.RunOptions{Seed: *sa.seed, Schedule: sch, StopAt: *at, State: true})
	if err != nil {
		return err
	}
	st := res.State
	if *asJSON {
		// The state, and the verdict when the run ended before -at.
		out := struct {
			Seed   uint64         `json:"seed"`
			Ended  *jsonResult    `json:"ended,omitempty"`
			State  *engine.State  `json:"state"`
			Faults []faults.Fault `json:"faults"`
		}{Seed: *sa.seed, State: st, Faults: res.Schedule.Faults}
		if out.Faults == nil {
			out.Faults = []faults.Fault{}
		}
		if !strings.HasPrefix(res.Reason, "stopped at") {
			j := newJSONResult(res, from)
			out.Ended = &j
		}
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	printSource(stdout, *sa.seed, sch, from)
	if !strings.HasPrefix(res.Reason, "stopped at") {
		fmt.Fprintf(stdout, "the run ended before %v: ", *at)
		s.printVerdict(stdout, res, "")
	}
	writeState(stdout, st, res.Schedule)
	return nil
}

// writeState prints the world at one moment:
//
//	world at 1.2s
//	  server#2  running, slow x3.5, wall clock +120ms
//	    listening 10.0.0.1:7000
//	    10.0.0.1:7000 <- client 10.0.0.2:49152  established, 12 bytes unread
//	    pending: /  1 entry change not yet durable (fsync the directory)
//	    pending: data/kv.log  size 8192, durable 4096, 2 ops since fsync
//	faults in force:
//	  partition [server] [client]
func writeState(w io.Writer, st *engine.State, sch *faults.Schedule) {
	fmt.Fprintf(w, "\nworld at %v\n", st.At)
	for _, p := range st.Programs {
		what := p.What
		if p.Slow > 1 {
			what += fmt.Sprintf(", slow x%v", p.Slow)
		}
		if p.WallOffset != 0 {
			sign := "+"
			if p.WallOffset < 0 {
				sign = ""
			}
			what += fmt.Sprintf(", wall clock %s%v", sign, p.WallOffset)
		}
		name := p.Name
		if p.Inc > 0 {
			name = fmt.Sprintf("%s#%d", p.Name, p.Inc)
		}
		fmt.Fprintf(w, "  %-12s %-8s %s\n", name, p.Role, what)
		for _, c := range p.Conns {
			if c.Listening {
				fmt.Fprintf(w, "    listening %v\n", c.Local)
				continue
			}
			peer := c.Peer
			if peer == "" {
				peer = "?"
			}
			line := fmt.Sprintf("    %v <-> %s %v  %s", c.Local, peer, c.Remote, c.State)
			if c.Unread > 0 {
				line += fmt.Sprintf(", %d bytes unread", c.Unread)
			}
			fmt.Fprintln(w, line)
		}
		for _, f := range p.Pending {
			if f.Dir {
				fmt.Fprintf(w, "    pending: %s  %s not yet durable (fsync the directory)\n", dirName(f.Path), plural(f.Ops, "entry change"))
				continue
			}
			fmt.Fprintf(w, "    pending: %s  size %d, durable %d, %s since fsync\n", f.Path, f.Size, f.DurableSize, plural(f.Ops, "op"))
		}
	}
	var force []string
	if len(st.Partition) > 0 {
		var sides []string
		for _, g := range st.Partition {
			sides = append(sides, "["+strings.Join(g, " ")+"]")
		}
		force = append(force, "partition "+strings.Join(sides, " "))
	}
	for _, c := range st.Clogs {
		force = append(force, "clog "+c)
	}
	for _, p := range st.Programs {
		if strings.HasPrefix(p.What, "down") {
			force = append(force, fmt.Sprintf("crash %s (%s)", p.Name, p.What))
		}
		if strings.HasPrefix(p.What, "paused") {
			force = append(force, fmt.Sprintf("pause %s (%s)", p.Name, p.What))
		}
		if p.Slow > 1 {
			force = append(force, fmt.Sprintf("slow %s x%v", p.Name, p.Slow))
		}
	}
	switch {
	case st.Recovering:
		force = append(force, "faults have stopped (recovery phase or finally check)")
	case st.FaultsHeld:
		force = append(force, "faults held until a node calls sim.SetupComplete")
	case st.QuietUntil > 0:
		force = append(force, fmt.Sprintf("quiet period until %v", st.QuietUntil))
	}
	if len(force) == 0 {
		fmt.Fprintln(w, "faults in force: none")
	} else {
		fmt.Fprintln(w, "faults in force:")
		for _, f := range force {
			fmt.Fprintln(w, "  "+f)
		}
	}
	if sch != nil && len(sch.Faults) > 0 {
		fmt.Fprintln(w, "faults so far:")
		for _, f := range sch.Faults {
			fmt.Fprintln(w, "  "+faults.Describe(f))
		}
	}
}

// dirName shows a directory's path from the disk's root with a trailing
// slash: "data/", and "/" for the root itself.
func dirName(path string) string {
	if path == "/" {
		return path
	}
	return path + "/"
}
