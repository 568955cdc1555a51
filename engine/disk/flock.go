package disk

import (
	"slices"

	"github.com/seedfall/seedfall/engine/errno"
)

// FlockHow is a flock(2) request.
type FlockHow uint8

const (
	LockShared FlockHow = iota + 1
	LockExclusive
	Unlock
)

// flockState is the BSD locks on one file: one exclusive holder or any
// number of shared ones, each an open file description (a Handle).
type flockState struct {
	ex *Handle
	sh []*Handle
}

// Flock is flock(2) with Linux semantics on the open file description h:
// locks belong to the description, so two opens of one file conflict even
// in one process; converting a lock first drops the old one, so a
// conversion that conflicts leaves the description with no lock. A
// conflicting request returns EAGAIN at once: the disk never blocks.
// Closing the handle releases its lock, and a crash releases every lock.
func (h *Handle) Flock(how FlockHow) errno.Errno {
	if e := h.check(); e != 0 {
		return e
	}
	if how != LockShared && how != LockExclusive && how != Unlock {
		return errno.EINVAL
	}
	d := h.d
	st := d.locks[h.n]
	if st == nil {
		if how == Unlock {
			return 0
		}
		st = &flockState{}
		if d.locks == nil {
			d.locks = map[*inode]*flockState{}
		}
		d.locks[h.n] = st
	}
	held := st.heldBy(h)
	if held == how {
		return 0
	}
	st.drop(h)
	defer d.tidyLocks(h.n, st)
	switch how {
	case LockShared:
		if st.ex != nil {
			return errno.EAGAIN
		}
		st.sh = append(st.sh, h)
	case LockExclusive:
		if st.ex != nil || len(st.sh) > 0 {
			return errno.EAGAIN
		}
		st.ex = h
	}
	return 0
}

// heldBy says which lock h holds, 0 for none.
func (st *flockState) heldBy(h *Handle) FlockHow {
	switch {
	case st.ex == h:
		return LockExclusive
	case slices.Contains(st.sh, h):
		return LockShared
	}
	return 0
}

func (st *flockState) drop(h *Handle) {
	if st.ex == h {
		st.ex = nil
	}
	st.sh = slices.DeleteFunc(st.sh, func(x *Handle) bool { return x == h })
}

func (d *Disk) tidyLocks(n *inode, st *flockState) {
	if st.ex == nil && len(st.sh) == 0 {
		delete(d.locks, n)
	}
}

// unlock releases h's lock, as closing its last descriptor does.
func (d *Disk) unlock(h *Handle) {
	if st := d.locks[h.n]; st != nil {
		st.drop(h)
		d.tidyLocks(h.n, st)
	}
}
