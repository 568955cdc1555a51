package disk

import (
	"github.com/seedfall/seedfall/engine/errno"
)

// The path operations below follow Linux (ext4) in which errno each error
// case returns and in what order the cases are checked, because Go's os
// package and the programs on top of it branch on those errnos.

// Open opens or creates the file at path, relative to the directory dir.
// Create on a dangling symlink (with follow) creates its target. Trunc
// truncates an existing regular file even without Write, as Linux does.
func (d *Disk) Open(dir *Handle, path string, follow bool, flags OpenFlags) (*Handle, errno.Errno) {
	start, e := d.dirHandle(dir)
	if e != 0 {
		return nil, e
	}
	create := flags&Create != 0
	excl := create && flags&Excl != 0
	if create && flags&Directory != 0 {
		return nil, errno.EINVAL
	}
	if hasTrailingSlash(path) {
		follow = true
	}
	if excl {
		follow = false // O_EXCL never follows the last element
	}
	r, e := d.resolve(start, path, follow)
	if e != 0 {
		return nil, e
	}
	if create && r.dirOnly {
		return nil, errno.EISDIR
	}
	n := r.node
	if n == nil {
		if !create {
			return nil, errno.ENOENT
		}
		if r.parent.removed {
			return nil, errno.ENOENT
		}
		n = d.newInode(TypeRegular)
		d.addEntry(r.parent, r.name, n)
		if d.strict {
			d.logDirOp(DirOp{Kind: DirCreate, Path: d.join(r.parent, r.name)}, effect{r.parent, r.name, n}, effect{})
		}
	} else {
		if excl {
			return nil, errno.EEXIST
		}
		switch n.typ {
		case TypeSymlink:
			return nil, errno.ELOOP
		case TypeDirectory:
			if flags&(Write|Trunc|Create) != 0 {
				return nil, errno.EISDIR
			}
		case TypeRegular:
			if flags&Directory != 0 || r.dirOnly {
				return nil, errno.ENOTDIR
			}
			if flags&Trunc != 0 {
				if e := d.truncate(n, 0); e != 0 {
					return nil, e
				}
			}
		}
	}
	n.opens++
	return &Handle{d: d, n: n, epoch: d.epoch, readable: flags&Read != 0 || flags&Write == 0, writable: flags&Write != 0}, 0
}

// Stat describes the file at path.
func (d *Disk) Stat(dir *Handle, path string, follow bool) (Stat, errno.Errno) {
	r, e := d.resolveAt(dir, path, follow || hasTrailingSlash(path))
	if e != 0 {
		return Stat{}, e
	}
	if r.node == nil {
		return Stat{}, errno.ENOENT
	}
	if r.dirOnly && r.node.typ != TypeDirectory {
		return Stat{}, errno.ENOTDIR
	}
	return r.node.stat(), 0
}

// Mkdir creates a directory.
func (d *Disk) Mkdir(dir *Handle, path string) errno.Errno {
	r, e := d.resolveAt(dir, path, false)
	if e != 0 {
		return e
	}
	if r.node != nil {
		return errno.EEXIST
	}
	if r.parent.removed {
		return errno.ENOENT
	}
	n := d.newInode(TypeDirectory)
	d.addEntry(r.parent, r.name, n)
	if d.strict {
		d.logDirOp(DirOp{Kind: DirMkdir, Path: d.join(r.parent, r.name)}, effect{r.parent, r.name, n}, effect{})
	}
	return 0
}

// Rmdir removes an empty directory.
func (d *Disk) Rmdir(dir *Handle, path string) errno.Errno {
	r, e := d.resolveAt(dir, path, false)
	if e != 0 {
		return e
	}
	switch r.dot {
	case "/":
		return errno.EBUSY
	case ".":
		return errno.EINVAL
	case "..":
		return errno.ENOTEMPTY
	}
	n := r.node
	switch {
	case n == nil:
		return errno.ENOENT
	case n.typ != TypeDirectory:
		return errno.ENOTDIR
	case len(n.entries) > 0:
		return errno.ENOTEMPTY
	}
	if d.strict {
		d.logDirOp(DirOp{Kind: DirRmdir, Path: d.join(r.parent, r.name)}, effect{r.parent, r.name, nil}, effect{})
	}
	d.removeEntry(r.parent, r.name, n)
	n.removed = true
	n.ctim = d.now()
	return 0
}

