package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progressEvery is how often a stderr that is not a terminal hears about
// a step still under way.
var progressEvery = 5 * time.Second

// logProgress tells a stderr that is not a terminal (a CI log, a file,
// a pipe) what seedfall is doing while a step takes long: a cold build of
// the programs, a long sweep. On a terminal one line is redrawn in place
// instead (open, runCmd); here each report is a line of its own, printed
// every progressEvery while the step lasts, so a fast step prints none.
// It never writes to stdout: -json output stays clean.
//
//	seedfall: building server (./server) for wasip1... (10s)
//	seedfall: 120/500 seeds, 3 failed (15s)
type logProgress struct {
	w     io.Writer
	mu    sync.Mutex
	msg   string
	since time.Time // when the build of msg, or the sweep, started
	stop  chan struct{}
	done  sync.WaitGroup
}

// logsProgress reports whether stderr is a file or pipe, not a terminal:
// nothing else shows the user that a long step is under way. (seedfall
// mcp's calls keep their notes in a buffer, neither.)
func logsProgress(stderr io.Writer) bool {
	if v, ok := stderr.(visibleControls); ok {
		stderr = v.f
	}
	_, ok := stderr.(*os.File)
	return ok && !isTerminal(stderr)
}

// startLogProgress starts reporting to w; nil when w does not log
// progress. A nil *logProgress ignores every call.
func startLogProgress(w io.Writer) *logProgress {
	if !logsProgress(w) {
		return nil
	}
	p := &logProgress{w: w, since: time.Now(), stop: make(chan struct{})}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.mu.Lock()
				if p.msg != "" {
					fmt.Fprintf(p.w, "seedfall: %s (%s)\n", p.msg, time.Since(p.since).Round(time.Second))
				}
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// build is engine.Options.Progress: a program is being built.
func (p *logProgress) build(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg, p.since = msg+" for wasip1...", time.Now()
}

// seeds says how far a sweep of n seeds is: done of them, failed failing.
func (p *logProgress) seeds(done, n, failed int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msg = fmt.Sprintf("%d/%d seeds, %d failed", done, n, failed)
}

// end stops the reports; nothing is printed after it returns.
func (p *logProgress) end() {
	if p == nil {
		return
	}
	close(p.stop)
	p.done.Wait()
}
