package wasi

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/disk"
	"github.com/seedfall/seedfall/engine/errno"
	"github.com/seedfall/seedfall/engine/internal/netsim"
)

type fdKind uint8

const (
	kindStdin fdKind = iota
	kindStdout
	kindStderr
	kindDir
	kindFile
	kindConn
	kindListener
	kindUDP
	kindWait // an fsync or msync in flight (fsync.go)
)

type fdEntry struct {
	kind     fdKind
	d        *disk.Disk
	h        *disk.Handle
	preopen  string // name of a preopened directory
	readonly bool   // under the read-only /etc
	read     bool
	write    bool
	append   bool
	nonblock bool
	sync     bool // O_SYNC or O_DSYNC: every write is durable when it returns
	off      int64
	dirents  []disk.Dirent // readdir snapshot, taken at cookie 0
	conn     *netsim.Conn
	lis      *netsim.Listener
	udp      *netsim.UDPConn
	wait     *waitOp
}

// WASI file types.
const (
	ftUnknown      = 0
	ftCharDevice   = 2
	ftDirectory    = 3
	ftSocketDgram  = 5
	ftRegular      = 4
	ftSocketStream = 6
	ftSymlink      = 7
)

const (
	fdflagAppend   = 1
	fdflagDsync    = 2
	fdflagNonblock = 4
	fdflagSync     = 16

	oflagCreat     = 1
	oflagDirectory = 2
	oflagExcl      = 4
	oflagTrunc     = 8

	lookupFollow = 1

	rightFdRead  = 1 << 1
	rightFdWrite = 1 << 6
	allRights    = (1 << 30) - 1
)

// The only preopen is "/". The read-only /etc disk is mounted at "etc" in
// the root rather than preopened as "/etc": Go's wasip1 port resolves a path
// against the preopen whose name is a plain string prefix of it, so a
// "/etc" preopen would also capture "/etcd-data" or "/etc.bak" (read-only,
// or not found) instead of leaving them on the node's disk.
func (p *Process) init() {
	p.fds = append(p.fds[:0],
		&fdEntry{kind: kindStdin, read: true},
		&fdEntry{kind: kindStdout, write: true},
		&fdEntry{kind: kindStderr, write: true},
		&fdEntry{kind: kindDir, d: p.Disk, h: p.Disk.Root(), preopen: "/", read: true},
	)
}

// etcRoot is a descriptor on the root of the /etc disk, for path calls
// that mount sends there; it is not in the fd table.
func (p *Process) etcRoot() *fdEntry {
	return &fdEntry{kind: kindDir, d: p.Etc, h: p.Etc.Root(), read: true, readonly: true}
}

// etcMount is the name under the root where the /etc disk is mounted.
const etcMount = "etc"

// isDiskRoot reports whether e is a directory descriptor on the root of the
// node's disk (the preopen, or "/" opened again).
func (p *Process) isDiskRoot(e *fdEntry) bool {
	return e.kind == kindDir && e.d == p.Disk && e.h.Ino() == p.Disk.Root().Ino()
}

// mount sends a path that starts at the root of the node's disk and enters
// "etc" to the /etc disk. It sees the leading "/" and "./" a path may have,
// not ".." or symlinks that lead into etc (Go cleans paths before calling).
func (p *Process) mount(e *fdEntry, path string) (*fdEntry, string) {
	if p.Etc == nil || !p.isDiskRoot(e) {
		return e, path
	}
	rest := path
	for strings.HasPrefix(rest, "/") || strings.HasPrefix(rest, "./") {
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "/"), "./")
	}
	if rest != etcMount && !strings.HasPrefix(rest, etcMount+"/") {
		return e, path
	}
	rest = rest[len(etcMount):]
	if strings.Trim(rest, "/") == "" {
		return p.etcRoot(), "." + rest // keeps a trailing slash
	}
	return p.etcRoot(), strings.TrimLeft(rest, "/")
}

