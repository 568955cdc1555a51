package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seedfall/seedfall/engine/faults"
	"github.com/seedfall/seedfall/engine/internal/netsim"
	"github.com/seedfall/seedfall/engine/internal/rng"
)

const udpWorld = `{"net_overlay": true, "latency": ["1ms", "3ms"], %FAULTS%
	"nodes": [{"name": "server", "pkg": "./udp", "args": ["-role", "server"]}],
	"workload": {"name": "client", "pkg": "./udp", "args": ["-n", "40"]}}`

func udpWorldWith(faultsJSON string) string {
	return strings.Replace(udpWorld, "%FAULTS%", faultsJSON, 1)
}

func TestUDPBetweenNodes(t *testing.T) {
	p := prepare(t, udpWorldWith(""))
	r := twice(t, p, 1, nil)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	for _, want := range []string{
		"server#1 | listening on [::]:9000",
		"client#1 | packet conn on [::]:32768",
		`client#1 | readfrom 10.0.0.1:9000: "ack hello"`,
		"client#1 | deadline after 30ms",
		"client#1 | dialed 10.0.0.1:9000 from 10.0.0.2",
		"client#1 | sent 40 got 40 dups 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if len(r.Schedule.Faults) != 0 {
		t.Errorf("no udp_loss or udp_dup, yet faults were recorded: %v", r.Schedule.Faults)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// udp_loss and udp_dup are drawn per datagram, recorded with the sender,
// where the datagram went and its number, and a replay applies exactly them.
func TestUDPLossAndDuplication(t *testing.T) {
	p := prepare(t, udpWorldWith(`"faults": {"udp_loss": 0.15, "udp_dup": 0.15},`))
	r := twice(t, p, 3, nil)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	drops, dups := 0, 0
	for _, f := range r.Schedule.Faults {
		switch f.Kind {
		case KindUDPDrop:
			drops++
		case KindUDPDup:
			dups++
		default:
			t.Errorf("unexpected fault %v", f)
		}
		if f.Op < 1 || f.Node == "" || f.To == "" || f.Node == f.To {
			t.Errorf("fault %v lacks its sender, destination or datagram number", f)
		}
	}
	if drops == 0 || dups == 0 {
		t.Fatalf("%d drops and %d dups in %d faults: the rates did nothing\n%s", drops, dups, len(r.Schedule.Faults), out)
	}
	if strings.Contains(out, "sent 40 got 40 dups 0") {
		t.Fatalf("the client saw neither loss nor duplication:\n%s", out)
	}
	// The same schedule replays to the same trace; without its first fault,
	// the run differs (the faults come from the schedule, not the rates).
	again := twice(t, p, 3, r.Schedule)
	if again.Digest != r.Digest {
		t.Fatalf("replay differs:\n%s\n---\n%s", out, output(again, ""))
	}
	fewer := *r.Schedule
	fewer.Faults = fewer.Faults[1:]
	if run(t, p, 3, &fewer).Digest == r.Digest {
		t.Fatal("removing a datagram fault from the schedule changed nothing")
	}
	// A node with "faults": false keeps its datagrams.
	q := prepare(t, strings.Replace(udpWorldWith(`"faults": {"udp_loss": 0.5, "udp_dup": 0.5},`), `"server"]}`, `"server"], "faults": false}`, 1))
	if r := twice(t, q, 3, nil); len(r.Schedule.Faults) != 0 || !strings.Contains(output(r, ""), "sent 40 got 40 dups 0") {
		t.Fatalf("faults on a fault-free node's datagrams: %v\n%s", r.Schedule.Faults, output(r, ""))
	}
}

const rowWorld = `{"net_overlay": true, "latency": ["1ms", "2ms"], "duration": "5s",
	"nodes": [{"name": "server", "pkg": "./netrow", "args": ["-role", "server"]}],
	"workload": {"name": "client", "pkg": "./netrow"}}`

// msAfter finds "<prefix> after <N>ms" in the output and returns N, or -1.
func msAfter(out, prefix string) int {
	i := strings.Index(out, prefix+" after ")
	if i < 0 {
		return -1
	}
	var n int
	if _, err := fmt.Sscanf(out[i+len(prefix)+7:], "%dms", &n); err != nil {
		return -1
	}
	return n
}

// Each row of the spec's network tables, as the program sees it: the fault
// is in force from 100ms to 400ms; at 150ms the client sends a datagram,
// dials, and sends a line on a connection it opened before the fault. Times
// are printed in ms after 150ms, so the heal is at 250.
func TestNetworkFaultRows(t *testing.T) {
	p := prepare(t, rowWorld)
	const at, until = 100 * time.Millisecond, 400 * time.Millisecond
	for _, tc := range []struct {
		name  string
		fault faults.Fault
		want  []string // lines the client prints
		dial  [2]int   // the dial's outcome time in ms after 150, within [lo, hi]
		reply [2]int   // when the held line's answer comes back
	}{
		{"no fault", faults.Fault{}, []string{"udp: answered after"}, [2]int{0, 10}, [2]int{0, 10}},
		{"partition", faults.Fault{Kind: KindPartition, Side: []string{"client"}},
			[]string{"udp: lost (timeout)", "dial: refused after", "first read: timeout after 100ms"}, [2]int{0, 10}, [2]int{250, 260}},
		{"partition as groups", faults.Fault{Kind: KindPartition, Groups: [][]string{{"client"}, {"server"}}},
			[]string{"udp: lost (timeout)", "dial: refused after", "first read: timeout after 100ms"}, [2]int{0, 10}, [2]int{250, 260}},
		{"stop clog on one link, the other way", faults.Fault{Kind: KindClog, From: "server", To: "client", Mode: "stop"},
			// The datagram reaches the server; its answer is dropped.
			[]string{"udp: lost (timeout)", "dial: refused after", "first read: timeout after 100ms"}, [2]int{0, 10}, [2]int{250, 260}},
		{"jam clog on the server's inbound", faults.Fault{Kind: KindClog, Node: "server", Dir: "in", Mode: "jam"},
			[]string{"udp: lost (timeout)", "dial: ok after", "first read: timeout after 100ms"}, [2]int{250, 260}, [2]int{250, 260}},
		{"slow clog on the client's outbound", faults.Fault{Kind: KindClog, Node: "client", Dir: "out", Mode: "slow", Delay: 200 * time.Millisecond},
			[]string{"udp: answered after 20", "dial: ok after 20", "first read: timeout after 100ms"}, [2]int{200, 210}, [2]int{200, 210}},
		{"slow clog on both ways of the server", faults.Fault{Kind: KindClog, Node: "server", Dir: "both", Mode: "slow", Delay: 60 * time.Millisecond},
			// The delay counts once each way: data and its answer both cross.
			[]string{"udp: answered after 12", "dial: ok after 12", "first read: timeout after 100ms"}, [2]int{120, 130}, [2]int{120, 130}},
		{"slow clog over a partition adds to the held traffic", faults.Fault{Kind: KindClog, From: "client", To: "server", Mode: "slow", Delay: 500 * time.Millisecond},
			// The refusal comes back over the slow link too.
			[]string{"udp: lost (timeout)", "dial: refused after"}, [2]int{500, 510}, [2]int{750, 760}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := &faults.Schedule{Seed: 1}
			if tc.fault.Kind != "" {
				f := tc.fault
				f.At, f.Until = at, until
				sch.Faults = append(sch.Faults, f)
			}
			if strings.HasPrefix(tc.name, "slow clog over") {
				// The partition lasts until 400ms, the slow clog until 1s.
				sch.Faults[0].Until = time.Second
				sch.Faults = append(sch.Faults, faults.Fault{At: at, Kind: KindPartition, Side: []string{"server"}, Until: until})
			}
			r := twice(t, p, 1, sch)
			out := output(r, "client")
			if !r.Passed {
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("client never printed %q", w)
				}
			}
			if d := max(msAfter(out, "dial: ok"), msAfter(out, "dial: refused")); d < tc.dial[0] || d > tc.dial[1] {
				t.Errorf("dial outcome after %dms, want %d to %dms", d, tc.dial[0], tc.dial[1])
			}
			if d := msAfter(out, "reply"); d < tc.reply[0] || d > tc.reply[1] {
				t.Errorf("reply after %dms, want %d to %dms", d, tc.reply[0], tc.reply[1])
			}
			if len(r.Schedule.Faults) != len(sch.Faults) {
				t.Errorf("recorded %v, want the schedule's %v", r.Schedule.Faults, sch.Faults)
			}
			if t.Failed() {
				t.Log(output(r, ""))
			}
		})
	}
}

