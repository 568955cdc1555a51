package engine

import (
	"strings"
	"testing"

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
