package counter

import (
	"bufio"
	"fmt"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seedfall/seedfall/sim"
)

// Server answers the line protocol over a Store:
//
//	ADD <client> <req> <n>  ->  OK <total>
//	GET                     ->  TOTAL <total>
//
// Every add is durable before it is answered. With Dedup, an add whose
// request id the client already had applied is answered without applying
// it again; the ids live in the store, so a restart keeps them.
type Server struct {
	Store Store
	Dedup bool
	// SlowReply is how long the buggify slow path holds an answer.
	SlowReply time.Duration

	mu sync.Mutex
}

// ListenAndServe listens on addr, says what it recovered (note adds to
// it), tells seedfall that setup is complete and serves.
func (s *Server) ListenAndServe(addr, note string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	st := s.Store.State()
	// The wall clock is only printed, never trusted: clock skew and jumps
	// show here and change nothing.
	log.Printf("server: %s store, total %d from %d records%s, dedup=%v, serving on %s, wall clock %s",
		s.Store.Format(), st.Total, st.Applied, note, s.Dedup, addr, time.Now().UTC().Format("15:04:05.000"))
	sim.SetupComplete()
	return s.Serve(l)
}

// Serve accepts connections until the listener fails.
func (s *Server) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go s.conn(c)
	}
}

func (s *Server) conn(c net.Conn) {
	defer c.Close()
	in := bufio.NewReader(c)
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			return
		}
		answer, applied := s.handle(strings.Fields(line))
		if applied && sim.Buggify() {
			// A dropped connection after the add is durable: the client
			// cannot tell this from a lost request and sends it again.
			log.Printf("server: buggify: dropping the connection after applying %s", strings.TrimSpace(line))
			return
		}
		if applied && sim.Buggify() {
			// A slow path (a stalled disk, a long GC): the answer comes
			// after the client's timeout.
			log.Printf("server: buggify: answering %s after %v", strings.TrimSpace(line), s.SlowReply)
			time.Sleep(s.SlowReply)
		}
		if _, err := fmt.Fprintln(c, answer); err != nil {
			return
		}
	}
}

// handle runs one request and says whether it applied an add.
func (s *Server) handle(f []string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.Store.State()
	switch {
	case len(f) == 1 && f[0] == "GET":
		return "TOTAL " + strconv.FormatInt(st.Total, 10), false
	case len(f) == 4 && f[0] == "ADD":
		r, ok := parseFields(f[1], f[2], f[3])
		if !ok {
			break
		}
		resend := r.Req <= st.Last[r.Client]
		// Coverage: the faults must make clients resend, or the dedup
		// path is never tested.
		sim.Sometimes(resend, "a client resent an add", map[string]any{"client": r.Client, "req": r.Req})
		if s.Dedup && resend {
			log.Printf("server: %s request %d is a resend, already applied", r.Client, r.Req)
			return "OK " + strconv.FormatInt(st.Total, 10), false
		}
		if err := s.Store.Append(r); err != nil {
			// The add may or may not be on disk: only a restart, which
			// reads the disk again, knows the state.
			log.Fatalf("server: %v", err)
		}
		return "OK " + strconv.FormatInt(st.Total, 10), true
	}
	return "ERR want ADD <client> <req> <n> or GET", false
}