// A reset kills every connection of the node at once; the process lives on,
// listens and accepts again, and datagrams are untouched.
func TestNetReset(t *testing.T) {
	p := prepare(t, rowWorld)
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 100 * time.Millisecond, Kind: KindNetReset, Node: "server", Until: 100 * time.Millisecond}}}
	r := twice(t, p, 1, sch)
	out := output(r, "")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, out)
	}
	for _, w := range []string{"server#1 - connections reset", "udp: answered after", "dial: ok after"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q", w)
		}
	}
	if !strings.Contains(out, "client#1 | write: broken pipe") && !strings.Contains(out, "client#1 | read: reset") &&
		!strings.Contains(out, "first read: reset") && !strings.Contains(out, "write: reset") {
		t.Errorf("the client did not see its connection reset")
	}
	if strings.Contains(out, "server#2") {
		t.Errorf("the server restarted: a reset must not kill the process")
	}
	if t.Failed() {
		t.Log(out)
	}
}

const meshWorld = `{"net_overlay": true, "latency": ["1ms", "2ms"], "duration": "2s", %FAULTS%
	"nodes": [{"name": "n1", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client"]},
	          {"name": "n2", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client"]},
	          {"name": "n3", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client"]},
	          {"name": "n4", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client"]},
	          {"name": "n5", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client"]}],
	"workload": {"name": "client", "pkg": "./mesh", "args": ["-peers", "n1,n2,n3,n4,n5,client", "-linger", "100ms"]}}`

