package guest

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// TestCheckCacheBusy: a build lock that a live process holds is a build in
// progress; once released it is nothing.
func TestCheckCacheBusy(t *testing.T) {
	if !fileLocks {
		t.Skip("no file locks here")
	}
	dir := t.TempDir()
	lock := filepath.Join(dir, locksDir, "build-ab")
	unlock, err := waitLock(context.Background(), lock)
	if err != nil {
		t.Fatal(err)
	}
	h, err := CheckCache(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.Busy, []string{lock}) {
		t.Errorf("held: Busy = %q, want %q", h.Busy, lock)
	}
	unlock()
	if h, err = CheckCache(dir, false); err != nil || len(h.Busy) != 0 {
		t.Errorf("released: Busy = %q, %v", h.Busy, err)
	}
}
