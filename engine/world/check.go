package world

import (
	"fmt"
	"slices"
	"strings"
)

// check runs the rules that span fields, after every field has decoded.
func (w *World) check() error {
	if ps := w.Programs(); len(ps) > MaxPrograms {
		return w.Errorf(ps[MaxPrograms].Path, "more than %d programs (nodes, workloads and finally together); the limit is %d",
			MaxPrograms, MaxPrograms)
	}
	if err := w.checkNames(); err != nil {
		return err
	}
	if err := w.checkLinks(); err != nil {
		return err
	}
	return w.checkFaults()
}

// checkNames rejects a name used twice, reporting the later use in the file.
func (w *World) checkNames() error {
	ps := w.Programs()
	slices.SortStableFunc(ps, func(a, b *Program) int { return a.Line - b.Line })
	first := map[string]*Program{}
	for _, p := range ps {
		if prev, ok := first[p.Name]; ok {
			where := fmt.Sprintf("line %d", prev.Line)
			if at, here := w.line[prev.Path], w.line[p.Path+".name"]; at.src != nil && here.src != nil && at.src.file != here.src.file {
				where = fmt.Sprintf("%s:%d", at.src.file, prev.Line)
			}
			return w.Errorf(p.Path+".name", "%q is already the name of %s on %s; names must be unique across nodes, workloads and finally",
				p.Name, prev.Path, where)
		}
		first[p.Name] = p
	}
	return nil
}

func (w *World) checkLinks() error {
	var names []string
	for _, p := range w.Programs() {
		names = append(names, p.Name)
	}
	for i, l := range w.Links {
		for _, end := range []struct{ key, name string }{{"from", l.From}, {"to", l.To}} {
			if end.name == "" || slices.Contains(names, end.name) {
				continue
			}
			path := fmt.Sprintf("links[%d].%s", i, end.key)
			msg := fmt.Sprintf("no program is named %q", end.name)
			if s := Suggest(end.name, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += "; the programs are " + strings.Join(names, ", ")
			}
			return w.Errorf(path, "%s", msg)
		}
	}
	return nil
}

func (w *World) checkFaults() error {
	f := &w.Faults
	if w.Line("faults.fs_model") != 0 {
		if !f.ReorderWrites {
			return w.Errorf("faults.fs_model", `has no effect without "reorder_writes": true; set that too, or remove fs_model`)
		}
		if f.FSModel == FSDirReorder && !f.StrictDirs {
			return w.Errorf("faults.fs_model", `"dir_reorder" needs "strict_dirs": true, since it reorders directory operations that only strict_dirs makes pending`)
		}
	}
	n := len(w.Nodes) + len(w.Workloads)
	for _, t := range f.PartitionTopologies {
		need := map[Topology]int{TopologyMajority: 3, TopologyMajoritiesRing: 4}[t]
		if n < need {
			return w.Errorf("faults.partition_topologies", "%s needs at least %d nodes, workload included; this world has %d", t, need, n)
		}
	}
	return nil
}