// Per topology, who can reach whom: two programs hear each other exactly
// when some group of the partition holds both.
func TestPartitionTopologies(t *testing.T) {
	p := prepare(t, strings.Replace(meshWorld, "%FAULTS%", "", 1))
	names := []string{"n1", "n2", "n3", "n4", "n5", "client"}
	for _, topo := range netsim.Topologies {
		t.Run(string(topo), func(t *testing.T) {
			s := rng.New(7, "test", -1)
			groups, err := netsim.Groups(topo, []int{0, 1, 2, 3, 4, 5}, s.Intn)
			if err != nil {
				t.Fatal(err)
			}
			var named [][]string
			for _, g := range groups {
				var ng []string
				for _, h := range g {
					ng = append(ng, names[h])
				}
				named = append(named, ng)
			}
			sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: 100 * time.Millisecond, Kind: KindPartition, Groups: named, Until: time.Second}}}
			r := twice(t, p, 1, sch)
			if !r.Passed {
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
			}
			for _, a := range names {
				var want []string
				for _, b := range names {
					if b == a {
						continue
					}
					for _, g := range named {
						if slices.Contains(g, a) && slices.Contains(g, b) {
							want = append(want, b)
							break
						}
					}
				}
				slices.Sort(want)
				line := strings.TrimSpace(fmt.Sprintf("%s#1 | heard %s", a, strings.Join(want, " ")))
				if !strings.Contains(output(r, a), line+"\n") {
					t.Errorf("groups %v: want %q in\n%s", named, line, output(r, a))
				}
			}
		})
	}
}

// The partitions a run draws take the shapes partition_topologies names, and
// replace each other.
func TestPlannedPartitionShapes(t *testing.T) {
	for _, tc := range []struct {
		topo  string
		check func(f faults.Fault) bool
	}{
		{"half", func(f faults.Fault) bool { return len(f.Side) == 3 }},
		{"one", func(f faults.Fault) bool { return len(f.Side) == 1 || len(f.Side) == 5 }},
		{"majority", func(f faults.Fault) bool { return len(f.Side) == 4 || len(f.Side) == 2 }},
		{"majorities_ring", func(f faults.Fault) bool { return len(f.Groups) == 6 && len(f.Groups[0]) == 3 }},
		{"random_groups", func(f faults.Fault) bool { return len(f.Side) > 0 || len(f.Groups) >= 3 }},
	} {
		t.Run(tc.topo, func(t *testing.T) {
			p := prepare(t, strings.Replace(meshWorld, "%FAULTS%", `"faults": {"partition_per_sec": 10, "partition_for": ["50ms", "300ms"], "partition_topologies": ["`+tc.topo+`"]},`, 1))
			r := twice(t, p, 4, nil)
			if len(r.Schedule.Faults) == 0 {
				t.Fatalf("no partition in 400ms at 10 per second\n%s", output(r, ""))
			}
			for _, f := range r.Schedule.Faults {
				if f.Kind != KindPartition || !tc.check(f) || f.Until <= f.At {
					t.Errorf("%v is not a %s partition", f, tc.topo)
				}
			}
		})
	}
}

