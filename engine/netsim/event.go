package netsim

import (
	"fmt"
	"net/netip"
)

// EventKind names what happened on the network.
type EventKind string

const (
	EvListen   EventKind = "listen"    // Local: the bound address
	EvDial     EventKind = "dial"      // Arrive: when the SYN reaches Remote
	EvSYN      EventKind = "syn"       // a SYN found a listener; Host, Local: the accepting side; Arrive: when the dialer hears back
	EvRefused  EventKind = "refused"   // a SYN found no listener; Arrive: when the dialer hears back
	EvAccept   EventKind = "accept"    // Host, Local: the accepting side
	EvData     EventKind = "data"      // Host, Local: the sender; Bytes of data reach Remote at Arrive
	EvFIN      EventKind = "fin"       // Host, Local: the sender; reaches Remote at Arrive
	EvRST      EventKind = "rst"       // Host, Local: the sender; reaches Remote at Arrive
	EvReset    EventKind = "reset"     // ResetHost cut the connection at Host's end (Local)
	EvClose    EventKind = "close"     // Host closed its end (Local) of a connection or a listener
	EvHostDown EventKind = "host_down" // Host crashed
)

// Event is one entry of the network's log. Times are virtual nanoseconds;
// At is when the event was decided, Arrive when a segment reaches the other
// end (0 when it does not apply).
type Event struct {
	At     int64
	Kind   EventKind
	Host   int
	Local  netip.AddrPort
	Remote netip.AddrPort
	Bytes  int
	Arrive int64
}

func (e Event) String() string {
	s := fmt.Sprintf("%d h%d %s", e.At, e.Host, e.Kind)
	if e.Local.IsValid() {
		s += " " + e.Local.String()
	}
	if e.Remote.IsValid() {
		s += " -> " + e.Remote.String()
	}
	if e.Bytes != 0 {
		s += fmt.Sprintf(" %dB", e.Bytes)
	}
	if e.Arrive != 0 {
		s += fmt.Sprintf(" @%d", e.Arrive)
	}
	return s
}
