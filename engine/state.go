package engine

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

// State is the world at one moment of a run (seedfall debug): what each
// program is doing, and the faults in force.
type State struct {
	At         time.Duration  `json:"at_ns"`
	Programs   []ProgramState `json:"programs"`
	Partition  [][]string     `json:"partition,omitempty"` // the sides of the partition in force, or nil
	Clogs      []string       `json:"clogs,omitempty"`     // the clogs in force, one line each
	QuietUntil time.Duration  `json:"quiet_until_ns,omitempty"`
	Recovering bool           `json:"recovering,omitempty"`  // the recovery phase of liveness or the finally check has begun
	FaultsHeld bool           `json:"faults_held,omitempty"` // faults_after_setup: no node has called sim.SetupComplete yet
}

// ProgramState is one program at that moment.
type ProgramState struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Inc  int    `json:"inc"`  // its incarnation: 1 for the first process, +1 per restart
	What string `json:"what"` // "running", "paused until 1.5s", "down, restarts at 2s", "exited 0", "exited 1", "trapped: ...", "not started"
	// Slow is the slowdown factor in force (1: none); WallOffset the wall
	// clock's offset from true time (clock skew and jumps).
	Slow       float64           `json:"slow"`
	WallOffset time.Duration     `json:"wall_offset_ns"`
	Conns      []netsim.ConnInfo `json:"conns,omitempty"`
	// Pending lists the files and directories with operations not yet
	// durable: what a crash now could lose.
	Pending []PendingFile `json:"pending,omitempty"`
}

// PendingFile is a file or directory with operations a crash would lose.
type PendingFile struct {
	Path        string `json:"path"` // from the disk's root; "/" is the root itself
	Dir         bool   `json:"dir,omitempty"`
	Size        int64  `json:"size"`         // as the program sees it
	DurableSize int64  `json:"durable_size"` // as a crash would leave it (files)
	Ops         int    `json:"ops"`          // operations since its last fsync
}

// Write prints the world at one moment, and the faults of sch so far
// (seedfall debug, the workbench's debug):
//
//	world at 1.2s
//	  server#2  running, slow x3.5, wall clock +120ms
//	    listening 10.0.0.1:7000
//	    10.0.0.1:7000 <- client 10.0.0.2:49152  established, 12 bytes unread
//	    pending: /  1 entry change not yet durable (fsync the directory)
//	    pending: data/kv.log  size 8192, durable 4096, 2 ops since fsync
//	faults in force:
//	  partition [server] [client]
func (st *State) Write(w io.Writer, sch *faults.Schedule) {
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

// plural writes "1 op", "3 ops".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
