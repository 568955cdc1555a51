package disk

import (
	"sort"
	"strings"

	"github.com/seedfall/seedfall/engine/errno"
)

const (
	nameMax  = 255  // NAME_MAX
	pathMax  = 4096 // PATH_MAX, including the terminating NUL in C
	maxLinks = 40   // Linux's limit on symlinks followed in one lookup
)

// inode is a file, directory or symlink. Directory entries and file bytes
// each exist twice: what the program sees now, and what survives a crash.
type inode struct {
	ino              uint64
	typ              FileType
	atim, mtim, ctim int64
	// Times a crash restores for a file: those of its last fsync.
	durAtim, durMtim, durCtim int64

	// nlink counts a file's names. For a directory it is not kept:
	// stat computes 2 + subdirs (0 once removed).
	nlink   uint64
	subdirs uint64
	removed bool // a directory that was rmdir'ed or renamed over

	// parent and name are where the inode was last linked: a directory's
	// real parent (root's is itself), a file's most recent name. Used for
	// ".." and for the paths reported in Op and DirOp.
	parent    *inode
	name      string
	pathCache string
	pathGen   uint64

	// Directories.
	entries    entries // what lookups see
	durEntries entries // what a crash keeps (strict dirs only)

	// Regular files.
	data    content            // page cache
	dur     content            // durable
	pending chunked[pendOp]    // data operations since the last fsync, in order
	parts   chunked[savedPart] // their saved bytes (pending.go)
	live    liveSet            // where the cache holds pending writes' bytes (pending.go)
	arena   []byte             // room for small saved bytes
	// pendBase is the cache's size before the first pending operation,
	// where the pending log starts (meaningful while it is not empty).
	pendBase int64
	// stale pages differ between page cache and durable copy with no
	// pending operation to write them: a failed, lost or misdirected
	// writeback. The next fsync that writes into one writes it in full.
	stale  map[int]struct{}
	damage []Damage // what faults broke in the durable copy, by offset

	target string     // symlinks
	opens  int        // open handles in this epoch
	maps   []*Mapping // live shared mappings, in the order they were made
	mark   uint64     // the epoch in which a crash last found it reachable
}

func (n *inode) size() int64 {
	switch n.typ {
	case TypeRegular:
		return n.data.size
	case TypeDirectory:
		return 4096
	case TypeSymlink:
		return int64(len(n.target))
	}
	return 0
}

func (n *inode) stat() Stat {
	st := Stat{Ino: n.ino, Type: n.typ, Size: n.size(), Atim: n.atim, Mtim: n.mtim, Ctim: n.ctim}
	switch n.typ {
	case TypeDirectory:
		st.Mode = 0o755
		if !n.removed {
			st.Nlink = 2 + n.subdirs
		}
	case TypeRegular:
		st.Mode = 0o644
		st.Nlink = n.nlink
	case TypeSymlink:
		st.Mode = 0o777
		st.Nlink = n.nlink
	}
	return st
}

// pathOf returns the inode's path from the root, "." for the root.
func (d *Disk) pathOf(n *inode) string {
	if n == d.root {
		return "."
	}
	if n.pathGen == d.nsGen {
		return n.pathCache
	}
	p := n.name
	if n.parent != nil && n.parent != d.root {
		p = d.pathOf(n.parent) + "/" + p
	}
	n.pathCache, n.pathGen = p, d.nsGen
	return p
}

type dirent struct {
	name string
	node *inode
}

// entries are a directory's names, sorted, so that listing never depends
// on map order.
type entries []dirent

func (es entries) find(name string) (int, bool) {
	i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
	return i, i < len(es) && es[i].name == name
}

func (es entries) get(name string) *inode {
	if i, ok := es.find(name); ok {
		return es[i].node
	}
	return nil
}