// dev numbers the disks, so that os.SameFile tells their files apart.
func (p *Process) dev(d *disk.Disk) uint64 {
	if d != nil && d == p.Etc {
		return 2
	}
	return 1
}

func (p *Process) fd(fd uint32) *fdEntry {
	if int(fd) < len(p.fds) {
		return p.fds[fd]
	}
	return nil
}

func (p *Process) alloc(e *fdEntry) uint32 {
	for i := 3; i < len(p.fds); i++ {
		if p.fds[i] == nil {
			p.fds[i] = e
			return uint32(i)
		}
	}
	p.fds = append(p.fds, e)
	return uint32(len(p.fds) - 1)
}

// closeAll closes every descriptor, as the kernel does when a process exits:
// sockets send FIN (or RST with unread data), files are released.
func (p *Process) closeAll() {
	p.dropMappings()
	for i, e := range p.fds {
		if e != nil && i > 2 {
			e.close()
			p.fds[i] = nil
		}
	}
}

func (e *fdEntry) close() {
	switch e.kind {
	case kindFile:
		e.h.Close()
	case kindDir:
		if e.preopen == "" {
			e.h.Close()
		}
	case kindConn:
		e.conn.Close()
	case kindListener:
		e.lis.Close()
	case kindUDP:
		e.udp.Close()
	}
}

func fdClose(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	fd := uint32(s[0])
	e := p.fd(fd)
	if e == nil || e.preopen != "" {
		return errno.EBADF
	}
	e.close()
	p.fds[fd] = nil
	return 0
}

func fdAllocate(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil || e.kind != kindFile {
		return errno.EBADF
	}
	off, n := int64(s[1]), int64(s[2])
	if off < 0 || n < 0 {
		return errno.EINVAL
	}
	if off > 1<<63-1-n {
		return errno.EFBIG // past any file size, as fallocate(2) says
	}
	end := off + n
	if end > e.h.Size() {
		return e.h.Truncate(end)
	}
	return 0
}

func (e *fdEntry) filetype() uint8 {
	switch e.kind {
	case kindStdin, kindStdout, kindStderr:
		return ftCharDevice
	case kindDir:
		return ftDirectory
	case kindFile:
		return ftRegular
	case kindConn, kindListener:
		return ftSocketStream
	case kindUDP:
		return ftSocketDgram
	}
	return ftUnknown
}

func fdFdstatGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	var b [24]byte
	b[0] = e.filetype()
	var flags uint16
	if e.append {
		flags |= fdflagAppend
	}
	if e.nonblock {
		flags |= fdflagNonblock
	}
	if e.sync {
		flags |= fdflagSync
	}
	le.PutUint16(b[2:], flags)
	rights := uint64(allRights)
	if !e.write {
		rights &^= rightFdWrite
	}
	if !e.read {
		rights &^= rightFdRead
	}
	le.PutUint64(b[8:], rights)
	le.PutUint64(b[16:], allRights)
	if !m.Memory().Write(uint32(s[1]), b[:]) {
		return errno.EFAULT
	}
	return 0
}

func fdFdstatSetFlags(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	e.setFlags(uint16(s[1]))
	return 0
}

func (e *fdEntry) setFlags(flags uint16) {
	e.nonblock = flags&fdflagNonblock != 0
	if e.kind == kindFile {
		e.append = flags&fdflagAppend != 0
	}
}

func fdFdstatSetRights(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	if proc(ctx).fd(uint32(s[0])) == nil {
		return errno.EBADF
	}
	return 0
}

func writeFilestat(m api.Module, ptr uint32, dev uint64, st disk.Stat) errno.Errno {
	var b [64]byte
	le.PutUint64(b[0:], dev)
	le.PutUint64(b[8:], st.Ino)
	b[16] = uint8(st.Type)
	le.PutUint64(b[24:], st.Nlink)
	le.PutUint64(b[32:], uint64(st.Size))
	le.PutUint64(b[40:], uint64(st.Atim))
	le.PutUint64(b[48:], uint64(st.Mtim))
	le.PutUint64(b[56:], uint64(st.Ctim))
	if !m.Memory().Write(ptr, b[:]) {
		return errno.EFAULT
	}
	return 0
}

func fdFilestatGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	e := p.fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	switch e.kind {
	case kindFile, kindDir:
		return writeFilestat(m, uint32(s[1]), p.dev(e.d), e.h.Stat())
	}
	return writeFilestat(m, uint32(s[1]), 0, disk.Stat{Type: disk.FileType(e.filetype()), Nlink: 1, Atim: Epoch + p.Now(), Mtim: Epoch + p.Now(), Ctim: Epoch + p.Now()})
}

func fdFilestatSetSize(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind == kindDir {
		return errno.EISDIR
	}
	if e.kind != kindFile || !e.write {
		return errno.EINVAL
	}
	return e.h.Truncate(int64(s[1]))
}

func fdFilestatSetTimes(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind != kindFile && e.kind != kindDir {
		return errno.EINVAL
	}
	if e.readonly {
		return errno.EROFS
	}
	return e.h.SetTimes(int64(s[1]), int64(s[2]), disk.TimeFlags(s[3]))
}

func fdPrestatGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.preopen == "" {
		return errno.EBADF
	}
	var b [8]byte
	le.PutUint32(b[4:], uint32(len(e.preopen)))
	if !m.Memory().Write(uint32(s[1]), b[:]) {
		return errno.EFAULT
	}
	return 0
}

func fdPrestatDirName(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil || e.preopen == "" {
		return errno.EBADF
	}
	if uint32(s[2]) < uint32(len(e.preopen)) {
		return errno.ENAMETOOLONG
	}
	if !m.Memory().WriteString(uint32(s[1]), e.preopen) {
		return errno.EFAULT
	}
	return 0
}

// ---- reading and writing ----

func fdRead(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return readv(ctx, m, uint32(s[0]), uint32(s[1]), uint32(s[2]), -1, uint32(s[3]))
}

func fdPread(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	if int64(s[3]) < 0 {
		return errno.EINVAL // an offset of 2^63 or more is negative, as pread(2) sees it
	}
	return readv(ctx, m, uint32(s[0]), uint32(s[1]), uint32(s[2]), int64(s[3]), uint32(s[4]))
}

func readv(ctx context.Context, m api.Module, fd, iovs, niovs uint32, at int64, nPtr uint32) errno.Errno {
	p := proc(ctx)
	e := p.fd(fd)
	if e == nil || !e.read {
		return errno.EBADF
	}
	bufs, en := writeIovecs(m, iovs, niovs)
	if en != 0 {
		return en
	}
	total := 0
	switch e.kind {
	case kindStdin:
		// stdin is empty: EOF.
	case kindDir:
		return errno.EISDIR
	case kindFile:
		off := e.off
		if at >= 0 {
			off = at
		}
		var en errno.Errno
		total, en = transfer(bufs, func(b []byte) (int, errno.Errno) {
			n, en := e.h.ReadAt(b, off)
			off += int64(n)
			return n, en
		})
		if en != 0 {
			return en
		}
		if at < 0 {
			e.off = off
		}
	case kindConn:
		if at >= 0 {
			return errno.ESPIPE
		}
		var en errno.Errno
		if total, en = transfer(bufs, e.conn.Read); en != 0 {
			return en
		}
	case kindUDP:
		// One datagram, spread over the iovecs; 0 bytes is an empty datagram.
		if at >= 0 {
			return errno.ESPIPE
		}
		var en errno.Errno
		if total, en = udpRead(e, bufs); en != 0 {
			return en
		}
	default:
		return errno.EBADF
	}
	if !m.Memory().WriteUint32Le(nPtr, uint32(total)) {
		return errno.EFAULT
	}
	return 0
}

