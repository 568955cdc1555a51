// Package fsyncoverlay owns the guest side of fsyncs that park only their
// goroutine: the `go build -overlay` files that make syscall.Fsync of a
// GOOS=wasip1 guest (the path os.File.Sync takes, through internal/poll's
// FD.Fsync, for files and directories) start the fsync on the host and wait
// for its completion through the runtime's netpoll, as a socket read waits
// for data. The node's other goroutines run meanwhile, as they do on Linux,
// where an fsync blocks one thread. compat_overlay's Fdatasync and Msync
// (engine/guest/compat) wait the same way.
//
// # Host ABI: module "seedfall"
//
// fsync_start(fd, op_out) -> errno
//
//	Start an fsync of fd (a file or a directory). When it finishes at once
//	(it takes no virtual time) the host writes 0xFFFFFFFF at op_out and
//	returns the fsync's result. Otherwise it writes a new descriptor, op,
//	which polls readable once the fsync's time has passed.
//
// fdatasync_start(fd, op_out) -> errno
//
//	fsync_start for fdatasync (which only seedfall mutate tells apart).
//
// msync_start(addr, length, flags, op_out) -> errno
//
//	msync (engine/guest/compat/doc.go) started the same way: the stores go
//	into the page cache at once; with MS_SYNC the op finishes when the
//	fsync of each mapped file has taken its time.
//
// fsync_finish(op) -> errno
//
//	EAGAIN while the call is in flight; then its result, the data it
//	covers durable from that moment, and op is closed.
//
// A call covers what was written before it started; writes that arrive
// while it is in flight stay in the page cache (engine/disk SyncTo).
// internal/poll's init hands syscall the way to park (package syscall
// cannot reach the netpoll itself); a call made before that, and every
// call of a prebuilt module, waits in fd_sync or msync, which holds up the
// whole node.
package fsyncoverlay

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PatchedFile is the GOROOT-relative file whose Fsync the overlay hooks.
const PatchedFile = "src/syscall/fs_wasip1.go"

// The GOROOT-relative files the overlay adds: the host calls and the wait,
// in package syscall; how to park, in internal/poll.
const (
	SyscallFile = "src/syscall/fsync_seedfall_wasip1.go"
	PollFile    = "src/internal/poll/fd_fsync_seedfall_wasip1.go"
)

// anchor is the line of syscall.Fsync after which the hook goes.
const anchor = "func Fsync(fd int) error {"

const hook = `	if done, err := seedfallParkedFsync(fd); done {
		return err
	}
`

var (
	//go:embed syscall_seedfall_wasip1.go.in
	syscallFile []byte
	//go:embed poll_seedfall_wasip1.go.in
	pollFile []byte
)

// Files returns the overlay, keyed by GOROOT-relative slash path, for the
// Go installation at goroot. It fails, naming the file, when the sources
// lack the line the hook goes after.
func Files(goroot string) (map[string][]byte, error) {
	src, err := os.ReadFile(filepath.Join(goroot, filepath.FromSlash(PatchedFile)))
	if err != nil {
		return nil, fmt.Errorf("fsync overlay: cannot read %s: %v (is %s a Go installation?)", PatchedFile, err, goroot)
	}
	if bytes.Contains(src, []byte("seedfall")) {
		return nil, fmt.Errorf("fsync overlay: %s is already patched by seedfall (the GOROOT itself was modified)", PatchedFile)
	}
	lines := strings.SplitAfter(string(src), "\n")
	at := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == anchor {
			if at >= 0 {
				at = -2
				break
			}
			at = i
		}
	}
	if at < 0 {
		return nil, fmt.Errorf("fsync overlay: %s: the line `%s` does not appear exactly once; this Go release changed syscall.Fsync", PatchedFile, anchor)
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == at {
			b.WriteString(hook)
		}
	}
	return map[string][]byte{PatchedFile: []byte(b.String()), SyscallFile: bytes.Clone(syscallFile), PollFile: bytes.Clone(pollFile)}, nil
}

// Sources is the text the overlay adds, for build cache keys of builds
// that take it through compat_overlay.
func Sources() []byte {
	return slices.Concat([]byte(anchor+hook), syscallFile, pollFile)
}
