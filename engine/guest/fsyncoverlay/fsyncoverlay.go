// Package fsyncoverlay owns the guest side of fsyncs that park only their
// goroutine: the `go build -overlay` files that make os.File.Sync (through
// internal/poll's FD.Fsync) of a GOOS=wasip1 guest start the fsync on the
// host and wait for its completion through the runtime's netpoll, as a
// socket read waits for data. The node's other goroutines run meanwhile,
// as they do on Linux, where an fsync blocks one thread.
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
// fsync_finish(op) -> errno
//
//	EAGAIN while the fsync is in flight; then its result, the data it
//	covers durable from that moment, and op is closed.
//
// The fsync covers what was written before fsync_start; writes that arrive
// while it is in flight stay in the page cache (engine/disk SyncTo).
// syscall.Fsync called directly, and prebuilt modules, still wait in
// fd_sync, which holds up the whole node.
package fsyncoverlay

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PatchedFile is the GOROOT-relative file whose FD.Fsync the overlay hooks.
const PatchedFile = "src/internal/poll/fd_fsync_posix.go"

// NewFile is the GOROOT-relative file the overlay adds.
const NewFile = "src/internal/poll/fd_fsync_seedfall_wasip1.go"

// anchor is the line of FD.Fsync after which the hook goes.
const anchor = "defer fd.decref()"

const hook = `	if done, err := seedfallFsync(fd.Sysfd); done {
		return err
	}
`

//go:embed fsync_seedfall_wasip1.go.in
var newFile []byte

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
		return nil, fmt.Errorf("fsync overlay: %s: the line `%s` does not appear exactly once; this Go release changed FD.Fsync", PatchedFile, anchor)
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		if i == at {
			b.WriteString(hook)
		}
	}
	return map[string][]byte{PatchedFile: []byte(b.String()), NewFile: bytes.Clone(newFile)}, nil
}