// Unlink removes a name of a file or symlink. Open handles keep the file.
func (d *Disk) Unlink(dir *Handle, path string) errno.Errno {
	r, e := d.resolveAt(dir, path, false)
	if e != 0 {
		return e
	}
	n := r.node
	switch {
	case r.dot != "":
		return errno.EISDIR
	case n == nil:
		return errno.ENOENT
	case n.typ == TypeDirectory:
		return errno.EISDIR
	case r.dirOnly:
		return errno.ENOTDIR
	}
	if d.strict {
		d.logDirOp(DirOp{Kind: DirUnlink, Path: d.join(r.parent, r.name)}, effect{r.parent, r.name, nil}, effect{})
	}
	d.removeEntry(r.parent, r.name, n)
	n.ctim = d.now()
	d.maybeFree(n)
	return 0
}

// Rename moves old to new, atomically replacing a file at new, or an empty
// directory when old is a directory. Renaming a name onto itself, or onto
// another name of the same file, does nothing.
func (d *Disk) Rename(odir *Handle, old string, ndir *Handle, new string) errno.Errno {
	ostart, e := d.dirHandle(odir)
	if e != 0 {
		return e
	}
	nstart, e := d.dirHandle(ndir)
	if e != 0 {
		return e
	}
	ro, e := d.resolve(ostart, old, false)
	if e != 0 {
		return e
	}
	rn, e := d.resolve(nstart, new, false)
	if e != 0 {
		return e
	}
	if ro.dot != "" || rn.dot != "" {
		return errno.EBUSY
	}
	n := ro.node
	if n == nil {
		return errno.ENOENT
	}
	isDir := n.typ == TypeDirectory
	if !isDir && (ro.dirOnly || rn.dirOnly) {
		return errno.ENOTDIR
	}
	if ro.parent != rn.parent {
		// Linux's lock_rename "trap": old may not be an ancestor of new,
		// and new may not be an ancestor of old.
		if isDir && isAncestor(n, rn.parent) {
			return errno.EINVAL
		}
		if rn.node != nil && rn.node.typ == TypeDirectory && isAncestor(rn.node, ro.parent) {
			return errno.ENOTEMPTY
		}
	}
	t := rn.node
	if t == n {
		return 0
	}
	if rn.parent.removed {
		return errno.ENOENT
	}
	if t != nil {
		switch {
		case isDir && t.typ != TypeDirectory:
			return errno.ENOTDIR
		case !isDir && t.typ == TypeDirectory:
			return errno.EISDIR
		case t.typ == TypeDirectory && len(t.entries) > 0:
			return errno.ENOTEMPTY
		}
	}
	now := d.now()
	if t != nil {
		d.removeEntry(rn.parent, rn.name, t)
		t.ctim = now
		if t.typ == TypeDirectory {
			t.removed = true
		} else {
			d.maybeFree(t)
		}
	}
	d.removeEntry(ro.parent, ro.name, n)
	d.addEntry(rn.parent, rn.name, n)
	n.ctim = now
	d.nsGen++ // a moved directory changes the path of everything under it
	if d.strict {
		d.logDirOp(DirOp{Kind: DirRename, Path: d.join(ro.parent, ro.name), NewPath: d.join(rn.parent, rn.name)},
			effect{ro.parent, ro.name, nil}, effect{rn.parent, rn.name, n})
	}
	return 0
}

// isAncestor reports whether dir a is b or one of b's ancestors.
func isAncestor(a, b *inode) bool {
	for {
		if b == a {
			return true
		}
		if b.parent == b {
			return false
		}
		b = b.parent
	}
}

