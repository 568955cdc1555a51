package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/engine/cover"
	"github.com/seedfall/seedfall/engine/fsutil"
	"github.com/seedfall/seedfall/engine/results"
	"github.com/seedfall/seedfall/engine/session"
)

func init() {
	register(command{"cover", "[-c FILE] [-html OUT.html] [-json] [PROFILE_OR_RESULTS_DIR ...]", coverCmd})
	descriptions["cover"] = "Show which lines of your code the seeds of a sweep or an exploration with coverage on reached, and the blocks they never reached (the recovery paths no seed exercised): a summary by file and function, or with -html a page in the style of go tool cover. With no argument it reads the world's .seedfall/coverage.out; several profiles or results directories (the shards of a sweep) are merged."
}

// coverCmd prints the summary of coverage profiles, merged, and with
// -html writes the page. The sources are found in the modules of the
// world's programs.
func coverCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("cover", stderr)
	wa := worldFlags(fs)
	fs.Lookup("c").Usage = "the world `file` whose .seedfall/coverage.out is read when no profile is named, and in whose programs' modules the sources are (default: seedfall.json here, else in the nearest directory above, up to the repository root)"
	htmlOut := fs.String("html", "", "write a page of the source, reached lines green and never-reached red, to this `file`")
	asJSON := fs.Bool("json", false, "print the summary as one JSON object: each file's statements reached, and the blocks never reached by function")
	var paths []string
	for {
		if err := parseArgs(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		paths, args = append(paths, fs.Arg(0)), fs.Args()[1:]
	}
	if !wa.given {
		wa.findDefault(stderr)
	}
	w, werr := wa.load()
	if len(paths) == 0 {
		if werr != nil {
			return werr
		}
		path := session.CoveragePath(w)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no coverage of %s yet: %s does not exist; make it with seedfall run %s -seeds 1-100 -set coverage=true (or seedfall explore %s -strategy guided), or name a coverage profile or a results directory of run -out", *wa.cfg, session.DisplayPath(path), wa, wa)
		}
		paths = []string{path}
	}
	p, err := results.ReadProfiles(paths)
	if err != nil {
		return err
	}
	// The sources are in the modules of the world's programs; without a
	// world, in the module of the working directory.
	src, title := cover.ModuleSource("."), "coverage"
	if werr == nil {
		src, title = session.CoverageSource(w), engine.ConfigName(w)
	}
	r := cover.NewReport(p, src)
	if *asJSON {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else if err := r.WriteText(stdout); err != nil {
		return err
	}
	if *htmlOut == "" {
		return nil
	}
	var page bytes.Buffer
	if err := cover.WriteHTML(&page, p, src, title); err != nil {
		return err
	}
	if err := fsutil.WriteFile(*htmlOut, page.Bytes(), 0o644); err != nil {
		return fmt.Errorf("-html: %w", err)
	}
	note := stdout
	if *asJSON {
		note = stderr
	}
	fmt.Fprintf(note, "wrote %s\n", *htmlOut)
	return nil
}
