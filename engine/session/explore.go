package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/world"
)

// SaveExplored writes a failure's schedule where replay finds it: the first
// failure of seed N as seed-N.faults.json in the world's artifact directory
// (.seedfall/ for seedfall.json; what replay, shrink and cause read by
// default), the k-th as seed-N.k.faults.json. A shrunk schedule or another
// world's already there is kept, and the failure written as
// seed-N[.k].explore.faults.json instead (engine.SaveKeeping).
// A failure in another world w than the session's (a strategy may change it, as
// swarm does) has its world saved next to it, as seed-N[.k].world.json.
// It returns the schedule's path and the command that replays the failure.
func (s *Session) SaveExplored(res *engine.Result, w *world.World, k int) (string, string, error) {
	base := fmt.Sprintf("seed-%d", res.Seed)
	if k > 1 {
		base += fmt.Sprintf(".%d", k)
	}
	dir := engine.ArtifactDir(s.w)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	sch := *res.Schedule
	sch.Config = s.ConfigName()
	worldArgs := s.args
	own, err := s.w.Resolved(true)
	if err != nil {
		return "", "", err
	}
	theirs, err := w.Resolved(true)
	if err != nil {
		return "", "", err
	}
	// A world of its own is named after the schedule that needs it, so
	// that a schedule kept in place keeps its world too.
	var worldOf func(string) string
	if !bytes.Equal(own, theirs) {
		worldOf = func(p string) string { return strings.TrimSuffix(p, ".faults.json") + ".world.json" }
	}
	sv, err := engine.SaveKeeping(filepath.Join(dir, base+".faults.json"), "explore", &sch, "", worldOf)
	if err != nil {
		return "", "", err
	}
	s.NoteSaved(sv)
	if worldOf != nil {
		wpath := worldOf(sv.Path)
		if err := fsutil.WriteFile(wpath, theirs, 0o644); err != nil {
			return "", "", err
		}
		worldArgs = "-c " + ShellQuote(DisplayPath(wpath))
	}
	path := DisplayPath(sv.Path)
	return path, fmt.Sprintf("seedfall replay %s -seed %d -faults %s", worldArgs, res.Seed, ShellQuote(path)), nil
}
