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

	EvPartition EventKind = "partition" // a partition began; Note: its groups
	EvHeal      EventKind = "heal"      // the partition ended (Note "all": every clog too)
	EvClog      EventKind = "clog"      // a clog began; Note: which, e.g. "#1 0->* slow +5000"
	EvUnclog    EventKind = "unclog"    // a clog ended; Note: which
	EvHold      EventKind = "hold"      // a fault holds what travels from Host (Local) to Remote (Note "syn": a handshake)
	EvRelease   EventKind = "release"   // held traffic from Host (Local) now reaches Remote at Arrive; Note: what

	EvUDPBind EventKind = "udp_bind" // Local: the bound address
	EvUDPSend EventKind = "udp_send" // Host, Local: the sender; Bytes reach Remote at Arrive; Seq: the datagram's number
	EvUDPDrop EventKind = "udp_drop" // a datagram from Host (Local) to Remote is dropped; Note: why ("loss", "cut", "no socket", "queue full")
	EvUDPDup  EventKind = "udp_dup"  // the datagram Seq from Host is sent twice; the copy reaches Remote at Arrive
)

// Event is one entry of the network's log. Times are virtual nanoseconds;
// At is when the event was decided, Arrive when a segment reaches the other
// end (0 when it does not apply, -1 while a fault holds it). Host is -1 for
// the events of faults that concern no one host.
type Event struct {
	At     int64
	Kind   EventKind
	Host   int
	Local  netip.AddrPort
	Remote netip.AddrPort
	Bytes  int
	Arrive int64
	Seq    uint64 // a datagram's number (per sending host, from 1)
	Note   string
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
	if e.Seq != 0 {
		s += fmt.Sprintf(" #%d", e.Seq)
	}
	if e.Arrive != 0 {
		s += fmt.Sprintf(" @%d", e.Arrive)
	}
	if e.Note != "" {
		s += " " + e.Note
	}
	return s
}
