package wasi

import (
	"bytes"
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/internal/sched"
)

const (
	eventClock   = 0
	eventFdRead  = 1
	eventFdWrite = 2

	subscriptionAbstime = 1
)

// readyAt is the virtual time at which an operation on the descriptor stops
// returning EAGAIN, or sched.Never.
func (e *fdEntry) readyAt(now int64, write bool) int64 {
	switch e.kind {
	case kindConn:
		if write {
			return e.conn.WritableAt()
		}
		return e.conn.ReadableAt()
	case kindListener:
		if write {
			return now
		}
		return e.lis.ReadableAt()
	case kindUDP:
		if write {
			return e.udp.WritableAt()
		}
		return e.udp.ReadableAt()
	case kindWait:
		return e.wait.doneAt
	}
	return now // files, directories and stdio never block
}

type pollSub struct {
	userdata uint64
	tag      uint8
	fd       uint32
	e        *fdEntry
}

// pollOneoff is where a program waits: for a timer, a socket, or both. If
// nothing is ready it gives the baton back until the earliest moment
// something will be; that is how virtual time advances.
func pollOneoff(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	in, out, nsub, nPtr := uint32(s[0]), uint32(s[1]), uint32(s[2]), uint32(s[3])
	if nsub == 0 {
		return errno.EINVAL
	}
	mem := m.Memory()
	// More 48-byte subscriptions than the memory could hold is not a
	// subscription array at all; checking before nsub*48 can wrap keeps the
	// host from allocating for it.
	if !fits(mem, nsub, 48) {
		return errno.EINVAL
	}
	raw, ok := mem.Read(in, nsub*48)
	if !ok || !span(mem, out, uint64(nsub)*32) {
		return errno.EFAULT
	}
	now := p.Now()
	again := p.takeReissue()
	if again != nil {
		samePoll(again, raw)
	}
	deadline := int64(sched.Never)
	subs := make([]pollSub, nsub)
	for i := range subs {
		b := raw[i*48:]
		sub := pollSub{userdata: le.Uint64(b), tag: b[8]}
		switch sub.tag {
		case eventClock:
			id := le.Uint32(b[16:])
			timeout := int64(le.Uint64(b[24:]))
			wait := timeout
			if le.Uint16(b[40:])&subscriptionAbstime != 0 {
				cur, ok := p.clock(id)
				if !ok {
					return errno.EINVAL
				}
				wait = timeout - cur
			}
			w := p.stretch(wait) // a slow node's timers fire late
			d := now + w
			if w > 0 && d < now { // past the end of time
				d = 1<<63 - 1
			}
			if d < now {
				d = now
			}
			if timeout < 0 { // overflowed: effectively forever
				d = 1<<63 - 1
			}
			if deadline == sched.Never || d < deadline {
				deadline = d
			}
		case eventFdRead, eventFdWrite:
			sub.fd = le.Uint32(b[16:])
			sub.e = p.fd(sub.fd)
		default:
			return errno.EINVAL
		}
		subs[i] = sub
	}
	if again != nil {
		deadline = again.pollDeadline // timeouts count from the first issue
	}
	readyAt := func() int64 {
		t := deadline
		cur := p.Now()
		for _, sub := range subs {
			if sub.tag == eventClock {
				continue
			}
			r := cur
			if sub.e != nil {
				r = sub.e.readyAt(cur, sub.tag == eventFdWrite)
			}
			if r != sched.Never && (t == sched.Never || r < t) {
				t = r
			}
		}
		return t
	}
	if t := readyAt(); t == sched.Never || t > now {
		if p.block(ctx, m, readyAt) {
			p.again = &reissue{poll: bytes.Clone(raw), pollDeadline: deadline}
			return 0
		}
	}
	now = p.Now()
	type ready struct {
		sub pollSub
		en  errno.Errno
	}
	var fired []ready
	for _, sub := range subs {
		fire, en := false, errno.SUCCESS
		switch sub.tag {
		case eventClock:
			fire = deadline != sched.Never && deadline <= now
		default:
			if sub.e == nil {
				fire, en = true, errno.EBADF
				break
			}
			r := sub.e.readyAt(now, sub.tag == eventFdWrite)
			fire = r != sched.Never && r <= now
		}
		if fire {
			fired = append(fired, ready{sub, en})
		}
	}
	// What is ready is reported in an order drawn from p.Order, not in the
	// order of the subscriptions: the guest's runtime readies goroutines in
	// the order of the events, and on Linux which of two handlers whose
	// requests are both waiting runs first is not fixed either.
	for i := len(fired) - 1; i > 0; i-- {
		j := p.Order.Intn(i + 1)
		fired[i], fired[j] = fired[j], fired[i]
	}
	var ev [32]byte
	for i, f := range fired {
		ev = [32]byte{}
		le.PutUint64(ev[0:], f.sub.userdata)
		le.PutUint16(ev[8:], uint16(f.en))
		ev[10] = f.sub.tag
		if !mem.Write(out+uint32(i)*32, ev[:]) {
			return errno.EFAULT
		}
	}
	if !mem.WriteUint32Le(nPtr, uint32(len(fired))) {
		return errno.EFAULT
	}
	return 0
}
