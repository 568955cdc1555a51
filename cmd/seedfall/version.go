package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"version", "", versionCmd})
}

// versionCmd prints which seedfall this is: the module version, the
// commit it was built from, and the Go that built it.
//
//	seedfall v0.3.0 (commit 1a2b3c4d5e6f, go1.26.0 linux/amd64)
//	seedfall (devel) (commit 1a2b3c4d5e6f+dirty, go1.26.0 linux/amd64)
func versionCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	info := session.Build()
	fmt.Fprintf(stdout, "seedfall %s (", info.Version)
	if info.Revision != "" {
		fmt.Fprintf(stdout, "commit %s, ", info.Revision)
	}
	fmt.Fprintf(stdout, "%s %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

// seedfallVersion is the version in one word (session.Version).
func seedfallVersion() string { return session.Version() }
