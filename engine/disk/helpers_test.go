package disk

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// newDisk returns a disk whose clock ticks 1ns per reading, so that every
// time stamp is distinct and deterministic.
func newDisk(strict bool) *Disk {
	var clock int64 = 1_000_000_000
	return New(Options{StrictDirs: strict, Now: func() int64 { clock++; return clock }})
}

func open(t *testing.T, d *Disk, path string, flags OpenFlags) *Handle {
	t.Helper()
	h, e := d.Open(d.Root(), path, true, flags)
	if e != 0 {
		t.Fatalf("open %s: %v", path, e)
	}
	return h
}

// create makes (or truncates) path and writes data, without any fsync.
func create(t *testing.T, d *Disk, path, data string) {
	t.Helper()
	h := open(t, d, path, Write|Create|Trunc)
	defer h.Close()
	write(t, h, data, 0)
}

func write(t *testing.T, h *Handle, data string, off int64) {
	t.Helper()
	if n, e := h.WriteAt([]byte(data), off); e != 0 || n != len(data) {
		t.Fatalf("write %q at %d: n=%d %v", data, off, n, e)
	}
}

// appendTo opens path, appends data and closes it, without any fsync.
func appendTo(t *testing.T, d *Disk, path, data string) {
	t.Helper()
	h := open(t, d, path, Write)
	defer h.Close()
	write(t, h, data, h.Size())
}

// fsync opens path (file or directory), fsyncs it and closes it.
func fsync(t *testing.T, d *Disk, path string) {
	t.Helper()
	h := open(t, d, path, Read)
	defer h.Close()
	if e := h.Sync(); e != 0 {
		t.Fatalf("fsync %s: %v", path, e)
	}
}

func ok(t *testing.T, what string, e errno.Errno) {
	t.Helper()
	if e != 0 {
		t.Fatalf("%s: %v", what, e)
	}
}

func seed(t *testing.T, d *Disk, path, data string) {
	t.Helper()
	if err := d.WriteFile(path, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

// tree renders the namespace as the program sees it: one line per name,
// "dir/", "file=content", "link -> target".
func tree(d *Disk) string {
	var lines []string
	d.Walk(func(p string, st Stat, _ int64, _ int) {
		switch st.Type {
		case TypeDirectory:
			lines = append(lines, p+"/")
		case TypeSymlink:
			target, _ := d.Readlink(d.Root(), p)
			lines = append(lines, p+" -> "+target)
		default:
			data, err := d.ReadFile(p)
			if err != nil {
				lines = append(lines, fmt.Sprintf("%s: %v", p, err))
				break
			}
			lines = append(lines, fmt.Sprintf("%s=%s", p, data))
		}
	})
	return strings.Join(lines, "\n")
}

func lines(ls ...string) string { return strings.Join(ls, "\n") }
