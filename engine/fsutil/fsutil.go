// Package fsutil writes seedfall's artifacts (schedules, reports, history
// pages, saved worlds and scripts) so that a reader, or a seedfall that was
// killed half-way, never sees a file half written: the bytes go to a
// temporary file beside the target, are synced, and are renamed over it.
package fsutil

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// WriteFile writes data to path atomically, with perm, creating nothing but
// the file itself (its directory must exist). On error the target is
// untouched and the temporary file is removed.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// ModuleOf finds the Go module that holds dir: its root and its path
// (both "" when there is none).
func ModuleOf(dir string) (root, modPath string) {
	for d := dir; ; {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
			for line := range strings.SplitSeq(string(b), "\n") {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && rest != strings.TrimLeft(rest, " \t") {
					p := strings.TrimSpace(rest)
					if i := strings.Index(p, "//"); i >= 0 {
						p = strings.TrimSpace(p[:i])
					}
					if u, err := strconv.Unquote(p); err == nil {
						p = u
					}
					return d, p
				}
			}
			return "", ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", ""
		}
		d = parent
	}
}
