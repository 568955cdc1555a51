package pauseoverlay

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	for _, opts := range []Options{{}, {Idle: true}, {Cover: true}, {Idle: true, Cover: true}} {
		files, err := Files(root, opts)
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
		if opts.Idle {
			want++ // netpoll_wasip1.go
		}
		if opts.Cover {
			want += 2 // cover_seedfall_wasip1.go and cfile/hooks.go
			if !bytes.Equal(files[CoverFile], coverFile) {
				t.Errorf("%s is not the embedded file", CoverFile)
			}
		}
		if len(files) != want {
			t.Errorf("%+v: %d files, want %d", opts, len(files), want)
		}
		on := func(h hook) bool { return (opts.Idle || !h.idle) && (opts.Cover || !h.cover) }
		for _, h := range hooks {
			got, ok := files[h.file]
			if !on(h) {
				if ok && !slices.ContainsFunc(hooks, func(o hook) bool { return o.file == h.file && on(o) }) {
					t.Errorf("%+v: the overlay patches %s", opts, h.file)
				}
				if strings.Contains(string(got), h.insert) {
					t.Errorf("%+v: %s has a hook it should not", opts, h.file)
				}
				continue
			}
			orig, err := os.ReadFile(filepath.Join(root, h.file))
			if err != nil {
				t.Fatal(err)
			}
			// The hook sits after its anchor (or the other hooks there), once,
			// and nothing else changed.
			if n := strings.Count(string(got), h.insert); n != 1 {
				t.Errorf("%s: hook %q found %d times, want 1", h.file, h.insert, n)
			}
			if i := strings.Index(string(got), h.insert); i < 0 || !strings.Contains(string(got[:i]), h.anchor) {
				t.Errorf("%s: hook %q is not after %q", h.file, h.insert, h.anchor)
			}
			// Without every hook of the file, it is the original.
			for _, o := range hooks {
				if o.file == h.file && on(o) {
					got = []byte(strings.Replace(string(got), o.insert, "", 1))
				}
			}
			if string(got) != string(orig) {
				t.Errorf("%+v: %s: the patch changed more than the hooks", opts, h.file)
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
