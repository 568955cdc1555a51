package world

import "strings"

// Fields lists every field path of the format, in the order of the spec's
// tables, with "[]" for list elements: the keys Unsupported works with.
func Fields() []string {
	var out []string
	for _, f := range worldFields {
		switch f.name {
		case "nodes", "workloads":
			for _, pf := range programFields {
				out = append(out, f.name+"[]."+pf.name)
			}
		case "workload", "finally":
			for _, pf := range programFields {
				out = append(out, f.name+"."+pf.name)
			}
		case "liveness":
			out = append(out, "liveness.within")
		case "links":
			for _, lf := range linkFields {
				out = append(out, "links[]."+lf.name)
			}
		case "preempt":
			for _, pf := range preemptFields {
				out = append(out, "preempt."+pf.name)
			}
		case "cpu":
			for _, cf := range cpuFields {
				out = append(out, "cpu."+cf.name)
			}
		case "faults":
			for _, ff := range faultFields {
				out = append(out, "faults."+ff.name)
			}
		default:
			out = append(out, f.name)
		}
	}
	return out
}

// Unsupported reports the first field, in file order, that the file sets to
// a non-default value but whose path (as Fields spells it, "nodes[].disk")
// is not in implemented, as `seedfall.json:12: nodes[1].disk: not supported
// yet`. A parent path stands for all its fields: "links" covers
// "links[].from", "faults" every fault. It returns nil when every field the
// file uses is implemented.
func (w *World) Unsupported(implemented map[string]bool) error {
	for _, s := range w.set {
		if !covered(s.generic, implemented) {
			return errIn(s.at.src, s.at.line, s.path, "not supported yet")
		}
	}
	return nil
}

// covered reports whether p or one of its parents is implemented.
func covered(p string, implemented map[string]bool) bool {
	for {
		if implemented[p] {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
