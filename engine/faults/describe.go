package faults

import (
	"fmt"
	"strings"
	"time"
)

// Describe writes a fault on one line for a person, starting with when it
// happened: "427.268ms  crash server during disk op #56, restart at
// 791.388ms". Listings, shrink and the report share it.
func Describe(f Fault) string {
	var what string
	switch f.Kind {
	case Crash:
		what = fmt.Sprintf("crash %s, restart at %v", f.Node, f.Until)
	case "crash_io":
		what = fmt.Sprintf("crash %s during disk op #%d, restart at %v", f.Node, f.Op, f.Until)
	case "fsync_eio":
		what = fmt.Sprintf("fsync fails with EIO on %s at disk op #%d%s", f.Node, f.Op, onPath(f, false))
	case "write_eio":
		what = fmt.Sprintf("write fails with EIO on %s at disk op #%d%s", f.Node, f.Op, onPath(f, false))
	case "write_enospc":
		what = fmt.Sprintf("write fails with ENOSPC on %s at disk op #%d%s", f.Node, f.Op, onPath(f, false))
	case "read_eio":
		what = fmt.Sprintf("read fails with EIO on %s at disk read #%d%s", f.Node, f.Op, onPath(f, false))
	case "read_corrupt":
		what = fmt.Sprintf("read returns a flipped bit on %s at disk read #%d%s", f.Node, f.Op, onPath(f, true))
	case "lost_write":
		what = fmt.Sprintf("write lost on %s at disk op #%d%s", f.Node, f.Op, onPath(f, true))
	case "misdirected_write":
		what = fmt.Sprintf("write misdirected on %s at disk op #%d%s", f.Node, f.Op, onPath(f, true))
		if f.Target != 0 {
			what += fmt.Sprintf(", landed at offset %d", f.Target)
		}
	case "mmap_early_writeback":
		what = fmt.Sprintf("mapped page written back early on %s at crash #%d%s", f.Node, f.Op, onPath(f, true))
	case "bitrot":
		what = fmt.Sprintf("bit rot on %s%s", f.Node, onPath(f, true))
	case "pause":
		what = fmt.Sprintf("pause %s until %v", f.Node, f.Until)
	case "slow":
		what = fmt.Sprintf("slow %s %vx until %v", f.Node, f.Factor, f.Until)
	case "partition":
		switch {
		case len(f.Side) > 0:
			what = fmt.Sprintf("partition %s from the rest until %v", strings.Join(f.Side, " "), f.Until)
		default:
			gs := make([]string, len(f.Groups))
			for i, g := range f.Groups {
				gs[i] = "{" + strings.Join(g, " ") + "}"
			}
			what = fmt.Sprintf("partition into %s until %v", strings.Join(gs, " "), f.Until)
		}
	case "clog":
		link := fmt.Sprintf("%s -> %s", f.From, f.To)
		if f.Node != "" {
			link = map[string]string{"in": "into ", "out": "out of ", "both": "in and out of "}[f.Dir] + f.Node
		}
		mode := f.Mode
		if f.Delay != 0 {
			mode += fmt.Sprintf(", +%v", f.Delay)
		}
		what = fmt.Sprintf("clog %s (%s) until %v", link, mode, f.Until)
	case "net_reset":
		what = fmt.Sprintf("reset %s's connections", f.Node)
	case "udp_drop":
		what = fmt.Sprintf("drop udp datagram #%d from %s%s", f.Op, f.Node, toNode(f))
	case "udp_dup":
		what = fmt.Sprintf("duplicate udp datagram #%d from %s%s", f.Op, f.Node, toNode(f))
	case "clock_skew":
		what = fmt.Sprintf("%s's clock is off by %s", f.Node, signed(f.Delay))
	case "clock_jump":
		what = fmt.Sprintf("%s's clock jumps %s", f.Node, signed(f.Delay))
	case "buggify":
		what = fmt.Sprintf("buggify %s on %s, hit #%d", f.Site, f.Node, f.Op)
	case "preempt":
		what = fmt.Sprintf("preempt %s at counted call #%d", f.Node, f.Op)
	default:
		return f.String()
	}
	return fmt.Sprintf("%v  %s", f.At, what)
}

// onPath writes " of data/kv.log" and, when asked and known, the offset.
func onPath(f Fault, offset bool) string {
	if f.Path == "" {
		return ""
	}
	s := " of " + f.Path
	if offset && f.Offset != 0 {
		s += fmt.Sprintf(" at offset %d", f.Offset)
	}
	return s
}

func toNode(f Fault) string {
	if f.To == "" {
		return ""
	}
	return " to " + f.To
}

func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}