// transfer moves bytes to or from each buffer of an iovec array in turn, as
// readv and writev do: it stops at the first short transfer, and an error
// counts only when nothing was transferred before it.
func transfer(bufs [][]byte, op func([]byte) (int, errno.Errno)) (int, errno.Errno) {
	total := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		n, en := op(b)
		total += n
		if en != 0 {
			if total == 0 {
				return 0, en
			}
			break
		}
		if n < len(b) {
			break
		}
	}
	return total, 0
}

func fdWrite(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	return writev(ctx, m, uint32(s[0]), uint32(s[1]), uint32(s[2]), -1, uint32(s[3]))
}

func fdPwrite(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	if int64(s[3]) < 0 {
		return errno.EINVAL
	}
	return writev(ctx, m, uint32(s[0]), uint32(s[1]), uint32(s[2]), int64(s[3]), uint32(s[4]))
}

func writev(ctx context.Context, m api.Module, fd, iovs, niovs uint32, at int64, nPtr uint32) errno.Errno {
	p := proc(ctx)
	e := p.fd(fd)
	if e == nil || !e.write {
		return errno.EBADF
	}
	bufs, en := readIovecs(m, iovs, niovs)
	if en != 0 {
		return en
	}
	total := 0
	switch e.kind {
	case kindStdout, kindStderr:
		if at >= 0 {
			return errno.ESPIPE
		}
		for _, b := range bufs {
			p.writeOutput(int(e.kind-kindStdin), b)
			total += len(b)
		}
	case kindFile:
		off := e.off
		if at >= 0 {
			off = at
		} else if e.append {
			off = e.h.Size()
		}
		var en errno.Errno
		total, en = transfer(bufs, func(b []byte) (int, errno.Errno) {
			n, en := e.h.WriteAt(b, off)
			off += int64(n)
			return n, en
		})
		if en != 0 {
			return en
		}
		if at < 0 {
			e.off = off
		}
		// O_SYNC: the write returns once it is durable, and reports the
		// fsync's error (EIO) as its own, as Linux does.
		if e.sync && total > 0 {
			if en := e.h.SyncAs(disk.SyncWrite); en != 0 {
				return en
			}
		}
	case kindConn:
		if at >= 0 {
			return errno.ESPIPE
		}
		var en errno.Errno
		if total, en = transfer(bufs, e.conn.Write); en != 0 {
			return en
		}
	case kindUDP:
		// The iovecs joined make one datagram to the connected peer.
		if at >= 0 {
			return errno.ESPIPE
		}
		var en errno.Errno
		if total, en = e.udp.Send(joinDatagram(bufs)); en != 0 {
			return en
		}
	default:
		return errno.EBADF
	}
	if !m.Memory().WriteUint32Le(nPtr, uint32(total)) {
		return errno.EFAULT
	}
	return 0
}

func fdSeek(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	off, whence := int64(s[1]), uint32(s[2])
	switch e.kind {
	case kindFile:
	case kindDir:
		// Rewinding a directory restarts its listing.
		if off == 0 && whence == 0 {
			e.dirents = nil
			return writeU64(m, uint32(s[3]), 0)
		}
		return errno.EINVAL
	default:
		return errno.ESPIPE
	}
	var base int64
	switch whence {
	case 0:
	case 1:
		base = e.off
	case 2:
		base = e.h.Size()
	default:
		return errno.EINVAL
	}
	if base+off < 0 {
		return errno.EINVAL
	}
	e.off = base + off
	return writeU64(m, uint32(s[3]), uint64(e.off))
}

func fdTell(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	e := proc(ctx).fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind != kindFile {
		return errno.ESPIPE
	}
	return writeU64(m, uint32(s[1]), uint64(e.off))
}

func writeU64(m api.Module, ptr uint32, v uint64) errno.Errno {
	if !m.Memory().WriteUint64Le(ptr, v) {
		return errno.EFAULT
	}
	return 0
}

