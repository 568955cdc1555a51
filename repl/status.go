package repl

import (
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"
)

// Status is the progress line a terminal session shows on stderr while a
// statement takes long: every second, how long it has run and the latest
// message the Env reported (starlark.Options.Progress), such as
//
//	running… 12s (shrink seed 1: removing faults, 40 runs so far, 2 faults left)
//
// It is erased when the statement ends, and before anything the statement
// prints (write print() through Above), so that it never mixes with output.
type Status struct {
	w     io.Writer
	every time.Duration // how often the line is redrawn
	width int           // longest line, in runes

	mu      sync.Mutex
	msg     string
	shown   bool // the line is on screen
	running bool
	start   time.Time
	stop    chan struct{}
	done    chan struct{}
}

// NewStatus returns a Status that draws on w, a terminal.
func NewStatus(w io.Writer) *Status {
	return &Status{w: w, every: time.Second, width: 79}
}

// Set records the latest progress message; it is safe to call from any
// goroutine, and between statements it is dropped.
func (s *Status) Set(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running {
		s.msg = msg
	}
}

// Above returns a writer to w that erases the status line before each
// write; the next tick draws it again below what was written.
func (s *Status) Above(w io.Writer) io.Writer { return aboveWriter{s, w} }

type aboveWriter struct {
	s *Status
	w io.Writer
}

func (a aboveWriter) Write(p []byte) (int, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	a.s.eraseLocked()
	return a.w.Write(p)
}

// begin starts showing the line for a statement starting now.
func (s *Status) begin() {
	s.mu.Lock()
	s.running, s.msg, s.start = true, "", time.Now()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	stop, done := s.stop, s.done
	s.mu.Unlock()
	go func() {
		defer close(done)
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				s.draw()
			}
		}
	}()
}

// end stops the line and erases it.
func (s *Status) end() {
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eraseLocked()
	s.running, s.msg, s.stop, s.done = false, "", nil, nil
}

func (s *Status) draw() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return
	}
	line := statusLine(time.Since(s.start), s.msg)
	if utf8.RuneCountInString(line) > s.width {
		r := []rune(line)
		line = string(r[:s.width-1]) + "…"
	}
	fmt.Fprintf(s.w, "\r\033[K%s", line)
	s.shown = true
}

func (s *Status) eraseLocked() {
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}

// statusLine is the text of the line after elapsed, with the Env's latest
// message.
func statusLine(elapsed time.Duration, msg string) string {
	line := fmt.Sprintf("running… %s", elapsed.Round(time.Second))
	if msg != "" {
		line += " (" + msg + ")"
	}
	return line
}