const chatterWorld = `{"net_overlay": true, "latency": ["1ms", "5ms"], "duration": "60s",
	"faults": {%FAULTS%},
	"nodes": [{"name": "n1", "pkg": "./chatter", "args": ["-serve"]},
	          {"name": "n2", "pkg": "./chatter", "args": ["-serve"]},
	          {"name": "n3", "pkg": "./chatter", "args": ["-serve"]}],
	"workload": {"name": "client", "pkg": "./chatter", "args": ["-peers", "n1,n2,n3", "-rounds", "50"]}}`

var everyNetFault = map[string]string{
	"partition": `"partition_per_sec": 3, "partition_for": ["50ms", "500ms"], "partition_topologies": ["half", "one", "majority", "majorities_ring", "random_groups"]`,
	"clog":      `"clog_per_sec": 2, "clog_for": ["50ms", "500ms"], "clog_delay": ["10ms", "100ms"]`,
	"swizzle":   `"swizzle_per_sec": 1, "clog_for": ["100ms", "600ms"]`,
	"net_reset": `"reset_per_sec": 2`,
	"udp":       `"udp_loss": 0.1, "udp_dup": 0.1`,
}

// Same seed, same run, under each kind of network fault alone; net/http
// and a long-lived stream come through, the stream in order.
func TestNetworkFaultsAreDeterministic(t *testing.T) {
	for _, kind := range []string{"partition", "clog", "swizzle", "net_reset", "udp"} {
		t.Run(kind, func(t *testing.T) {
			p := prepare(t, strings.Replace(chatterWorld, "%FAULTS%", everyNetFault[kind], 1))
			r := twice(t, p, 2, nil)
			out := output(r, "client")
			if !r.Passed || !strings.Contains(out, "done,") {
				t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
			}
			if len(r.Schedule.Faults) == 0 {
				t.Fatalf("no %s fault happened: the test proves nothing\n%s", kind, out)
			}
			if run(t, p, 3, nil).Digest == r.Digest {
				t.Errorf("seeds 2 and 3 gave the same trace")
			}
		})
	}
}

// A schedule holding every network fault kind replays to the same trace.
func TestNetworkScheduleReplays(t *testing.T) {
	var all []string
	for _, k := range []string{"partition", "clog", "net_reset", "udp"} {
		all = append(all, everyNetFault[k])
	}
	p := prepare(t, strings.Replace(chatterWorld, "%FAULTS%", strings.Join(all, ", ")+`, "swizzle_per_sec": 1`, 1))
	r := twice(t, p, 1, nil)
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	kinds := map[string]bool{}
	swizzle := false
	for _, f := range r.Schedule.Faults {
		kinds[f.Kind] = true
		swizzle = swizzle || (f.Kind == KindClog && f.Dir == "both" && f.Mode == "stop")
	}
	for _, k := range []string{KindPartition, KindClog, KindNetReset, KindUDPDrop, KindUDPDup} {
		if !kinds[k] {
			t.Errorf("the schedule has no %s fault", k)
		}
	}
	if !swizzle {
		t.Errorf("the schedule has no swizzle clog")
	}
	// Through JSON, as a schedule file would go.
	b, err := r.Schedule.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var sch faults.Schedule
	if err := sch.UnmarshalJSON(b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	again := twice(t, p, 1, &sch)
	if again.Digest != r.Digest {
		t.Fatalf("replay differs from the run:\n%s\n---\n%s", output(r, ""), output(again, ""))
	}
	if len(again.Schedule.Faults) != len(r.Schedule.Faults) {
		t.Fatalf("replay applied %d faults, the run %d", len(again.Schedule.Faults), len(r.Schedule.Faults))
	}
}

// "faults": false keeps partitions and clogs off a node's links, even when a
// schedule names it.
func TestFaultFreeNodeKeepsItsLinks(t *testing.T) {
	p := prepare(t, strings.Replace(rowWorld, `"server"]}`, `"server"], "faults": false}`, 1))
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 100 * time.Millisecond, Kind: KindPartition, Side: []string{"client"}, Until: 400 * time.Millisecond},
		{At: 100 * time.Millisecond, Kind: KindClog, Node: "server", Dir: "both", Mode: "jam", Until: 400 * time.Millisecond},
	}}
	r := twice(t, p, 1, sch)
	out := output(r, "client")
	if !r.Passed {
		t.Fatalf("%s: %s\n%s", r.Class, r.Reason, output(r, ""))
	}
	if d := msAfter(out, "reply"); d < 0 || d > 10 || !strings.Contains(out, "udp: answered") {
		t.Fatalf("the fault-free server's links were cut:\n%s", out)
	}
}

