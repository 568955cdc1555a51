package compat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The ristretto and badger shims fit every version they list, as found in
// the module cache (versions not downloaded are skipped): the shapes they
// check are there, and the files they write are what the shims promise.
func TestBadgerShimsFitTheirVersions(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("no go command:", err)
	}
	cache := strings.TrimSpace(string(out))
	for _, s := range Shims() {
		if s.Module != "github.com/dgraph-io/ristretto/v2" && s.Module != "github.com/dgraph-io/badger/v4" {
			continue
		}
		found := 0
		for _, v := range s.Versions {
			dir := filepath.Join(cache, s.Module+"@"+v)
			if _, err := os.Stat(dir); err != nil {
				continue
			}
			found++
			files, err := s.Files(Module{Path: s.Module, Version: v, Dir: dir})
			if err != nil {
				t.Errorf("%s %s: %v", s.Module, v, err)
				continue
			}
			switch s.Module {
			case "github.com/dgraph-io/ristretto/v2":
				if got := string(files["z/mmap_wasip1.go"]); !strings.Contains(got, "syscall.Mmap(int(fd.Fd()), 0, int(size), prot, syscall.MAP_SHARED)") || len(files) != 1 {
					t.Errorf("%s %s: files %v", s.Module, v, keys(files))
				}
			default:
				other := string(files["dir_other.go"])
				if !strings.Contains(other, "seedfallLockDir(f, readOnly)") || strings.Contains(other, "NOTE: Here is where") {
					t.Errorf("%s %s: dir_other.go:\n%s", s.Module, v, other)
				}
				if files["seedfall_flock_wasip1.go"] == nil || files["y/seedfall_dsync_wasip1.go"] == nil {
					t.Errorf("%s %s: files %v", s.Module, v, keys(files))
				}
			}
		}
		t.Logf("%s: %d of %d versions in the module cache checked", s.Module, found, len(s.Versions))
	}
}

// A z/mmap_wasip1.go that is not the ENOSYS stub the shim replaces is
// refused, with what differs.
func TestRistrettoShapeChecked(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "z", "mmap_wasip1.go"), "//go:build wasip1\n\npackage z\n\nimport \"os\"\n\nfunc mmap(fd *os.File, writeable bool, size int64) ([]byte, error) { return nil, nil }\n")
	_, err := ristrettoFiles(Module{Path: "github.com/dgraph-io/ristretto/v2", Version: "v2.9.9", Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "z/mmap_wasip1.go declares") {
		t.Errorf("err = %v", err)
	}
}

func keys(m map[string][]byte) []string { return sortedKeys(m) }
