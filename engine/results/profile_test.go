package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadProfiles merges profiles and the coverage.out of results
// directories, and says what is wrong where.
func TestReadProfiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.out", "mode: set\nx.com/a.go:1.1,2.1 1 0\nx.com/a.go:3.1,4.1 1 1\n")
	// A results directory whose sweep kept its coverage.
	meta := &Meta{World: WorldIdentity{Name: "w", Hash: "h"}, Seeds: "1-2", Total: 2, Count: 2}
	w, err := Create(filepath.Join(dir, "res"), meta)
	if err != nil {
		t.Fatal(err)
	}
	w.WriteFile(ProfileFile, []byte("mode: set\nx.com/a.go:1.1,2.1 1 1\n"))
	if err := w.Finish(nil); err != nil {
		t.Fatal(err)
	}
	p, err := ReadProfiles([]string{a, filepath.Join(dir, "res")})
	if err != nil {
		t.Fatal(err)
	}
	if hit, all := p.Stmts(); hit != 2 || all != 2 {
		t.Errorf("merged: %d of %d statements reached, want 2 of 2", hit, all)
	}

	bad := write("bad.out", "mode: set\nx.com/a.go:1.1,2.1 1 1\nx.com/a.go 1 1\n")
	if _, err := ReadProfiles([]string{a, bad}); err == nil || !strings.HasSuffix(err.Error(), "bad.out:3: no file name in \"x.com/a.go 1 1\"; a line is file.go:line.col,line.col statements count") {
		t.Errorf("a damaged profile: %v", err)
	}
	// A results directory of a sweep with coverage off.
	if wo, err := Create(filepath.Join(dir, "off"), meta); err != nil {
		t.Fatal(err)
	} else if err := wo.Finish(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadProfiles([]string{filepath.Join(dir, "off")}); err == nil || !strings.Contains(err.Error(), "has no coverage.out: its seeds ran with coverage off; run them again with -set coverage=true") {
		t.Errorf("a results directory without coverage: %v", err)
	}
}
