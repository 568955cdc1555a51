// Package fsutil writes seedfall's artifacts (schedules, reports, history
// pages, saved worlds and scripts) so that a reader, or a seedfall that was
// killed half-way, never sees a file half written: the bytes go to a
// temporary file beside the target, are synced, and are renamed over it.
package fsutil

import (
	"os"
	"path/filepath"
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
