package session

import (
	"runtime/debug"
	"strings"
	"sync"
)

// BuildInfo is which seedfall this is.
type BuildInfo struct {
	Version  string // v0.3.0, or (devel) for a build from a checkout
	Revision string // the VCS commit, 12 digits, +dirty with local changes; "" when unknown
}

// Build reads the version from the binary's build information.
var Build = sync.OnceValue(func() BuildInfo {
	v := BuildInfo{Version: "(devel)"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	// go build stamps a checkout with local changes "+dirty" in the
	// version itself (Go 1.24 and later); say it once, on the commit.
	v.Version = strings.TrimSuffix(v.Version, "+dirty")
	if dirty && v.Revision != "" {
		v.Revision += "+dirty"
	} else if dirty {
		v.Version += "+dirty"
	}
	return v
})

// Version is the version in one word, for -json lines and the report:
// v0.3.0, or (devel)+1a2b3c4d5e6f for a build from a checkout. It is never
// part of a trace or its digest.
func Version() string {
	v := Build()
	if v.Revision == "" || !strings.HasPrefix(v.Version, "(devel)") {
		return v.Version
	}
	return v.Version + "+" + v.Revision
}
