package main

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The skeleton seedfall init writes: a server, its workload and a world.
//
//go:embed skeleton
var skeleton embed.FS

func init() {
	register(command{"init", "[-dir DIR] [-module PATH]", initCmd})
}

// skeletonFiles are where init writes each file of the skeleton.
var skeletonFiles = []struct{ from, to string }{
	{"skeleton/server.go.txt", "server/main.go"},
	{"skeleton/client.go.txt", "client/main.go"},
	{"skeleton/seedfall.json.txt", "seedfall.json"},
}

// initCmd writes a minimal server, client and world that build and pass,
// a go.mod when the directory has none, and .seedfall/ in .gitignore. It
// overwrites nothing.
func initCmd(args []string, stdout, stderr io.Writer) error {
	fset := newFlags("init", stderr)
	dir := fset.String("dir", ".", "the directory to write into (made if missing)")
	module := fset.String("module", "", "the module path of a go.mod it writes when the directory has none (default: example.com/ and the directory's name)")
	if err := parseArgs(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q; give the directory as -dir", fset.Arg(0))
	}
	var existing []string
	for _, f := range skeletonFiles {
		if _, err := os.Stat(filepath.Join(*dir, f.to)); err == nil {
			existing = append(existing, f.to)
		}
	}
	if len(existing) > 0 {
		return fmt.Errorf("%s already in %s: init overwrites nothing; use another -dir", strings.Join(existing, ", "), *dir)
	}
	var wrote []string
	gomod := filepath.Join(*dir, "go.mod")
	if _, err := os.Stat(gomod); errors.Is(err, fs.ErrNotExist) {
		path := *module
		if path == "" {
			abs, err := filepath.Abs(*dir)
			if err != nil {
				return err
			}
			path = "example.com/" + modName(filepath.Base(abs))
		}
		if err := writeNew(gomod, fmt.Sprintf("module %s\n\ngo 1.26\n", path)); err != nil {
			return err
		}
		wrote = append(wrote, "go.mod")
	}
	for _, f := range skeletonFiles {
		b, err := skeleton.ReadFile(f.from)
		if err != nil {
			return err
		}
		if err := writeNew(filepath.Join(*dir, f.to), string(b)); err != nil {
			return err
		}
		wrote = append(wrote, f.to)
	}
	if added, err := ignoreResults(filepath.Join(*dir, ".gitignore")); err != nil {
		return err
	} else if added {
		wrote = append(wrote, ".gitignore")
	}
	fmt.Fprintf(stdout, "wrote %s in %s\n", strings.Join(wrote, ", "), *dir)
	run := "seedfall run -seeds 1-20"
	if *dir != "." {
		run = "cd " + shellQuote(*dir) + " && " + run
	}
	fmt.Fprintf(stdout, "next: %s (it passes: the server syncs each write before it answers);\n", run)
	fmt.Fprintf(stdout, "then set syncBeforeAck to false in server/main.go and run it again: seedfall finds the acknowledged writes a crash loses\n")
	return nil
}

// writeNew writes a file that must not exist yet, making its directory.
func writeNew(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ignoreResults adds .seedfall/ (where failing schedules and results go)
// to a .gitignore that lacks it, and says whether it did.
func ignoreResults(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if l := strings.TrimSpace(line); l == ".seedfall/" || l == ".seedfall" || l == "/.seedfall/" {
			return false, nil
		}
	}
	text := string(b)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return true, os.WriteFile(path, []byte(text+".seedfall/\n"), 0o644)
}

// modName is a directory's name made fit for a module path.
func modName(s string) string {
	s = regexp.MustCompile(`[^a-z0-9._-]+`).ReplaceAllString(strings.ToLower(s), "-")
	if s = strings.Trim(s, "-."); s == "" {
		return "myservice"
	}
	return s
}
