package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/seedfall/seedfall/engine/guest"
)

func init() {
	register(command{"sim-mod", "[-dir third_party/seedfall-sim]", simModCmd})
}

const simModulePath = "github.com/seedfall/seedfall/sim"

// simModCmd makes a module that imports sim build natively (go build, go
// vet, go test) as well as under seedfall: it writes the sim module this
// binary carries into a directory of the module, and points go.mod at it
// with a require and a replace directive (by `go mod edit`). seedfall then
// builds with that copy, as it does with any replace of sim; running the
// command again after upgrading seedfall refreshes the copy.
func simModCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sim-mod", stderr)
	dir := fs.String("dir", filepath.Join("third_party", "seedfall-sim"), "where to write the sim module, relative to the module root (the directory of go.mod)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	target := *dir
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	if target == root || strings.HasPrefix(root, target+string(filepath.Separator)) {
		return fmt.Errorf("-dir %s is the module itself; name a directory of its own, like third_party/seedfall-sim", *dir)
	}
	if err := writeSimCopy(target); err != nil {
		return err
	}
	// A replacement that is a directory starts with ./ or ../ (or is absolute).
	replacement := filepath.ToSlash(target)
	if rel, err := filepath.Rel(root, target); err == nil {
		replacement = filepath.ToSlash(rel)
		if !strings.HasPrefix(replacement, "../") {
			replacement = "./" + replacement
		}
	}
	edit := exec.Command("go", "mod", "edit",
		"-require="+simModulePath+"@v0.0.0",
		"-replace="+simModulePath+"="+replacement)
	edit.Dir = root
	var out bytes.Buffer
	edit.Stdout, edit.Stderr = &out, &out
	if err := edit.Run(); err != nil {
		return fmt.Errorf("go mod edit: %v\n%s", err, out.String())
	}
	fmt.Fprintf(stdout, "wrote the sim module to %s\n", displayPath(target))
	fmt.Fprintf(stdout, "go.mod: require %s v0.0.0, replace %s => %s\n", simModulePath, simModulePath, replacement)
	fmt.Fprintln(stdout, "go build, go vet and go test now build it natively, and seedfall builds with this copy; run seedfall sim-mod again after upgrading seedfall")
	return nil
}

// moduleRoot is the directory of the go.mod that governs the working
// directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod in %s or above: run seedfall sim-mod in your module (go mod init makes one)", dir)
		}
		d = parent
	}
}

// writeSimCopy writes the sim module's source (not its tests) to dir. A
// copy written before is replaced, files and all; any other directory that
// is not empty is left alone.
func writeSimCopy(dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil || !bytes.Contains(gomod, []byte("module "+simModulePath+"\n")) {
			return fmt.Errorf("%s is not empty and holds no copy of the sim module; name another with -dir", displayPath(dir))
		}
		for _, e := range ents {
			if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".go") || n == "go.mod") {
				if err := os.Remove(filepath.Join(dir, n)); err != nil {
					return err
				}
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return guest.WriteSim(dir)
}
