package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
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
	info := buildVersion()
	fmt.Fprintf(stdout, "seedfall %s (", info.version)
	if info.revision != "" {
		fmt.Fprintf(stdout, "commit %s, ", info.revision)
	}
	fmt.Fprintf(stdout, "%s %s/%s)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}

type versionInfo struct {
	version  string // v0.3.0, or (devel) for a build from a checkout
	revision string // the VCS commit, 12 digits, +dirty with local changes; "" when unknown
}

// buildVersion reads the version from the binary's build information.
var buildVersion = sync.OnceValue(func() versionInfo {
	v := versionInfo{version: "(devel)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.revision = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	// go build stamps a checkout with local changes "+dirty" in the
	// version itself (Go 1.24 and later); say it once, on the commit.
	v.version = strings.TrimSuffix(v.version, "+dirty")
	if dirty && v.revision != "" {
		v.revision += "+dirty"
	} else if dirty {
		v.version += "+dirty"
	}
	return v
})

// seedfallVersion is the version in one word, for -json lines and the
// report: v0.3.0, or (devel)+1a2b3c4d5e6f for a build from a checkout.
// It is never part of a trace or its digest.
func seedfallVersion() string {
	v := buildVersion()
	if v.revision == "" || !strings.HasPrefix(v.version, "(devel)") {
		return v.version
	}
	return v.version + "+" + v.revision
}
