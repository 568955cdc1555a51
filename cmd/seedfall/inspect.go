package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/session"
)

// inspectCmd runs a seed and shows each disk as the run left it: its
// files, how much of each is durable, the ranges faults damaged, and how
// full the disk is.
func inspectCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("inspect", stderr)
	cfg := worldFlags(fs)
	node := fs.String("node", "", "show only this program's disk")
	at := fs.Duration("at", 0, "stop the run at this virtual time and show the disks then (default: the end of the run)")
	sa := seedFlags(fs, "inspect").withMutant()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *at < 0 {
		return fmt.Errorf("-at %v is negative: give a virtual time such as 1.5s", *at)
	}
	ctx := context.Background()
	s, sch, from, err := sa.open(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	worldsAtOnce(1) // after Prepare, which compiles programs side by side
	defer s.Close()
	seed := sa.seed
	if *node != "" && s.World().Program(*node) == nil {
		var names []string
		for _, p := range s.World().Programs() {
			names = append(names, p.Name)
		}
		return fmt.Errorf("-node %q is not in %s (it has %s)", *node, s.Config(), strings.Join(names, ", "))
	}
	res, err := s.Prepared().Run(ctx, engine.RunOptions{Seed: *seed, Schedule: sch, StopAt: *at, KeepDisks: true, Mutant: sa.mut})
	if err != nil {
		return err
	}
	session.WriteSource(stdout, *seed, sch, from)
	session.WriteMutantLine(stdout, res)
	printStopVerdict(s, stdout, res, *at) // stopped.go
	for _, nd := range res.Disks {
		if *node == "" || nd.Node == *node {
			writeDisk(stdout, nd.Node, nd.Disk, time.Duration(res.SimNs))
		}
	}
	return nil
}

// writeDisk prints one disk:
//
//	disk of server at 2.5s: 2 files, 12288 bytes used of 1048576 (1.2% full)
//	  data/kv.log  size 12288  durable 8192  2 pending ops
//	    corrupted ranges: 4096-8191 (lost_write)
//	  /            1 entry change pending (fsync the directory)
//
// Directories are listed after the files, and only those whose entries
// are not all durable: a crash would undo their creates, renames and
// unlinks.
func writeDisk(w io.Writer, name string, d *disk.Disk, at time.Duration) {
	files := d.Files()
	type pendingDir struct {
		path string
		ops  int
	}
	var dirs []pendingDir
	if _, n := d.RootPending(); n > 0 {
		dirs = append(dirs, pendingDir{"/", n})
	}
	d.Walk(func(path string, st disk.Stat, _ int64, pending int) {
		if st.Type == disk.TypeDirectory && pending > 0 {
			dirs = append(dirs, pendingDir{path + "/", pending})
		}
	})
	used, capacity := d.Usage()
	fmt.Fprintf(w, "\ndisk of %s at %v: %s, %d bytes used", name, at, plural(len(files), "file"), used)
	if capacity > 0 {
		fmt.Fprintf(w, " of %d (%.1f%% full)", capacity, 100*float64(used)/float64(capacity))
	}
	fmt.Fprintln(w)
	width := 0
	for _, f := range files {
		width = max(width, len(f.Path))
	}
	for _, dir := range dirs {
		width = max(width, len(dir.path))
	}
	for _, f := range files {
		fmt.Fprintf(w, "  %-*s  size %d  durable %d", width, f.Path, f.Size, f.DurableSize)
		if f.Pending > 0 {
			fmt.Fprintf(w, "  %s pending", plural(f.Pending, "op"))
		}
		fmt.Fprintln(w)
		if len(f.Damage) > 0 {
			var rs []string
			for _, dm := range f.Damage {
				rs = append(rs, fmt.Sprintf("%d-%d (%s)", dm.Off, dm.Off+dm.Len-1, dm.Kind))
			}
			fmt.Fprintf(w, "    corrupted ranges: %s\n", strings.Join(rs, ", "))
		}
	}
	for _, dir := range dirs {
		fmt.Fprintf(w, "  %-*s  %s pending (fsync the directory)\n", width, dir.path, plural(dir.ops, "entry change"))
	}
}
