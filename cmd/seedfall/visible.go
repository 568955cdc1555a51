package main

import (
	"fmt"
	"io"
	"os"
)

// visibleControls is standard output when it is a terminal: guest output
// reaches it inside traces and logs, and a program that prints an escape
// sequence (clear the screen, set the title, move the cursor) must not act
// on the user's terminal. Control characters other than newline and tab
// are shown as Go escapes (\x1b), so the line still says what was printed.
// -json, saved schedules, logs kept in traces and the report are
// unaffected: they are not written through it.
type visibleControls struct{ f *os.File }

func (v visibleControls) Write(p []byte) (int, error) {
	clean := true
	for _, c := range p {
		if isControl(c) {
			clean = false
			break
		}
	}
	if clean {
		return v.f.Write(p)
	}
	out := make([]byte, 0, len(p)+16)
	for _, c := range p {
		if isControl(c) {
			out = fmt.Appendf(out, `\x%02x`, c)
		} else {
			out = append(out, c)
		}
	}
	if _, err := v.f.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

func isControl(c byte) bool { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f }

// terminalStdout is what commands write their output to: os.Stdout, with
// control characters made visible when it is a terminal. mcp speaks JSON-RPC
// on it and repl edits lines on it, so they get it as it is.
func terminalStdout(command string) io.Writer {
	if command == "mcp" || command == "repl" || !isTerminal(os.Stdout) {
		return os.Stdout
	}
	return visibleControls{os.Stdout}
}
