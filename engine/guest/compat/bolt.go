package compat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// Bolt: go.etcd.io/bbolt and its ancestor github.com/boltdb/bolt keep their
// size limits in one file per GOARCH and have none for wasm. The shim adds
// bolt_wasm.go, the amd64 file with the map size cut to what wasm32 memory
// can hold (Go's int and pointers are 64 bits wide on wasm, as on amd64).
// Mmap, Flock and Madvise come from the generic shim; boltdb/bolt calls
// madvise through syscall.Syscall, which wasip1 lacks, so its madvise
// becomes the generic shim's.
func init() {
	register(&Shim{
		Module:   "go.etcd.io/bbolt",
		Versions: []string{"v1.3.5", "v1.3.6", "v1.3.7", "v1.3.8", "v1.3.9", "v1.3.10", "v1.3.11", "v1.4.0", "v1.4.1", "v1.4.2", "v1.4.3", "v1.5.0"},
		What:     "bolt_wasm.go size limits (MaxMapSize 2 GiB)",
		Files:    boltFiles,
	})
	register(&Shim{
		Module:   "github.com/boltdb/bolt",
		Versions: []string{"v1.3.1"},
		What:     "bolt_wasm.go size limits (maxMapSize 2 GiB); madvise through the generic shim",
		Files:    boltFiles,
	})
}

const boltBigMap = "0xFFFFFFFFFFFF // 256TB"

func boltFiles(m Module) (map[string][]byte, error) {
	out := map[string][]byte{}
	found := false
	for _, dir := range []string{"internal/common", "."} {
		src, err := os.ReadFile(filepath.Join(m.Dir, dir, "bolt_amd64.go"))
		if err != nil {
			continue
		}
		if bytes.Count(src, []byte(boltBigMap)) != 1 {
			return nil, fmt.Errorf("%s/bolt_amd64.go does not set the map size as the shim expects", dir)
		}
		src = bytes.Replace(src, []byte(boltBigMap), []byte("0x7FFFFFFF // 2 GiB: what wasm32 memory can hold (seedfall compat_overlay)"), 1)
		out[filepath.ToSlash(filepath.Join(dir, "bolt_wasm.go"))] = src
		found = true
		break
	}
	if !found {
		return nil, fmt.Errorf("no bolt_amd64.go to derive bolt_wasm.go from")
	}
	unix, err := os.ReadFile(filepath.Join(m.Dir, "bolt_unix.go"))
	if err != nil {
		return nil, err
	}
	const raw = "_, _, e1 := syscall.Syscall(syscall.SYS_MADVISE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(advice))\n\tif e1 != 0 {\n\t\terr = e1\n\t}\n\treturn"
	if bytes.Contains(unix, []byte(raw)) {
		unix = bytes.Replace(unix, []byte(raw), []byte("_ = unsafe.Pointer(nil) // the import stays used\n\treturn syscall.Madvise(b, advice) // seedfall compat_overlay"), 1)
		out["bolt_unix.go"] = unix
	}
	return out, nil
}
