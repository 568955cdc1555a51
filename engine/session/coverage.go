package session

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/world"
)

// Coverage of the user's code, for people (issue 28): a sweep or an
// exploration of a world with "coverage" on keeps the blocks its runs
// reached as a Go coverprofile, coverage.out: in the results directory
// with -out, else in the world's artifact directory, where seedfall cover
// reads it by default.

// CoveragePath is where a world's coverage.out is kept without -out:
// .seedfall/coverage.out next to seedfall.json, .seedfall/NAME/ for
// another world file.
func CoveragePath(w *world.World) string {
	return filepath.Join(engine.ArtifactDir(w), results.ProfileFile)
}

// CoverageSource finds the source files of w's programs: in the modules
// that hold their packages.
func CoverageSource(w *world.World) cover.Source {
	var dirs []string
	for _, p := range w.Programs() {
		for _, d := range []string{p.Pkg, p.UpgradeTo} {
			if d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	return cover.ModuleSource(dirs...)
}

// KeepCoverage writes the coverage of an exploration's runs to the
// world's coverage.out and says so on stderr; without coverage (c nil)
// it does nothing.
func (s *Session) KeepCoverage(stderr io.Writer, c *cover.Run) error {
	if c == nil {
		return nil
	}
	p := c.Profile()
	path := CoveragePath(s.w)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := fsutil.WriteFile(path, p.Bytes(), 0o644); err != nil {
		return err
	}
	NoteCoverage(stderr, p, path, s.CoverCommand())
	return nil
}

// CoverCommand is the command that shows the world's coverage.out.
func (s *Session) CoverCommand() string {
	return "seedfall cover -c " + ShellQuote(s.cfg)
}

// NoteCoverage is the line that says how much of the user's code ran,
// where its profile is, and the command that shows it.
func NoteCoverage(stderr io.Writer, p *cover.Profile, path, show string) {
	hit, all := p.Stmts()
	fmt.Fprintf(stderr, "coverage: %d of %d statements (%.1f%%) in %s; %s shows them\n", hit, all, cover.Percent(hit, all), DisplayPath(path), show)
}
