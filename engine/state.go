package engine

import (
	"fmt"
	"time"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/netsim"
	"github.com/seedfall/seedfall/engine/world"
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
	What string `json:"what"` // "running", "paused until 1.5s", "down, restarts at 2s", "exited 0", "not started"
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

// state captures the world now.
func (r *runner) state() *State {
	st := &State{At: time.Duration(r.s.Now()), QuietUntil: time.Duration(max(r.quietUntil, 0)),
		Recovering: r.recovering, FaultsHeld: r.held}
	if st.QuietUntil <= st.At {
		st.QuietUntil = 0
	}
	if r.net != nil {
		groups, clogs := r.net.Faults()
		for _, g := range groups {
			var names []string
			for _, h := range g {
				names = append(names, r.nodes[h].prog.Name)
			}
			st.Partition = append(st.Partition, names)
		}
		st.Clogs = clogs
	}
	for _, n := range r.nodes {
		ps := ProgramState{Name: n.prog.Name, Role: n.prog.Role.String(), Inc: n.inc, Slow: 1}
		switch {
		case n.inc == 0:
			ps.What = "not started"
			if n.prog.Role == world.RoleFinally {
				ps.What = "not started (it starts once every workload has exited 0)"
			}
		case n.up && n.proc.HeldUntil() > 0:
			ps.What = fmt.Sprintf("paused until %v", time.Duration(n.proc.HeldUntil()))
		case n.up:
			ps.What = "running"
		case n.done:
			ps.What = "exited 0"
		case n.restartAt > 0:
			ps.What = fmt.Sprintf("down, restarts at %v", time.Duration(n.restartAt))
		default:
			ps.What = "down"
		}
		if r.nodef != nil {
			ps.Slow = r.nodef.slow[n.host]
			ps.WallOffset = time.Duration(r.nodef.wall[n.host])
		}
		if r.net != nil && n.up {
			ps.Conns = r.net.Conns(n.host)
		}
		// The root's entries first (the create of data/, say): a crash
		// loses them as surely as any directory's.
		if rst, pending := n.disk.RootPending(); pending > 0 {
			ps.Pending = append(ps.Pending, PendingFile{Path: "/", Dir: true, Size: rst.Size, DurableSize: rst.Size, Ops: pending})
		}
		n.disk.Walk(func(path string, s disk.Stat, durable int64, pending int) {
			if pending > 0 {
				ps.Pending = append(ps.Pending, PendingFile{Path: path, Dir: s.Type == disk.TypeDirectory,
					Size: s.Size, DurableSize: durable, Ops: pending})
			}
		})
		st.Programs = append(st.Programs, ps)
	}
	return st
}
