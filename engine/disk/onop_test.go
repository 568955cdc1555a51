package disk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

func TestOnOpCounts(t *testing.T) {
	var seen []string
	d := New(Options{OnOp: func(op Op) errno.Errno {
		s := fmt.Sprintf("%s #%d %s off=%d len=%d", op.Kind, op.N, op.Path, op.Off, op.Len)
		if op.Dir {
			s += " dir"
		}
		seen = append(seen, s)
		return 0
	}})
	seed(t, d, "data/log", "hello") // host helpers are not disk operations
	ok(t, "mkdir", d.Mkdir(d.Root(), "data/sub"))
	h := open(t, d, "data/log", Read|Write)
	write(t, h, "abc", 5)
	h.ReadAt(make([]byte, 4), 2)
	ok(t, "truncate", h.Truncate(3))
	ok(t, "sync", h.Sync())
	h.ReadAt(make([]byte, 10), 0)
	h.Close()
	open(t, d, "data/log", Write|Trunc).Close()        // O_TRUNC of an existing file
	open(t, d, "data/new", Write|Create|Trunc).Close() // a new file: nothing to truncate
	ok(t, "rename", d.Rename(d.Root(), "data", d.Root(), "moved"))
	fsync(t, d, "moved/sub")
	fsync(t, d, "moved/log") // the path follows the rename
	want := []string{
		"write #1 data/log off=5 len=3",
		"read #1 data/log off=2 len=4",
		"truncate #2 data/log off=3 len=0",
		"fsync #3 data/log off=0 len=0",
		"read #2 data/log off=0 len=10",
		"truncate #4 data/log off=0 len=0",
		"fsync #5 moved/sub off=0 len=0 dir",
		"fsync #6 moved/log off=0 len=0",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if d.Ops() != 6 || d.Reads() != 2 {
		t.Errorf("Ops()=%d Reads()=%d, want 6 and 2", d.Ops(), d.Reads())
	}
}

func TestOnOpFailures(t *testing.T) {
	cases := []struct {
		name   string
		fail   OpKind
		err    errno.Errno
		run    func(t *testing.T, d *Disk, h *Handle) errno.Errno
		before string // the page cache right after the failed op
		after  string // after a crash
	}{
		{"write EIO writes nothing", OpWrite, errno.EIO, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			n, e := h.WriteAt([]byte("xyz"), 0)
			if n != 0 {
				t.Errorf("failed write returned n=%d", n)
			}
			return e
		}, "f=durable", "f=durable"},
		{"write ENOSPC writes nothing", OpWrite, errno.ENOSPC, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			_, e := h.WriteAt([]byte("xyz"), 100)
			return e
		}, "f=durable", "f=durable"},
		{"read EIO", OpRead, errno.EIO, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			_, e := h.ReadAt(make([]byte, 3), 0)
			return e
		}, "f=durable", "f=durable"},
		{"truncate failure leaves the size", OpTruncate, errno.EIO, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			return h.Truncate(1)
		}, "f=durable", "f=durable"},
		{"O_TRUNC failure fails the open", OpTruncate, errno.EIO, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			_, e := d.Open(d.Root(), "f", true, Write|Trunc)
			return e
		}, "f=durable", "f=durable"},
		{"fsync EIO makes nothing durable", OpSync, errno.EIO, func(t *testing.T, d *Disk, h *Handle) errno.Errno {
			write(t, h, "D", 0)
			return h.Sync()
		}, "f=Durable", "f=durable"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d *Disk
			d = New(Options{OnOp: func(op Op) errno.Errno {
				if op.Kind == c.fail {
					return c.err
				}
				return 0
			}})
			seed(t, d, "f", "durable")
			h := open(t, d, "f", Read|Write)
			if got := c.run(t, d, h); got != c.err {
				t.Errorf("op returned %v, want %v", got, c.err)
			}
			if got := tree(d); got != c.before {
				t.Errorf("page cache after the failure:\n%s\nwant:\n%s", got, c.before)
			}
			d.Crash()
			if got := tree(d); got != c.after {
				t.Errorf("after crash:\n%s\nwant:\n%s", got, c.after)
			}
		})
	}
}

// The engine can inject a fault at one numbered operation, the way a
// recorded schedule replays: only disk op #3 fails.
func TestOnOpFailsOneNumberedOp(t *testing.T) {
	d := New(Options{OnOp: func(op Op) errno.Errno {
		if op.Kind != OpRead && op.N == 3 {
			return errno.EIO
		}
		return 0
	}})
	seed(t, d, "f", "")
	h := open(t, d, "f", Write)
	var errs []string
	for i := range 5 {
		_, e := h.WriteAt([]byte{'a' + byte(i)}, int64(i))
		errs = append(errs, e.Error())
	}
	if got := strings.Join(errs, " "); got != "SUCCESS SUCCESS EIO SUCCESS SUCCESS" {
		t.Errorf("results = %s", got)
	}
	if got, _ := d.ReadFile("f"); string(got) != "ab\x00de" {
		t.Errorf("content = %q, want the third byte missing", got)
	}
}

// A crash injected from inside the hook (crash during I/O) means the
// operation never happens.
func TestOnOpCrashInsideHook(t *testing.T) {
	var d *Disk
	d = New(Options{OnOp: func(op Op) errno.Errno {
		if op.Kind == OpSync {
			d.Crash()
		}
		return 0
	}})
	seed(t, d, "f", "old")
	h := open(t, d, "f", Write)
	write(t, h, "new", 0)
	if e := h.Sync(); e != errno.EBADF {
		t.Errorf("sync that crashed the disk returned %v, want EBADF", e)
	}
	if got := tree(d); got != "f=old" {
		t.Errorf("after crash during fsync:\n%s", got)
	}
}