// Symlink creates a symlink at path holding target.
func (d *Disk) Symlink(target string, dir *Handle, path string) errno.Errno {
	start, e := d.dirHandle(dir)
	if e != 0 {
		return e
	}
	if target == "" {
		return errno.ENOENT
	}
	if len(target) >= pathMax {
		return errno.ENAMETOOLONG
	}
	r, e := d.resolve(start, path, false)
	if e != 0 {
		return e
	}
	switch {
	case r.node != nil:
		return errno.EEXIST
	case r.dirOnly, r.parent.removed:
		return errno.ENOENT
	}
	n := d.newInode(TypeSymlink)
	n.target = target
	d.addEntry(r.parent, r.name, n)
	if d.strict {
		d.logDirOp(DirOp{Kind: DirSymlink, Path: d.join(r.parent, r.name)}, effect{r.parent, r.name, n}, effect{})
	}
	return 0
}

// Readlink returns a symlink's target. A trailing slash follows the last
// element, as on Linux: "link/" names what link points to, which is then
// not a symlink (EINVAL) or not a directory (ENOTDIR).
func (d *Disk) Readlink(dir *Handle, path string) (string, errno.Errno) {
	r, e := d.resolveAt(dir, path, hasTrailingSlash(path))
	if e != 0 {
		return "", e
	}
	switch {
	case r.node == nil:
		return "", errno.ENOENT
	case r.dirOnly && r.node.typ != TypeDirectory:
		return "", errno.ENOTDIR
	case r.node.typ != TypeSymlink, r.dirOnly:
		return "", errno.EINVAL
	}
	return r.node.target, 0
}

// Link gives the file at old a second name, new. Directories cannot be
// linked (EPERM).
func (d *Disk) Link(odir *Handle, old string, follow bool, ndir *Handle, new string) errno.Errno {
	ostart, e := d.dirHandle(odir)
	if e != 0 {
		return e
	}
	nstart, e := d.dirHandle(ndir)
	if e != 0 {
		return e
	}
	ro, e := d.resolve(ostart, old, follow)
	if e != 0 {
		return e
	}
	n := ro.node
	switch {
	case n == nil:
		return errno.ENOENT
	case ro.dirOnly && n.typ != TypeDirectory:
		return errno.ENOTDIR
	}
	rn, e := d.resolve(nstart, new, false)
	if e != 0 {
		return e
	}
	switch {
	case rn.node != nil:
		return errno.EEXIST
	case rn.dirOnly, rn.parent.removed:
		return errno.ENOENT
	case n.typ == TypeDirectory:
		return errno.EPERM
	}
	oldPath := ""
	if d.strict {
		oldPath = d.pathOf(n)
	}
	d.addEntry(rn.parent, rn.name, n)
	n.ctim = d.now()
	if d.strict {
		d.logDirOp(DirOp{Kind: DirLink, Path: oldPath, NewPath: d.join(rn.parent, rn.name)}, effect{rn.parent, rn.name, n}, effect{})
	}
	return 0
}

// SetTimes sets the access and modification times of the file at path.
func (d *Disk) SetTimes(dir *Handle, path string, follow bool, atim, mtim int64, flags TimeFlags) errno.Errno {
	r, e := d.resolveAt(dir, path, follow || hasTrailingSlash(path))
	if e != 0 {
		return e
	}
	if r.node == nil {
		return errno.ENOENT
	}
	if r.dirOnly && r.node.typ != TypeDirectory {
		return errno.ENOTDIR
	}
	return d.setTimes(r.node, atim, mtim, flags)
}

// addEntry links n into dir under name, in the page cache's namespace.
func (d *Disk) addEntry(dir *inode, name string, n *inode) {
	dir.entries.set(name, n)
	if n.typ == TypeDirectory {
		dir.subdirs++
	} else {
		n.nlink++
	}
	n.parent, n.name, n.pathGen = dir, name, 0
	now := d.now()
	dir.mtim, dir.ctim = now, now
}

func (d *Disk) removeEntry(dir *inode, name string, n *inode) {
	dir.entries.set(name, nil)
	if n.typ == TypeDirectory {
		dir.subdirs--
	} else {
		n.nlink--
	}
	now := d.now()
	dir.mtim, dir.ctim = now, now
}

func (d *Disk) join(dir *inode, name string) string {
	if dir == d.root {
		return name
	}
	return d.pathOf(dir) + "/" + name
}