func fdReaddir(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	e := p.fd(uint32(s[0]))
	if e == nil {
		return errno.EBADF
	}
	if e.kind != kindDir {
		return errno.ENOTDIR
	}
	buf, bufLen, cookie, nPtr := uint32(s[1]), uint32(s[2]), s[3], uint32(s[4])
	if cookie == 0 || e.dirents == nil {
		ents, en := e.h.Readdir()
		if en != 0 {
			return en
		}
		if p.Etc != nil && p.isDiskRoot(e) {
			ents = withEntry(ents, disk.Dirent{Name: etcMount, Ino: p.Etc.Root().Ino(), Type: disk.TypeDirectory})
		}
		e.dirents = ents
	}
	if cookie > uint64(len(e.dirents)) {
		return errno.EINVAL
	}
	// The entries go straight into the guest's buffer, which is checked
	// whole first, as getdents(2) does: however large it is, the host
	// copies only the entries that fit.
	mem := m.Memory()
	out, ok := mem.Read(buf, bufLen)
	if !ok {
		return errno.EFAULT
	}
	n := 0
	for i := cookie; i < uint64(len(e.dirents)) && n < len(out); i++ {
		d := e.dirents[i]
		var hdr [24]byte
		le.PutUint64(hdr[0:], i+1)
		le.PutUint64(hdr[8:], d.Ino)
		le.PutUint32(hdr[16:], uint32(len(d.Name)))
		hdr[20] = uint8(d.Type)
		n += copy(out[n:], hdr[:])
		n += copy(out[n:], d.Name) // WASI: a full buffer means "call again"
	}
	if !mem.WriteUint32Le(nPtr, uint32(n)) {
		return errno.EFAULT
	}
	return 0
}

// withEntry adds d to a sorted listing, unless the name is already there.
func withEntry(ents []disk.Dirent, d disk.Dirent) []disk.Dirent {
	i := sort.Search(len(ents), func(i int) bool { return ents[i].Name >= d.Name })
	if i < len(ents) && ents[i].Name == d.Name {
		return ents
	}
	return slices.Insert(ents, i, d)
}

// ---- paths ----

// dirAt returns the directory entry a path call is relative to and the path.
// A path into the mounted /etc comes back relative to the /etc disk.
func dirAt(ctx context.Context, m api.Module, fd, ptr, n uint64) (*fdEntry, string, errno.Errno) {
	p := proc(ctx)
	e := p.fd(uint32(fd))
	if e == nil {
		return nil, "", errno.EBADF
	}
	if e.kind != kindDir {
		return nil, "", errno.ENOTDIR
	}
	path, en := readPath(m, ptr, n)
	if en != 0 {
		return nil, "", en
	}
	e, path = p.mount(e, path)
	return e, path, 0
}

// writableDirAt is dirAt for calls that change the file system: the
// read-only /etc refuses them.
func writableDirAt(ctx context.Context, m api.Module, fd, ptr, n uint64) (*fdEntry, string, errno.Errno) {
	e, path, en := dirAt(ctx, m, fd, ptr, n)
	if en == 0 && e.readonly {
		en = errno.EROFS
	}
	return e, path, en
}

func pathOpen(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	p := proc(ctx)
	dir, path, en := dirAt(ctx, m, s[0], s[2], s[3])
	if en != 0 {
		return en
	}
	lookup, oflags, rights, fdflags, fdPtr := uint32(s[1]), uint16(s[4]), s[5], uint16(s[7]), uint32(s[8])
	var fl disk.OpenFlags
	for _, f := range []struct {
		on bool
		fl disk.OpenFlags
	}{
		{oflags&oflagCreat != 0, disk.Create},
		{oflags&oflagExcl != 0, disk.Excl},
		{oflags&oflagTrunc != 0, disk.Trunc},
		{oflags&oflagDirectory != 0, disk.Directory},
		{rights&rightFdRead != 0, disk.Read},
		{rights&rightFdWrite != 0, disk.Write},
	} {
		if f.on {
			fl |= f.fl
		}
	}
	canWrite := fl&disk.Write != 0
	if dir.readonly && fl&(disk.Create|disk.Trunc|disk.Write) != 0 {
		return errno.EROFS
	}
	h, en := dir.d.Open(dir.h, path, lookup&lookupFollow != 0, fl)
	if en != 0 {
		return en
	}
	e := &fdEntry{d: dir.d, h: h, readonly: dir.readonly, read: fl&disk.Read != 0 || !canWrite, write: canWrite,
		append: fdflags&fdflagAppend != 0, nonblock: fdflags&fdflagNonblock != 0,
		sync: fdflags&(fdflagSync|fdflagDsync) != 0}
	if h.IsDir() {
		e.kind, e.write = kindDir, false
		e.read = true
	} else {
		e.kind = kindFile
	}
	fd := p.alloc(e)
	if !m.Memory().WriteUint32Le(fdPtr, fd) {
		return errno.EFAULT
	}
	return 0
}

