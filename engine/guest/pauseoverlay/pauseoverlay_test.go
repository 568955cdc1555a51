package pauseoverlay

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func goroot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestFilesOnThisGoroot(t *testing.T) {
	root := goroot(t)
	for _, idle := range []bool{false, true} {
		files, err := Files(root, Options{Idle: idle})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(files[NewFile], newFile) {
			t.Errorf("%s is not the embedded file", NewFile)
		}
		if !bytes.Equal(files[PollFile], pollFile) {
			t.Errorf("%s is not the embedded file", PollFile)
		}
		want := 3 // the two new files and proc.go
		if idle {
			want = 4
		}
		if len(files) != want {
			t.Errorf("Idle %v: %d files, want %d", idle, len(files), want)
		}
		for _, h := range hooks {
			got, ok := files[h.file]
			if h.idle && !idle {
				if ok {
					t.Errorf("without Idle the overlay patches %s", h.file)
				}
				continue
			}
			orig, err := os.ReadFile(filepath.Join(root, h.file))
			if err != nil {
				t.Fatal(err)
			}
			// The hook sits right after its anchor, once, and nothing else changed.
			joined := h.anchor + "\n" + h.insert
			if n := strings.Count(string(got), joined); n != 1 {
				t.Errorf("%s: hook after %q found %d times, want 1", h.file, h.anchor, n)
			}
			// Without every hook of the file, it is the original.
			for _, o := range hooks {
				if o.file == h.file && (idle || !o.idle) {
					got = []byte(strings.Replace(string(got), o.anchor+"\n"+o.insert, o.anchor+"\n", 1))
				}
			}
			if string(got) != string(orig) {
				t.Errorf("%s: the patch changed more than the hooks", h.file)
			}
		}
	}
}

func TestFilesErrors(t *testing.T) {
	real := goroot(t)
	fake := func(t *testing.T, edit func(src string) string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "VERSION"), []byte("go1.99\ntime x\n"), 0o644)
		for _, h := range hooks {
			src, err := os.ReadFile(filepath.Join(real, h.file))
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(h.file))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(edit(string(src))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name string
		edit func(string) string
		want string
	}{
		{"anchor gone", func(s string) string { return strings.ReplaceAll(s, "clear(evts)", "evts = evts[:0]") },
			"go1.99: src/runtime/netpoll_wasip1.go: the line `clear(evts)` appears 0 times, want exactly once; the overlay was made for go1.26"},
		{"anchor twice", func(s string) string { return strings.ReplaceAll(s, "clear(evts)", "clear(evts)\n\tclear(evts)") },
			"the line `clear(evts)` appears 2 times"},
		{"patched GOROOT", func(s string) string { return s + "\n// seedfall\n" },
			"is already patched by seedfall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Files(fake(t, tc.edit), Options{Idle: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
	if _, err := Files(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "cannot read src/runtime/proc.go") {
		t.Fatalf("an empty GOROOT: err = %v", err)
	}
}