// A new partition replaces the one in force; the end of the replaced one
// heals nothing.
func TestNewPartitionReplacesTheOld(t *testing.T) {
	p := prepare(t, rowWorld)
	ms := time.Millisecond
	sch := &faults.Schedule{Seed: 1, Faults: []faults.Fault{
		{At: 100 * ms, Kind: KindPartition, Side: []string{"client"}, Until: 200 * ms},
		{At: 140 * ms, Kind: KindPartition, Groups: [][]string{{"client"}, {"server"}}, Until: 400 * ms},
	}}
	r := twice(t, p, 1, sch)
	out := output(r, "")
	if d := msAfter(out, "reply"); d < 250 || d > 260 {
		t.Fatalf("reply after %dms, want it after the second partition's heal (250ms):\n%s", d, out)
	}
	if strings.Count(out, "partition heals") != 1 {
		t.Fatalf("want exactly one heal, at 400ms:\n%s", out)
	}
}

// Network faults need the simulated network, and say so.
func TestNetworkFaultsNeedTheOverlay(t *testing.T) {
	p := prepare(t, `{"faults": {"clog_per_sec": 1}, "nodes": [], "workload": {"name": "c", "pkg": "./sleeper"}}`)
	_, err := p.Run(context.Background(), RunOptions{Seed: 1})
	if err == nil || !strings.Contains(err.Error(), `set "net_overlay": true, or remove clog_per_sec`) {
		t.Fatalf("err = %v", err)
	}
}

// A reset loses what is in flight: the echo the server wrote 3.5ms before
// its reset, due 6.5ms after it, never reaches the client, which reads the
// reset when the RST arrives instead. (10ms a segment: the client sends at
// about 20ms, the server echoes at about 30ms, the echo is due at 40ms.)
func TestNetResetLosesAReplyInFlight(t *testing.T) {
	p := prepare(t, `{"net_overlay": true, "latency": ["10ms", "10ms"], "nodes": [{"name": "server", "pkg": "./echoserver"}],
		"workload": {"name": "client", "pkg": "./echoclient", "args": ["-n", "1"]}}`)
	if out := output(run(t, p, 1, nil), "client"); !strings.Contains(out, "0.040028168 client#1 | echo 0 rtt") {
		t.Fatalf("without the reset the echo does not arrive at 40ms as the test assumes:\n%s", out)
	}
	reset := 33500 * time.Microsecond
	r := twice(t, p, 1, &faults.Schedule{Seed: 1, Faults: []faults.Fault{{At: reset, Kind: KindNetReset, Node: "server", Until: reset}}})
	out := output(r, "client")
	if strings.Contains(out, "echo 0") || !strings.Contains(out, "0.0435") || !strings.Contains(out, "client#1 | read: read tcp 10.0.0.2:32768->10.0.0.1:7000: fd_read: Connection reset by peer") {
		t.Errorf("the client got the echo, or did not read the reset when the RST arrived at 43.5ms:\n%s", out)
	}
}