func pathFilestatGet(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := dirAt(ctx, m, s[0], s[2], s[3])
	if en != 0 {
		return en
	}
	st, en := dir.d.Stat(dir.h, path, uint32(s[1])&lookupFollow != 0)
	if en != 0 {
		return en
	}
	return writeFilestat(m, uint32(s[4]), proc(ctx).dev(dir.d), st)
}

func pathFilestatSetTimes(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := writableDirAt(ctx, m, s[0], s[2], s[3])
	if en != 0 {
		return en
	}
	return dir.d.SetTimes(dir.h, path, uint32(s[1])&lookupFollow != 0, int64(s[4]), int64(s[5]), disk.TimeFlags(s[6]))
}

func pathCreateDirectory(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := writableDirAt(ctx, m, s[0], s[1], s[2])
	if en != 0 {
		return en
	}
	return dir.d.Mkdir(dir.h, path)
}

func pathRemoveDirectory(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := writableDirAt(ctx, m, s[0], s[1], s[2])
	if en != 0 {
		return en
	}
	return dir.d.Rmdir(dir.h, path)
}

func pathUnlinkFile(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := writableDirAt(ctx, m, s[0], s[1], s[2])
	if en != 0 {
		return en
	}
	return dir.d.Unlink(dir.h, path)
}

func pathReadlink(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	dir, path, en := dirAt(ctx, m, s[0], s[1], s[2])
	if en != 0 {
		return en
	}
	target, en := dir.d.Readlink(dir.h, path)
	if en != 0 {
		return en
	}
	buf, bufLen, nPtr := uint32(s[3]), uint32(s[4]), uint32(s[5])
	if uint32(len(target)) > bufLen {
		target = target[:bufLen] // readlink truncates
	}
	if !m.Memory().WriteString(buf, target) || !m.Memory().WriteUint32Le(nPtr, uint32(len(target))) {
		return errno.EFAULT
	}
	return 0
}

func pathSymlink(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	target, en := readPath(m, s[0], s[1])
	if en != 0 {
		return en
	}
	dir, path, en := writableDirAt(ctx, m, s[2], s[3], s[4])
	if en != 0 {
		return en
	}
	return dir.d.Symlink(target, dir.h, path)
}

func pathRename(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	odir, old, en := dirAt(ctx, m, s[0], s[1], s[2])
	if en != 0 {
		return en
	}
	ndir, nw, en := dirAt(ctx, m, s[3], s[4], s[5])
	if en != 0 {
		return en
	}
	if odir.d != ndir.d {
		return errno.EXDEV
	}
	if odir.readonly {
		return errno.EROFS
	}
	return odir.d.Rename(odir.h, old, ndir.h, nw)
}

func pathLink(ctx context.Context, m api.Module, s []uint64) errno.Errno {
	odir, old, en := dirAt(ctx, m, s[0], s[2], s[3])
	if en != 0 {
		return en
	}
	ndir, nw, en := dirAt(ctx, m, s[4], s[5], s[6])
	if en != 0 {
		return en
	}
	if odir.d != ndir.d {
		return errno.EXDEV
	}
	if odir.readonly {
		return errno.EROFS
	}
	return odir.d.Link(odir.h, old, uint32(s[1])&lookupFollow != 0, ndir.h, nw)
}
