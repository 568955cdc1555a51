package wasi

import (
	"strconv"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/api"

	"github.com/seedfall/seedfall/engine/errno"
)

// Limits on what one host call may ask of the host (docs/limits.md). A
// guest chooses every count, length and offset it passes; the host checks
// them in 64-bit arithmetic against the guest's memory before it allocates
// anything, so that no call can make the host allocate more than the
// guest's own memory could hold, or panic.
const (
	// IovMax is the most iovecs one fd_read, fd_pread, fd_write or
	// fd_pwrite takes (Linux's IOV_MAX); more is EINVAL.
	IovMax = 1024
	// MaxRW is the most bytes one read or write call moves (Linux's
	// MAX_RW_COUNT); the iovecs past it are ignored, so the call returns a
	// short count, as on Linux.
	MaxRW = 0x7ffff000
	// MaxPayload is the most bytes the host keeps of one text a guest
	// hands it: an assertion's message, site and details, an Antithesis
	// event's name and details, a buggify site, a history field. A longer
	// text is cut to at most this many bytes and "…(cut, N bytes)"
	// appended, N being the bytes left out.
	MaxPayload = 64 << 10
	// MaxFields is the most netstring fields one history record
	// (op_invoke, op_return) holds; a record with more is malformed and
	// recorded as nothing, as other malformed records are.
	MaxFields = 64
	// MaxLine is the longest stdout or stderr line the host keeps: a
	// longer line reaches the run's output once, cut to at most MaxLine
	// bytes and "…(cut, N bytes)" appended, N being the bytes left out,
	// counted as they pass without being kept.
	MaxLine = 1 << 20
	// pathMax is the longest path (and symlink target) a path call takes,
	// Linux's PATH_MAX counting the NUL: pathMax bytes or more is
	// ENAMETOOLONG, as the simulated disk says for any such path.
	pathMax = 4096
)

// span reports whether [ptr, ptr+n) lies inside mem, in arithmetic that
// cannot overflow.
func span(mem api.Memory, ptr uint32, n uint64) bool {
	return uint64(ptr)+n <= uint64(mem.Size())
}

// fits reports whether count elements of size bytes could be in mem at all.
func fits(mem api.Memory, count uint32, size uint64) bool {
	return uint64(count)*size <= uint64(mem.Size())
}

// cut returns b as a string of at most MaxPayload bytes plus, when it was
// longer, the marker "…(cut, N bytes)". It cuts at a UTF-8 rune start when
// one is near, so that the kept text stays readable.
func cut(b []byte) string {
	if len(b) <= MaxPayload {
		return string(b)
	}
	return cutTo(b, MaxPayload, 0)
}

// cutTo returns the first limit bytes of b or a little fewer, back to a
// UTF-8 rune start when one is near, followed by "…(cut, N bytes)": N is
// the bytes of b left out plus more, bytes that were left out before they
// reached b. b must be longer than limit: its byte at limit tells whether
// the cut falls at a rune start.
func cutTo(b []byte, limit, more int) string {
	keep := limit
	for k := limit; k > limit-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			keep = k
			break
		}
	}
	return string(b[:keep]) + "…(cut, " + strconv.Itoa(len(b)-keep+more) + " bytes)"
}

// readText reads a guest text of n bytes at ptr, cut to MaxPayload; false
// when it is not inside the guest's memory.
func readText(mem api.Memory, ptr, n uint32) (string, bool) {
	b, ok := mem.Read(ptr, n)
	if !ok {
		return "", false
	}
	return cut(b), true
}

// readPath reads a path argument: EFAULT outside memory, ENAMETOOLONG at
// pathMax bytes or more (before any copy is made).
func readPath(m api.Module, ptr, n uint64) (string, errno.Errno) {
	b, ok := m.Memory().Read(uint32(ptr), uint32(n))
	if !ok {
		return "", errno.EFAULT
	}
	if len(b) >= pathMax {
		return "", errno.ENAMETOOLONG
	}
	return string(b), 0
}
