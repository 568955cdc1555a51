package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Guest output printed to a terminal cannot clear the screen or set its
// title: control characters other than newline and tab come out visible.
func TestVisibleControls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	v := visibleControls{f}
	in := "     0.1 server#1 | \x1b[2J\x1b]0;owned\x07 done\r\n\tplain line\n"
	n, err := v.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d", n, err, len(in))
	}
	v.Write([]byte("clean\n"))
	f.Close()
	got, _ := os.ReadFile(path)
	want := "     0.1 server#1 | \\x1b[2J\\x1b]0;owned\\x07 done\\x0d\n\tplain line\nclean\n"
	if string(got) != want {
		t.Errorf("terminal shows %q, want %q", got, want)
	}
	if isTerminal(v) {
		t.Errorf("a file wrapped for the terminal counts as a terminal")
	}
}
