package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"testing"
	"time"
)

// A stderr that is not a terminal hears about a slow step every
// progressEvery, a line each, and nothing once the step ends.
func TestLogProgress(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 20 * time.Millisecond
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&got, r); close(read) }()

	if startLogProgress(&bytes.Buffer{}) != nil {
		t.Errorf("a buffer (seedfall mcp's stderr) logs progress")
	}
	p := startLogProgress(w)
	if p == nil {
		t.Fatal("a pipe does not log progress")
	}
	p.build("building server (./server)")
	time.Sleep(70 * time.Millisecond)
	p.seeds(120, 500, 3)
	time.Sleep(70 * time.Millisecond)
	p.end()
	w.Close()
	<-read
	for _, re := range []string{
		`(?m)^seedfall: building server \(./server\) for wasip1\.\.\. \(0s\)$`,
		`(?m)^seedfall: 120/500 seeds, 3 failed \(0s\)$`,
	} {
		if !regexp.MustCompile(re).Match(got.Bytes()) {
			t.Errorf("no line matching %s in:\n%s", re, got.String())
		}
	}
	var nilp *logProgress
	nilp.build("x")
	nilp.seeds(1, 2, 0)
	nilp.end()
}
