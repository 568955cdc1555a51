package disk

import (
	"testing"

	"github.com/seedfall/seedfall/engine/errno"
)

// MkdirAll's directories are there from the start: a crash keeps them even
// under strict dirs, where nothing was fsynced.
func TestMkdirAllIsDurable(t *testing.T) {
	for _, strict := range []bool{false, true} {
		d := newDisk(strict)
		seed(t, d, "f", "x")
		for _, p := range []string{"tmp", "/var/lib/app/", "var/lib/app"} {
			if err := d.MkdirAll(p); err != nil {
				t.Fatalf("MkdirAll(%q): %v", p, err)
			}
		}
		create(t, d, "tmp/scratch", "lost")
		d.Crash()
		// The unsynced file's data is lost; its entry too under strict dirs.
		want := lines("f=x", "tmp/", "tmp/scratch=", "var/", "var/lib/", "var/lib/app/")
		if strict {
			want = lines("f=x", "tmp/", "var/", "var/lib/", "var/lib/app/")
		}
		if got := tree(d); got != want {
			t.Errorf("strict=%v: after a crash:\n%s\nwant:\n%s", strict, got, want)
		}
		if st, e := d.Stat(d.Root(), "var/lib", false); e != 0 || st.Nlink != 3 {
			t.Errorf("strict=%v: var/lib nlink = %d %v, want 3", strict, st.Nlink, e)
		}
	}
}

func TestMkdirAllErrors(t *testing.T) {
	d := newDisk(false)
	seed(t, d, "f", "x")
	for _, c := range []struct {
		path string
		want errno.Errno
		msg  string
	}{
		{"f", errno.ENOTDIR, "simulated disk: mkdir f: a path element is not a directory (ENOTDIR)"},
		{"f/x", errno.ENOTDIR, "simulated disk: mkdir f/x: a path element is not a directory (ENOTDIR)"},
	} {
		err := d.MkdirAll(c.path)
		pe, isPE := err.(*PathError)
		if !isPE || pe.Err != c.want || err.Error() != c.msg {
			t.Errorf("MkdirAll(%q) = %v, want %q", c.path, err, c.msg)
		}
	}
}
