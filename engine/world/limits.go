package world

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Limits on what a world file can make seedfall read or build (issue 12).
// Each is generous for real use; docs/limits.md lists them.
const (
	// MaxConfigBytes bounds a world file, each file it extends, and a
	// schedule file.
	MaxConfigBytes = 16 << 20
	// MaxDepth bounds how deeply arrays and objects (JSON) or arrays and
	// inline tables (TOML) nest, checked before the file is decoded.
	MaxDepth = 256
	// MaxPrograms bounds nodes, workloads and the finally check together.
	MaxPrograms = 256
	// MaxRate bounds every per-second fault rate.
	MaxRate = 1000
	// MaxPreemptDepth bounds preempt.depth, the pct strategy's d.
	MaxPreemptDepth = 1000
	// MinMemoryLimit and MaxMemoryLimit bound memory_limit, the linear
	// memory one program may grow to. The minimum is what a Go program
	// needs to start (hello world starts with 2.5 MiB and peaks at 3 MiB);
	// the maximum is all wasm32 can address.
	MinMemoryLimit = 4 << 20
	MaxMemoryLimit = 4 << 30
)

// ReadBounded reads the host file at path, which must be a regular file
// (or a symlink to one) of at most limit bytes. The size is checked before
// the file is read, and the read stops past the limit in case the file
// grows meanwhile. Its errors are clauses to follow "cannot read X: ",
// such as "it is a character device, not a regular file".
func ReadBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New(unwrapPathError(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, errors.New(unwrapPathError(err))
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is %s, not a regular file", fileKind(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("it has %d bytes, over the limit of %s", fi.Size(), SizeText(limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, errors.New(unwrapPathError(err))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("it grew past the limit of %s while it was read", SizeText(limit))
	}
	return data, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

// SizeText writes a limit in the unit it was chosen in.
func SizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// checkDepth refuses a file whose arrays and objects nest more than
// MaxDepth deep, before any decoder sees it: decoders spend memory and
// stack per level. It skips strings (and, in TOML, comments), so brackets
// inside them do not count; a file it misreads is left to the decoder.
func (s *source) checkDepth() error {
	depth := 0
	d := s.data
	for i := 0; i < len(d); i++ {
		switch c := d[i]; c {
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return &Error{File: s.file, Line: s.line(i), Msg: fmt.Sprintf("arrays and objects nest more than %d deep; no world needs that many levels", MaxDepth)}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '#':
			if s.toml {
				for i < len(d) && d[i] != '\n' {
					i++
				}
			}
		case '"', '\'':
			if c == '\'' && !s.toml {
				continue
			}
			i = skipString(d, i, s.toml)
		}
	}
	return nil
}

// skipString returns the offset of the last byte of the string starting
// at d[i] (a quote), or len(d) when it never ends. TOML's literal strings,
// in single quotes or three of them, have no escapes; basic strings, in
// double quotes or three of them, do.
func skipString(d []byte, i int, toml bool) int {
	q := d[i]
	if toml && i+2 < len(d) && d[i+1] == q && d[i+2] == q {
		for j := i + 3; j+2 < len(d); j++ {
			if q == '"' && d[j] == '\\' {
				j++
				continue
			}
			if d[j] == q && d[j+1] == q && d[j+2] == q {
				return j + 2
			}
		}
		return len(d)
	}
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j
		case '\n':
			if toml {
				return j // a single-line string cannot span lines
			}
		}
	}
	return len(d)
}
