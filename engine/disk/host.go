package disk

import (
	"strings"

	"github.com/seedfall/seedfall/engine/errno"
)

// Host-side helpers for the engine, tests and `seedfall inspect`. They take
// paths from the disk root, follow symlinks, and neither count as disk
// operations nor go through OnOp.

// PathError is the error of a host helper.
type PathError struct {
	Op   string
	Path string
	Err  errno.Errno
}

func (e *PathError) Error() string {
	return "simulated disk: " + e.Op + " " + e.Path + ": " + describe(e.Err)
}

func (e *PathError) Unwrap() error { return e.Err }

func describe(e errno.Errno) string {
	var s string
	switch e {
	case errno.ENOENT:
		s = "no such file or directory"
	case errno.ENOTDIR:
		s = "a path element is not a directory"
	case errno.EISDIR:
		s = "is a directory"
	case errno.ELOOP:
		s = "too many levels of symbolic links"
	case errno.ENAMETOOLONG:
		s = "name too long"
	case errno.EFBIG:
		s = "file too large"
	case errno.EINVAL:
		s = "invalid path"
	default:
		return e.Error()
	}
	return s + " (" + e.Error() + ")"
}

// WriteFile creates or replaces the file at path with data, creating
// missing parent directories, and makes all of it durable at once: data,
// the file's entry and every parent's entry, strict dirs or not.
func (d *Disk) WriteFile(path string, data []byte) error {
	fail := func(e errno.Errno) error { return &PathError{Op: "write", Path: path, Err: e} }
	if int64(len(data)) > maxFileSize {
		return fail(errno.EFBIG)
	}
	rel := strings.Trim(path, "/")
	if rel == "" {
		return fail(errno.EISDIR)
	}
	if hasTrailingSlash(path) {
		return fail(errno.EISDIR)
	}
	parts := strings.Split(rel, "/")
	cur := d.root
	for i, comp := range parts {
		if comp == "" {
			continue
		}
		last := i == len(parts)-1
		r, e := d.resolve(cur, comp, true)
		if e != 0 {
			return fail(e)
		}
		n := r.node
		if n == nil {
			if r.parent.removed {
				return fail(errno.ENOENT)
			}
			t := TypeDirectory
			if last {
				t = TypeRegular
			}
			n = d.newInode(t)
			d.addEntry(r.parent, r.name, n)
		}
		if r.dot == "" {
			d.makeDurable(r.parent, r.name, n)
		}
		if !last {
			if n.typ != TypeDirectory {
				return fail(errno.ENOTDIR)
			}
			cur = n
			continue
		}
		if n.typ != TypeRegular {
			return fail(errno.EISDIR)
		}
		n.dropPending()
		delete(d.dirty, n)
		d.used -= n.data.size
		oldSize := n.data.size
		n.data = content{}
		n.data.writeAt(data, 0, nil)
		d.used += n.data.size
		n.stale, n.damage = nil, nil
		n.dur = n.data.clone()
		if len(n.maps) > 0 {
			d.mapRefresh(n, 0, max(oldSize, n.data.size))
		}
		now := d.now()
		n.mtim, n.ctim = now, now
		n.durAtim, n.durMtim, n.durCtim = n.atim, n.mtim, n.ctim
	}
	return nil
}

// MkdirAll creates the directory at path and any missing parents, all
// durable at once, strict dirs or not: the directories a fresh machine
// already has, such as /tmp. Existing directories are left as they are.
func (d *Disk) MkdirAll(path string) error {
	fail := func(e errno.Errno) error { return &PathError{Op: "mkdir", Path: path, Err: e} }
	cur := d.root
	for _, comp := range strings.Split(path, "/") {
		if comp == "" {
			continue
		}
		r, e := d.resolve(cur, comp, true)
		if e != 0 {
			return fail(e)
		}
		n := r.node
		if n == nil {
			n = d.newInode(TypeDirectory)
			d.addEntry(r.parent, r.name, n)
		}
		if n.typ != TypeDirectory {
			return fail(errno.ENOTDIR)
		}
		if r.dot == "" {
			d.makeDurable(r.parent, r.name, n)
		}
		cur = n
	}
	return nil
}

// ReadFile returns the file's content as the program sees it now (the page
// cache).
func (d *Disk) ReadFile(path string) ([]byte, error) {
	n, err := d.hostFile("read", path)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n.data.size)
	n.data.readAt(out, 0)
	return out, nil
}

// ReadDurable returns the content of the file at path as a crash would
// leave it with no pending write kept.
func (d *Disk) ReadDurable(path string) ([]byte, error) {
	n, err := d.hostFile("read durable", path)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n.dur.size)
	n.dur.readAt(out, 0)
	return out, nil
}

func (d *Disk) hostFile(op, path string) (*inode, error) {
	p := strings.TrimLeft(path, "/")
	if p == "" {
		p = "."
	}
	r, e := d.resolve(d.root, p, true)
	switch {
	case e != 0:
	case r.node == nil:
		e = errno.ENOENT
	case r.node.typ == TypeDirectory:
		e = errno.EISDIR
	case r.dirOnly:
		e = errno.ENOTDIR
	}
	if e != 0 {
		return nil, &PathError{Op: op, Path: path, Err: e}
	}
	return r.node, nil
}

// Walk calls fn for every name on the disk as the program sees it, depth
// first in name order, without following symlinks. path is from the root.
// For a file, durableSize is the size a crash would leave and pending is the
// number of data operations since its last fsync; for a directory,
// durableSize is its size and pending is the number of directory operations
// on it not yet durable.
//
// The root itself is not a name, so Walk does not call fn for it;
// RootPending says whether its entries are durable.
func (d *Disk) Walk(fn func(path string, st Stat, durableSize int64, pending int)) {
	dirPending := d.dirPending()
	var walk func(prefix string, dir *inode)
	walk = func(prefix string, dir *inode) {
		for _, e := range dir.entries {
			n := e.node
			p := prefix + e.name
			st := n.stat()
			switch n.typ {
			case TypeRegular:
				fn(p, st, n.dur.size, n.pending.len())
			case TypeDirectory:
				fn(p, st, st.Size, dirPending[n])
				walk(p+"/", n)
			default:
				fn(p, st, st.Size, 0)
			}
		}
	}
	walk("", d.root)
}

// RootPending returns the root directory's stat and the number of
// directory operations on it not yet durable (the create of a top-level
// directory, say), which Walk, listing names, leaves out.
func (d *Disk) RootPending() (Stat, int) {
	return d.root.stat(), d.dirPending()[d.root]
}

// dirPending counts the directory operations not yet durable, by the
// directory they change.
func (d *Disk) dirPending() map[*inode]int {
	if len(d.dirLog) == 0 {
		return nil
	}
	dirPending := map[*inode]int{}
	for i := range d.dirLog {
		effs := d.dirLog[i].effects()
		dirPending[effs[0].dir]++
		if len(effs) == 2 && effs[1].dir != effs[0].dir {
			dirPending[effs[1].dir]++
		}
	}
	return dirPending
}
