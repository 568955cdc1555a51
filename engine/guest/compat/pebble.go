package compat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Pebble: github.com/cockroachdb/pebble has no GOOS=wasip1 files in vfs and
// no GOARCH=wasm size in internal/rawalloc and internal/manual, so it does not compile there
// (undefined maxArrayLen, MaxArrayLen, defFS, wrapOSFileImpl, errNotEmpty, and
// defaultFS without GetDiskUsage). The shim adds them, each file written
// after its Linux or Unix twin (shims/pebble/*.go.in says how each one
// differs):
//
//	internal/manual/manual_wasm.go      new: MaxArrayLen for 32-bit memory
//	internal/rawalloc/rawalloc_wasm.go  new: maxArrayLen for 32-bit memory
//	vfs/default_wasip1.go               new: vfs.File over os.File; SyncData is
//	                                    fsync, SyncTo (sync_file_range) and
//	                                    Preallocate are no-ops; OpenDir for
//	                                    directory fsync
//	vfs/disk_usage_wasip1.go            new: GetDiskUsage on a nominal 1 TiB disk
//	vfs/errors_wasip1.go                new: errNotEmpty, IsNoSpaceError
//	vfs/file_lock_wasip1.go             new: Lock through the generic Flock
//	vfs/file_lock_generic.go            its build constraint gains !wasip1
//
// The vfs, rawalloc and manual packages are the same in every v1.1 release but for
// comments and mem_fs.go, which the shim does not touch. pebble/v2 keeps
// the same files and names but for three changes: internal/manual no
// longer needs a size, File.Stat returns vfs.FileInfo, and vfs wants
// deviceIDFromFileInfo (default_wasip1.v2.go.in). Its dependency
// prometheus/procfs calls syscall.Statfs, which the generic shim declares
// (failing with ENOSYS).
func init() {
	register(&Shim{
		Module:   "github.com/cockroachdb/pebble",
		Versions: []string{"v1.1.0", "v1.1.1", "v1.1.2", "v1.1.3", "v1.1.4", "v1.1.5"},
		What:     "wasip1 vfs (fsync, flock, directory sync, nominal disk usage) and wasm rawalloc",
		Files:    func(m Module) (map[string][]byte, error) { return pebbleFiles(m, 1) },
	})
	register(&Shim{
		Module:   "github.com/cockroachdb/pebble/v2",
		Versions: []string{"v2.1.4", "v2.1.6", "v2.1.7"},
		What:     "wasip1 vfs (fsync, flock, directory sync, nominal disk usage, device ids) and wasm rawalloc",
		Files:    func(m Module) (map[string][]byte, error) { return pebbleFiles(m, 2) },
	})
}

// pebbleGeneric is the build constraint of vfs/file_lock_generic.go, which
// would otherwise be built for wasip1 (and does not compile anywhere).
const pebbleGeneric = "!darwin && !dragonfly && !freebsd && !linux && !netbsd && !openbsd && !solaris && !windows"

// pebbleFiles returns the shim's files for pebble of major version major.
func pebbleFiles(m Module, major int) (map[string][]byte, error) {
	out := map[string][]byte{
		"internal/rawalloc/rawalloc_wasm.go": Template("shims/pebble/rawalloc_wasm.go.in"),
		"vfs/disk_usage_wasip1.go":           Template("shims/pebble/disk_usage_wasip1.go.in"),
		"vfs/errors_wasip1.go":               Template("shims/pebble/errors_wasip1.go.in"),
		"vfs/file_lock_wasip1.go":            Template("shims/pebble/file_lock_wasip1.go.in"),
	}
	if major == 1 {
		out["internal/manual/manual_wasm.go"] = Template("shims/pebble/manual_wasm.go.in")
		out["vfs/default_wasip1.go"] = Template("shims/pebble/default_wasip1.go.in")
	} else {
		// v2's File.Stat returns its own FileInfo, which knows its device.
		out["vfs/default_wasip1.go"] = Template("shims/pebble/default_wasip1.v2.go.in")
	}
	for rel := range out {
		if _, err := os.Stat(filepath.Join(m.Dir, filepath.FromSlash(rel))); err == nil {
			return nil, fmt.Errorf("%s already exists: this version builds for wasip1 on its own", rel)
		}
	}
	const lock = "vfs/file_lock_generic.go"
	src, err := os.ReadFile(filepath.Join(m.Dir, filepath.FromSlash(lock)))
	if err != nil {
		return nil, err
	}
	if bytes.Count(src, []byte("//go:build "+pebbleGeneric+"\n")) != 1 {
		return nil, fmt.Errorf("%s does not have the build constraint the shim expects", lock)
	}
	src = bytes.Replace(src, []byte("//go:build "+pebbleGeneric+"\n"), []byte("//go:build "+pebbleGeneric+" && !wasip1\n"), 1)
	// The old form, when there is one, must say the same.
	src = bytes.Replace(src, []byte("// +build !darwin,!dragonfly,!freebsd,!linux,!netbsd,!openbsd,!solaris,!windows\n"),
		[]byte("// +build !darwin,!dragonfly,!freebsd,!linux,!netbsd,!openbsd,!solaris,!windows,!wasip1\n"), 1)
	out[lock] = src
	return out, nil
}