// set points name at node, or removes name when node is nil.
func (es *entries) set(name string, node *inode) {
	i, ok := es.find(name)
	switch {
	case ok && node != nil:
		(*es)[i].node = node
	case ok:
		*es = append((*es)[:i], (*es)[i+1:]...)
	case node != nil:
		*es = append(*es, dirent{})
		copy((*es)[i+1:], (*es)[i:])
		(*es)[i] = dirent{name, node}
	}
}

// resolved is the outcome of a path lookup.
type resolved struct {
	parent *inode // the directory holding the last element
	name   string // the last element
	node   *inode // what it names; nil if missing
	// dot is "." or ".." when the last element was one of those (node is
	// then that directory), and "/" for a path that is only slashes.
	dot     string
	dirOnly bool // the path ended in a slash
}

func hasTrailingSlash(path string) bool { return len(path) > 0 && path[len(path)-1] == '/' }

// resolve looks path up from start. Intermediate symlinks are always
// followed; the last element is followed when follow is true. ".." stops at
// the root. Absolute paths and absolute symlink targets start at the root.
func (d *Disk) resolve(start *inode, path string, follow bool) (resolved, errno.Errno) {
	if path == "" {
		return resolved{}, errno.ENOENT
	}
	if len(path) >= pathMax {
		return resolved{}, errno.ENAMETOOLONG
	}
	cur := start
	rest := path
	links := 0
	dirOnly := false
	for {
		if rest[0] == '/' {
			cur = d.root
			rest = strings.TrimLeft(rest, "/")
			if rest == "" {
				return resolved{parent: d.root, node: d.root, dot: "/", dirOnly: true}, 0
			}
		}
		if hasTrailingSlash(rest) {
			dirOnly = true
			rest = strings.TrimRight(rest, "/")
		}
		comp, next, _ := strings.Cut(rest, "/")
		next = strings.TrimLeft(next, "/")
		if len(comp) > nameMax {
			return resolved{}, errno.ENAMETOOLONG
		}
		var n *inode
		switch {
		case comp == ".":
			n = cur
		case comp == "..":
			// Linux finds ".." of a removed directory (its old parent):
			// a process whose working directory was removed can cd "..".
			n = cur.parent
		case cur.removed:
			// A removed directory has no other entries.
			return resolved{}, errno.ENOENT
		default:
			n = cur.entries.get(comp)
		}
		if next == "" {
			if n != nil && n.typ == TypeSymlink && follow {
				if links++; links > maxLinks {
					return resolved{}, errno.ELOOP
				}
				if n.target == "" {
					return resolved{}, errno.ENOENT
				}
				rest = n.target
				continue
			}
			r := resolved{parent: cur, name: comp, node: n, dirOnly: dirOnly}
			if comp == "." || comp == ".." {
				r.dot = comp
			}
			return r, 0
		}
		switch {
		case n == nil:
			return resolved{}, errno.ENOENT
		case n.typ == TypeSymlink:
			if links++; links > maxLinks {
				return resolved{}, errno.ELOOP
			}
			if n.target == "" {
				return resolved{}, errno.ENOENT
			}
			rest = n.target + "/" + next
			if len(rest) >= pathMax {
				return resolved{}, errno.ENAMETOOLONG
			}
		case n.typ != TypeDirectory:
			return resolved{}, errno.ENOTDIR
		default:
			cur = n
			rest = next
		}
	}
}

// dirHandle checks that h is a usable directory handle of this disk.
// resolveAt resolves path relative to the directory handle dir.
func (d *Disk) resolveAt(dir *Handle, path string, follow bool) (resolved, errno.Errno) {
	start, e := d.dirHandle(dir)
	if e != 0 {
		return resolved{}, e
	}
	return d.resolve(start, path, follow)
}

func (d *Disk) dirHandle(h *Handle) (*inode, errno.Errno) {
	if e := h.check(); e != 0 {
		return nil, e
	}
	if h.d != d {
		return nil, errno.EBADF
	}
	if h.n.typ != TypeDirectory {
		return nil, errno.ENOTDIR
	}
	return h.n, 0
}
